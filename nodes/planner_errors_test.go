package nodes

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/runstate"
)

// A git failure while the planner takes the next task after an unusable
// answer fails the step (so the task stays on the stored plan and the step
// runs again on resume); it used to be swallowed, losing the task and ending
// the run quietly.
func TestPlannerFailureStartingTheNextTaskIsReturned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, wt := plannerDeps(t, "not a plan")
	// Break the worktree's git directory: every git command fails.
	gitDir, err := exec.Command("git", "-C", wt.Dir(), "rev-parse", "--absolute-git-dir").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(strings.TrimSpace(string(gitDir)), "HEAD"), []byte("not a ref\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, NextTaskID: 1,
		Milestones:   []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}},
		CarryForward: []runstate.PlannedTask{{Title: "Add parser", AcceptanceCriteria: []string{"parses"}}},
	}
	out, err := d.TaskPlanner(ctx, s)
	if err == nil || !strings.Contains(err.Error(), "start task") {
		t.Fatalf("the git failure was swallowed: err %v, decision %q, stop %q", err, out.PlannerDecision, out.StopReason)
	}
	if len(s.CarryForward) != 1 {
		t.Errorf("the input state lost its planned task")
	}
}
