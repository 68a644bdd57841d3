package run

import (
	"testing"

	"github.com/lemmings-dev/lemmings/config"
)

// TestSettingsFromSupervisorKeys: the supervisor intervals and urgency
// weights of the configuration reach the workflow's settings.
func TestSettingsFromSupervisorKeys(t *testing.T) {
	c := config.Default()
	c.Supervisors.CodeStyle.Interval = 2
	c.Supervisors.Internaliser.Interval = 0
	c.Supervisors.UrgencyWeights.QAFailure = 0.45
	sup := SettingsFrom(c).Supervisors
	if sup.CodeStyle.Interval != 2 || sup.Internaliser.Interval != 0 || sup.WeightQAFailure != 0.45 {
		t.Fatalf("settings = code_style every %d, internaliser every %d, QA failure weight %v; want 2, 0, 0.45",
			sup.CodeStyle.Interval, sup.Internaliser.Interval, sup.WeightQAFailure)
	}
	c.Offline = true
	if SettingsFrom(c).Supervisors.Enabled {
		t.Fatal("supervisors enabled offline")
	}
}
