package nodes

import (
	"context"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// The eval's hamming exercise: the planner answered milestone_done for a
// milestone whose task was never started. The claim is overruled, recorded,
// and the planned task starts instead.
func TestAMilestoneDoneWithPlannedTasksLeftIsOverruledAndTheWorkGoesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, _ := plannerDeps(t, map[string]any{"decision": "milestone_done", "reasoning": "The hamming function is done.", "carry_forward": []any{}, "directives": []any{}})
	s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, ReviewInterval: 5,
		Milestones:   []runstate.Milestone{{ID: "m1", Goal: "hamming distance", Status: runstate.MilestoneActive}},
		CarryForward: []runstate.PlannedTask{{Title: "Implement Distance", AcceptanceCriteria: []string{"go test passes"}, TargetFiles: []string{"hamming.go"}}}}
	out, err := d.TaskPlanner(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if out.PlannerDecision != DecisionImplement || out.CurrentTask == nil || out.CurrentTask.Title != "Implement Distance" || len(out.CarryForward) != 0 {
		t.Fatalf("decision %s, task %+v, plan %+v", out.PlannerDecision, out.CurrentTask, out.CarryForward)
	}
	if out.Milestones[0].Status != runstate.MilestoneActive {
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
	s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, ReviewInterval: 5,
		Milestones: []runstate.Milestone{{ID: "m1", Goal: "hamming distance", Status: runstate.MilestoneActive}},
		Failures:   []runstate.Failure{{TaskID: "t1", Milestone: "m1", Title: "Implement Distance", Reason: "blocked"}}}
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
	if st := runstate.StandingOf(runstate.Stored{Status: graph.StatusDone}, &rep); st.Status != runstate.RunFailed || !strings.Contains(st.Reason, "no task of it passed") {
		t.Errorf("the run ends %+v", st)
	}
}

// A milestone with a passed task and nothing left planned may end.
func TestAMilestoneDoneWithItsWorkDoneStands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, _ := plannerDeps(t, map[string]any{"decision": "milestone_done", "reasoning": "Done.", "carry_forward": []any{}, "directives": []any{}})
	s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, ReviewInterval: 5,
		Milestones: []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}},
		DoneList:   []runstate.DoneEntry{{TaskID: "t1", Milestone: "m1", QA: "passed", Commit: "abc"}}}
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
	allDone := []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneDone}}
	cases := []struct {
		name   string
		gates  []workspace.Gate
		commit bool // a task's work is committed on the branch
		failed bool // a task failed
		extra  func(t *testing.T, wt *workspace.Worktree)
		want   runstate.RunStatus
		says   string
	}{
		{name: "no task at all (planner and assessor said done)", gates: []workspace.Gate{{Name: "test", Command: "true"}},
			want: runstate.RunFailed, says: "no task was done"},
		{name: "no task done, one failed: the failure is the reason given", gates: []workspace.Gate{{Name: "test", Command: "true"}}, failed: true,
			want: runstate.RunFailed, says: "; t1 failed: 1 quick attempts did not pass"},
		{name: "a committed task, gates pass on the final tree", gates: []workspace.Gate{{Name: "test", Command: "true"}}, commit: true,
			want: runstate.RunDone, says: "the gates (test) passed at the branch's last commit"},
		{name: "a committed task, then a change that breaks the gate", gates: []workspace.Gate{{Name: "test", Command: "test ! -e broken"}}, commit: true,
			extra: func(t *testing.T, wt *workspace.Worktree) {
				if err := wt.FS().WriteFile("broken", []byte("x\n")); err != nil {
					t.Fatal(err)
				}
				if _, err := wt.Commit(ctx, "knowledge: a later commit", nil); err != nil {
					t.Fatal(err)
				}
			}, want: runstate.RunFailed, says: "the gate test fails at the branch's last commit"},
		{name: "a committed task and no gate configured", commit: true, want: runstate.RunDone, says: "no gate is configured or detected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, wt := plannerDeps(t, map[string]any{})
			d.Gates = tc.gates
			s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, Milestones: allDone, Branch: wt.Branch()}
			if tc.commit {
				if err := wt.FS().WriteFile("hamming.go", []byte("package hamming\n")); err != nil {
					t.Fatal(err)
				}
				sha, err := wt.Commit(ctx, "t1: Implement Distance", nil)
				if err != nil {
					t.Fatal(err)
				}
				s.DoneList = []runstate.DoneEntry{{TaskID: "t1", Milestone: "m1", QA: "passed", Commit: sha}}
				s.TasksCompleted = 1
			}
			if tc.failed {
				s.Failures = []runstate.Failure{{TaskID: "t1", Reason: "1 quick attempts did not pass"}}
			}
			if tc.extra != nil {
				tc.extra(t, wt)
			}
			out, err := d.Report(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			st := runstate.StandingOf(runstate.Stored{Status: graph.StatusDone}, &out)
			if st.Status != tc.want || !strings.Contains(st.Reason, tc.says) {
				t.Fatalf("standing %+v, want %s saying %q", st, tc.want, tc.says)
			}
			if tc.want != runstate.RunDone && len(out.Overruled) != 1 {
				t.Errorf("the claim of done is not recorded as overruled: %q", out.Overruled)
			}
		})
	}
}

