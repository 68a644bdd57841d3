package nodes

import (
	"context"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/workspace"
)

// The eval's hamming exercise: the planner answered milestone_done for a
// milestone whose task was never started. The claim is overruled, recorded,
// and the planned task starts instead.
func TestAMilestoneDoneWithPlannedTasksLeftIsOverruledAndTheWorkGoesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, _ := plannerDeps(t, map[string]any{"decision": "milestone_done", "reasoning": "The hamming function is done.", "carry_forward": []any{}, "directives": []any{}})
	s := WorkflowState{RunID: "r1", Phase: PhaseExecute, ReviewInterval: 5,
		Milestones:   []Milestone{{ID: "m1", Goal: "hamming distance", Status: MilestoneActive}},
		CarryForward: []PlannedTask{{Title: "Implement Distance", AcceptanceCriteria: []string{"go test passes"}, TargetFiles: []string{"hamming.go"}}}}
	out, err := d.TaskPlanner(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if out.PlannerDecision != DecisionImplement || out.CurrentTask == nil || out.CurrentTask.Title != "Implement Distance" || len(out.CarryForward) != 0 {
		t.Fatalf("decision %s, task %+v, plan %+v", out.PlannerDecision, out.CurrentTask, out.CarryForward)
	}
	if out.Milestones[0].Status != MilestoneActive {
		t.Errorf("the milestone was closed: %s", out.Milestones[0].Status)
	}
	if len(out.Overruled) != 1 || !strings.Contains(out.Overruled[0], "milestone m1 done with 1 planned task not done") {
		t.Errorf("the overruled claim is not recorded: %q", out.Overruled)
	}
}

// With nothing planned and no task of the milestone passed, the claim
// cannot be turned into work: the run stops, failed, saying why.
func TestAMilestoneDoneWithNoTaskPassedStopsTheRunWithTheReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, _ := plannerDeps(t, map[string]any{"decision": "milestone_done", "reasoning": "Done.", "carry_forward": []any{}, "directives": []any{}})
	s := WorkflowState{RunID: "r1", Phase: PhaseExecute, ReviewInterval: 5,
		Milestones: []Milestone{{ID: "m1", Goal: "hamming distance", Status: MilestoneActive}},
		Failures:   []Failure{{TaskID: "t1", Milestone: "m1", Title: "Implement Distance", Reason: "blocked"}}}
	out, err := d.TaskPlanner(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if out.PlannerDecision != DecisionStop || !strings.Contains(out.StopReason, "no task of it passed (1 failed)") {
		t.Fatalf("decision %s, stop %q", out.PlannerDecision, out.StopReason)
	}
	rep, err := d.Report(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if st := StandingOf(Stored{Status: graph.StatusDone}, &rep); st.Status != RunFailed || !strings.Contains(st.Reason, "no task of it passed") {
		t.Errorf("the run ends %+v", st)
	}
}

// A milestone with a passed task and nothing left planned may end.
func TestAMilestoneDoneWithItsWorkDoneStands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, _ := plannerDeps(t, map[string]any{"decision": "milestone_done", "reasoning": "Done.", "carry_forward": []any{}, "directives": []any{}})
	s := WorkflowState{RunID: "r1", Phase: PhaseExecute, ReviewInterval: 5,
		Milestones: []Milestone{{ID: "m1", Goal: "g", Status: MilestoneActive}},
		DoneList:   []DoneEntry{{TaskID: "t1", Milestone: "m1", QA: "passed", Commit: "abc"}}}
	out, err := d.TaskPlanner(ctx, s)
	if err != nil || out.PlannerDecision != DecisionMilestoneDone || len(out.Overruled) != 0 {
		t.Fatalf("decision %s, err %v, overruled %q", out.PlannerDecision, err, out.Overruled)
	}
}

// The end of a run: done only with a committed task and the gates passing
// on the final tree; every milestone declared done is not enough.
func TestARunEndsDoneOnlyWithEvidence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	allDone := []Milestone{{ID: "m1", Goal: "g", Status: MilestoneDone}}
	cases := []struct {
		name   string
		gates  []workspace.Gate
		commit bool // a task's work is committed on the branch
		failed bool // a task failed
		extra  func(t *testing.T, wt *workspace.Worktree)
		want   RunStatus
		says   string
	}{
		{name: "no task at all (planner and assessor said done)", gates: []workspace.Gate{{Name: "test", Command: "true"}},
			want: RunFailed, says: "no task was done"},
		{name: "no task done, one failed: the failure is the reason given", gates: []workspace.Gate{{Name: "test", Command: "true"}}, failed: true,
			want: RunFailed, says: "; t1 failed: 1 quick attempts did not pass"},
		{name: "a committed task, gates pass on the final tree", gates: []workspace.Gate{{Name: "test", Command: "true"}}, commit: true,
			want: RunDone, says: "the gates (test) passed on the final tree"},
		{name: "a committed task, then a change that breaks the gate", gates: []workspace.Gate{{Name: "test", Command: "test ! -e broken"}}, commit: true,
			extra: func(t *testing.T, wt *workspace.Worktree) {
				if err := wt.FS().WriteFile("broken", []byte("x\n")); err != nil {
					t.Fatal(err)
				}
				if _, err := wt.Commit(ctx, "knowledge: a later commit", nil); err != nil {
					t.Fatal(err)
				}
			}, want: RunFailed, says: "the gate test fails on the final tree"},
		{name: "a committed task and no gate configured", commit: true, want: RunDone, says: "no gate is configured or detected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, wt := plannerDeps(t, map[string]any{})
			d.Gates = tc.gates
			s := WorkflowState{RunID: "r1", Phase: PhaseExecute, Milestones: allDone, Branch: wt.Branch()}
			if tc.commit {
				if err := wt.FS().WriteFile("hamming.go", []byte("package hamming\n")); err != nil {
					t.Fatal(err)
				}
				sha, err := wt.Commit(ctx, "t1: Implement Distance", nil)
				if err != nil {
					t.Fatal(err)
				}
				s.DoneList = []DoneEntry{{TaskID: "t1", Milestone: "m1", QA: "passed", Commit: sha}}
				s.TasksCompleted = 1
			}
			if tc.failed {
				s.Failures = []Failure{{TaskID: "t1", Reason: "1 quick attempts did not pass"}}
			}
			if tc.extra != nil {
				tc.extra(t, wt)
			}
			out, err := d.Report(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			st := StandingOf(Stored{Status: graph.StatusDone}, &out)
			if st.Status != tc.want || !strings.Contains(st.Reason, tc.says) {
				t.Fatalf("standing %+v, want %s saying %q", st, tc.want, tc.says)
			}
			if tc.want != RunDone && len(out.Overruled) != 1 {
				t.Errorf("the claim of done is not recorded as overruled: %q", out.Overruled)
			}
		})
	}
}

