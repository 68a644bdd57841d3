package runstate

import (
	"encoding/json"
	"testing"
)

func TestAStopSurvivesTheCheckpoint(t *testing.T) {
	var s State
	s.SetStop(LimitStop(KeyMaxWallTime, "reached the wall-time limit of 1h (limits.max_wall_time)"))
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Stop(); got != s.Stop() {
		t.Errorf("after the checkpoint %+v, before %+v", got, s.Stop())
	}
}

// A checkpoint of an earlier lemmings has the reason alone: its wording named
// the limit's key.
func TestAStopRecordedBeforeKindsIsReadFromItsReason(t *testing.T) {
	for reason, want := range map[string]Stop{
		"reached the limit of 3 tasks (limits.max_tasks)":                              {Kind: StopLimit, Key: KeyMaxTasks},
		"the coding CLI has spent $1 of its budget of $1 (implementor.cli.budget_usd)": {Kind: StopLimit, Key: KeyCLIBudget},
		"3 tasks failed in a row (limits.max_consecutive_failures)":                    {Kind: StopFailure},
	} {
		s := State{StopReason: reason}
		want.Reason = reason
		if got := s.Stop(); got != want {
			t.Errorf("%q: %+v, want %+v", reason, got, want)
		}
	}
	if got := (&State{}).Stop(); !got.IsZero() {
		t.Errorf("a run going on has a stop: %+v", got)
	}
}
