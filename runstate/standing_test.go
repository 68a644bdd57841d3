package runstate

import (
	"errors"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
)

// A run's end, from what the store says of it, to the status every screen
// shows and the process's exit code (README: the status table and Exit
// codes).
func TestARunsEndIsOneStatusAndOneExitCode(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stored    Stored
		outcome   Outcome
		canceled  bool
		status    RunStatus
		resumable bool
		exit      int
	}{
		{"a run whose work passed is done and exits 0", Stored{Status: graph.StatusDone}, OutcomeDone, false, RunDone, false, 0},
		{"a run stopped at a task limit is stopped, not resumable, and exits 3", Stored{Status: graph.StatusDone}, OutcomeStopped, false, RunStopped, false, 3},
		{"a run that ended without its work done is failed and exits 1", Stored{Status: graph.StatusDone}, OutcomeFailed, false, RunFailed, false, 1},
		{"a halt is stopped, resumable, and exits 3", Stored{Status: graph.StatusHalted}, "", false, RunStopped, true, 3},
		{"a run waiting for approval is paused and exits 3", Stored{Status: graph.StatusPaused, Reason: "approve milestone m1"}, "", false, RunPaused, true, 3},
		{"Ctrl-C is interrupted and exits 4", Stored{Status: graph.StatusInterrupted}, "", false, RunInterrupted, true, 4},
		{"a fault is failed, resumable, and exits 1", Stored{Status: graph.StatusFailed, Error: "ollama down"}, "", false, RunFailed, true, 1},
		{"a signal before the run stored its own status exits 4", Stored{Status: graph.StatusFailed, Error: "context canceled"}, "", true, RunFailed, true, 4},
		{"a signal does not change a run that ended done", Stored{Status: graph.StatusDone}, OutcomeDone, true, RunDone, false, 0},
		{"a run stored as running that nobody holds crashed", Stored{Status: graph.StatusRunning}, "", false, RunCrashed, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := StandingOf(tc.stored, &State{RunID: "r1", Branch: "lemmings/r1", Outcome: tc.outcome})
			if st.Status != tc.status || st.Resumable != tc.resumable {
				t.Errorf("status %s (resumable %v), want %s (resumable %v)", st.Status, st.Resumable, tc.status, tc.resumable)
			}
			if got := ExitCode(st, tc.canceled); got != tc.exit {
				t.Errorf("exit code %d, want %d", got, tc.exit)
			}
		})
	}
}

func TestAStopsKindNotItsWordingSaysStoppedOrFailed(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop Stop
		want Outcome
	}{
		{"a limit the user set stops the run", LimitStop(KeyMaxTasks, "reached the limit of 3 tasks (limits.max_tasks)"), OutcomeStopped},
		{"a limit whose text names no key still stops it", LimitStop(KeyCLIBudget, "the coding CLI spent its money"), OutcomeStopped},
		{"a failure that quotes a config key still fails it", FailureStop("the planner misread limits.max_tasks"), OutcomeFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s State
			s.SetStop(tc.stop)
			if got := OutcomeOfStop(s.Stop()); got != tc.want {
				t.Errorf("outcome %q, want %q", got, tc.want)
			}
		})
	}
}

// How the Report node settles a run that reached its end: done only with
// evidence, and the proof looked for only when every milestone says done.
func TestARunThatReachedItsEndIsDoneOnlyWithEvidence(t *testing.T) {
	done := []Milestone{{ID: "m1", Status: MilestoneDone}, {ID: "m2", Status: MilestoneDone}}
	found := func() (string, string, error) { return "", "gates pass at abc123", nil }
	for _, tc := range []struct {
		name      string
		state     State
		proof     func() (string, string, error)
		outcome   Outcome
		stop      string
		overruled string
	}{
		{"a limit that stopped the run stops it", State{StopReason: "reached the limit of 3 tasks (limits.max_tasks)", StopKind: StopLimit, StopKey: KeyMaxTasks, Milestones: done},
			nil, OutcomeStopped, "reached the limit of 3 tasks (limits.max_tasks)", ""},
		{"a failure that stopped the run fails it", State{StopReason: "3 tasks failed in a row", StopKind: StopFailure, Milestones: done},
			nil, OutcomeFailed, "3 tasks failed in a row", ""},
		{"a plan with no milestone fails", State{}, nil, OutcomeFailed, "the plan has no milestone", ""},
		{"a milestone not done fails the run", State{Milestones: []Milestone{done[0], {ID: "m2", Status: MilestoneActive}}},
			nil, OutcomeFailed, "milestone(s) m2 not done", ""},
		{"milestones said done without evidence are overruled", State{Milestones: done},
			func() (string, string, error) { return "no task of it passed", "", nil }, OutcomeFailed, "no task of it passed", "no task of it passed"},
		{"milestones done with evidence are done", State{Milestones: done}, found, OutcomeDone, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.state
			proof := tc.proof
			if proof == nil {
				proof = func() (string, string, error) { t.Fatal("the proof was looked for"); return "", "", nil }
			}
			overruled, err := Settle(&s, proof)
			if err != nil {
				t.Fatal(err)
			}
			if s.Outcome != tc.outcome || s.StopReason != tc.stop || overruled != tc.overruled {
				t.Errorf("outcome %q, stop %q, overruled %q; want %q, %q, %q", s.Outcome, s.StopReason, overruled, tc.outcome, tc.stop, tc.overruled)
			}
			if (s.Evidence != "") != (tc.outcome == OutcomeDone) {
				t.Errorf("evidence %q with outcome %q", s.Evidence, s.Outcome)
			}
		})
	}
	s := State{Milestones: done}
	if _, err := Settle(&s, func() (string, string, error) { return "", "", errors.New("git failed") }); err == nil {
		t.Error("an error looking for the proof was lost")
	}
}