// Each way a run can stand reads as one status with a reason and a next
// step that works.
func TestStandingOfEveryEnding(t *testing.T) {
	t.Parallel()
	failedState := WorkflowState{RunID: "r1", Branch: "lemmings/r1", Outcome: OutcomeFailed, StopReason: "3 tasks failed in a row"}
	cases := []struct {
		name      string
		stored    Stored
		state     WorkflowState
		want      RunStatus
		reason    string
		next      string
		resumable bool
	}{
		{"running", Stored{Status: graph.StatusRunning, Active: true}, WorkflowState{RunID: "r1"}, RunRunning, "", "lemmings halt r1", false},
		{"crashed", Stored{Status: graph.StatusRunning}, WorkflowState{RunID: "r1"}, RunCrashed, "without recording how", "lemmings resume r1 continues", true},
		{"paused", Stored{Status: graph.StatusPaused, Reason: "approve task t1"}, WorkflowState{RunID: "r1"}, RunPaused, "waiting for a decision: approve task t1", "--approve", true},
		{"halted", Stored{Status: graph.StatusHalted}, WorkflowState{RunID: "r1"}, RunStopped, "halt requested", "lemmings resume r1 continues", true},
		{"wall time", Stored{Status: graph.StatusHalted, Reason: "reached the wall-time limit of 4h (limits.max_wall_time)"}, WorkflowState{RunID: "r1"},
			RunStopped, "wall-time limit", "with a new limits.max_wall_time", true},
		{"interrupted", Stored{Status: graph.StatusInterrupted, Error: "context canceled"}, WorkflowState{RunID: "r1"}, RunInterrupted, "Ctrl-C", "lemmings resume r1", true},
		{"a fault", Stored{Status: graph.StatusFailed, Error: "qa: 400 bad request"}, WorkflowState{RunID: "r1"}, RunFailed, "400 bad request", "fix the cause, then lemmings resume r1", true},
		{"ended failed", Stored{Status: graph.StatusDone}, failedState, RunFailed, "3 tasks failed in a row", "start a new run", false},
		{"ended at a limit", Stored{Status: graph.StatusDone}, WorkflowState{RunID: "r1", Branch: "lemmings/r1", Outcome: OutcomeStopped, StopReason: "reached the limit of 5 tasks (limits.max_tasks)"},
			RunStopped, "limits.max_tasks", "cannot be resumed", false},
		{"done", Stored{Status: graph.StatusDone}, WorkflowState{RunID: "r1", Branch: "lemmings/r1", Outcome: OutcomeDone, Evidence: "the gates passed"}, RunDone, "the gates passed", "git merge lemmings/r1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := StandingOf(tc.stored, &tc.state)
			if st.Status != tc.want || !strings.Contains(st.Reason, tc.reason) || !strings.Contains(st.Next, tc.next) || st.Resumable != tc.resumable {
				t.Errorf("%+v, want %s / %q / %q / resumable %v", st, tc.want, tc.reason, tc.next, tc.resumable)
			}
		})
	}
}

// issue 23: the planner may not declare a milestone done while its task is
// unfinished. The task is not thrown away for the claim: it gets its next
// attempt, and the claim is recorded as overruled.
func TestAMilestoneDoneWithATaskUnfinishedGivesTheTaskItsNextAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, wt := plannerDeps(t, map[string]any{"decision": "milestone_done", "reasoning": "Good enough.", "carry_forward": []any{}, "directives": []any{}})
	start, _ := wt.Head(ctx)
	s := WorkflowState{RunID: "r1", Phase: PhaseExecute, ReviewInterval: 5,
		Milestones:  []Milestone{{ID: "m1", Goal: "g", Status: MilestoneActive}},
		CurrentTask: &Task{ID: "t1", Milestone: "m1", Title: "Implement Distance", StartCommit: start, AttemptBase: start, Attempt: 1, Retries: 1, Feedback: "go test fails"}}
	out, err := d.TaskPlanner(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if out.PlannerDecision != DecisionImplement || out.CurrentTask == nil || out.CurrentTask.Attempt != 2 || out.CurrentTask.Feedback != "go test fails" {
		t.Fatalf("decision %s, task %+v", out.PlannerDecision, out.CurrentTask)
	}
	if len(out.Overruled) != 1 || !strings.Contains(out.Overruled[0], "task t1 unfinished") || out.Milestones[0].Status != MilestoneActive {
		t.Errorf("overruled %q, milestone %s", out.Overruled, out.Milestones[0].Status)
	}
}