// Each way a run can stand reads as one status with a reason and a next
// step that works.
func TestStandingOfEveryEnding(t *testing.T) {
	t.Parallel()
	failedState := runstate.State{RunID: "r1", Branch: "lemmings/r1", Outcome: runstate.OutcomeFailed, StopReason: "3 tasks failed in a row"}
	cases := []struct {
		name      string
		stored    runstate.Stored
		state     runstate.State
		want      runstate.RunStatus
		reason    string
		next      string
		resumable bool
	}{
		{"running", runstate.Stored{Status: graph.StatusRunning, Active: true}, runstate.State{RunID: "r1"}, runstate.RunRunning, "", "lemmings halt r1", false},
		{"crashed", runstate.Stored{Status: graph.StatusRunning}, runstate.State{RunID: "r1"}, runstate.RunCrashed, "without recording how", "lemmings resume r1 continues", true},
		{"paused", runstate.Stored{Status: graph.StatusPaused, Reason: "approve task t1"}, runstate.State{RunID: "r1"}, runstate.RunPaused, "waiting for a decision: approve task t1", "--approve", true},
		{"halted", runstate.Stored{Status: graph.StatusHalted}, runstate.State{RunID: "r1"}, runstate.RunStopped, "halt requested", "lemmings resume r1 continues", true},
		{"wall time", runstate.Stored{Status: graph.StatusHalted, Reason: "reached the wall-time limit of 4h (limits.max_wall_time)"}, runstate.State{RunID: "r1"},
			runstate.RunStopped, "wall-time limit", "with a new limits.max_wall_time", true},
		{"interrupted", runstate.Stored{Status: graph.StatusInterrupted, Error: "context canceled"}, runstate.State{RunID: "r1"}, runstate.RunInterrupted, "Ctrl-C", "lemmings resume r1", true},
		{"a fault", runstate.Stored{Status: graph.StatusFailed, Error: "qa: 400 bad request"}, runstate.State{RunID: "r1"}, runstate.RunFailed, "400 bad request", "fix the cause, then lemmings resume r1", true},
		{"ended failed", runstate.Stored{Status: graph.StatusDone}, failedState, runstate.RunFailed, "3 tasks failed in a row", "start a new run", false},
		{"ended at a limit", runstate.Stored{Status: graph.StatusDone}, runstate.State{RunID: "r1", Branch: "lemmings/r1", Outcome: runstate.OutcomeStopped, StopReason: "reached the limit of 5 tasks (limits.max_tasks)"},
			runstate.RunStopped, "limits.max_tasks", "cannot be resumed", false},
		{"done", runstate.Stored{Status: graph.StatusDone}, runstate.State{RunID: "r1", Branch: "lemmings/r1", Outcome: runstate.OutcomeDone, Evidence: "the gates passed"}, runstate.RunDone, "the gates passed", "git merge lemmings/r1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := runstate.StandingOf(tc.stored, &tc.state)
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
	s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, ReviewInterval: 5,
		Milestones:  []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}},
		CurrentTask: &runstate.Task{ID: "t1", Milestone: "m1", Title: "Implement Distance", StartCommit: start, AttemptBase: start, Attempt: 1, Retries: 1, Feedback: "go test fails"}}
	out, err := d.TaskPlanner(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if out.PlannerDecision != DecisionImplement || out.CurrentTask == nil || out.CurrentTask.Attempt != 2 || out.CurrentTask.Feedback != "go test fails" {
		t.Fatalf("decision %s, task %+v", out.PlannerDecision, out.CurrentTask)
	}
	if len(out.Overruled) != 1 || !strings.Contains(out.Overruled[0], "task t1 unfinished") || out.Milestones[0].Status != runstate.MilestoneActive {
		t.Errorf("overruled %q, milestone %s", out.Overruled, out.Milestones[0].Status)
	}
}
