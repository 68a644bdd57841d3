package nodes

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPlanExampleIsAValidPlan(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(PlanExample), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPlan(path)
	if err != nil {
		t.Fatalf("the plan example does not load: %v", err)
	}
	if len(p.Milestones) != 2 || len(p.Milestones[0].Tasks) != 1 || len(p.Milestones[0].Tasks[0].AcceptanceCriteria) != 2 ||
		p.Milestones[0].Tasks[0].Instructions == "" || len(p.Milestones[0].Tasks[0].TargetFiles) != 2 {
		t.Errorf("the example lost fields on the way: %+v", p)
	}
}
