package runstate

// A run's end, decided in one place: how the Report node settles a run that
// reached its end (Settle: its outcome, done only with evidence), how any
// run stands from what the store says of it (StandingOf: the status every
// screen shows, the reason, the next step), and the exit code of the
// process that ran it (ExitCode, README: Exit codes).

import (
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// Outcome is how the Report node settled a run that reached its end
// (State.Outcome); StandingOf turns it into the run's status.
type Outcome string

// The outcomes.
const (
	OutcomeDone    Outcome = "done"
	OutcomeFailed  Outcome = "failed"
	OutcomeStopped Outcome = "stopped" // a limit (limits.max_tasks, a spend budget) ended it before its work was done
)

// OutcomeOfStop is the outcome of a run that stopped with st: stopped at a
// limit, failed otherwise.
func OutcomeOfStop(st Stop) Outcome {
	if st.Kind == StopLimit {
		return OutcomeStopped
	}
	return OutcomeFailed
}

// Settle decides how a run that reached its end ended, in s: stopped at a
// limit, failed, or done — and done only with evidence (docs: "no success
// without evidence"). proof looks for it once every milestone was declared
// done (the workflow runs the gates on the final tree): missing says what
// is not there, evidence what was found. Settle returns missing when it
// overrules the milestones' claim of done.
func Settle(s *State, proof func() (missing, evidence string, err error)) (overruled string, err error) {
	s.Evidence = ""
	switch {
	case s.StopReason != "":
		s.Outcome = OutcomeOfStop(s.Stop())
		return "", nil
	case len(s.Milestones) == 0:
		s.Outcome = OutcomeFailed
		s.SetStop(FailureStop("the plan has no milestone"))
		return "", nil
	}
	var open []string
	for _, m := range s.Milestones {
		if m.Status != MilestoneDone {
			open = append(open, m.ID)
		}
	}
	if len(open) > 0 {
		s.Outcome = OutcomeFailed
		s.SetStop(FailureStop("milestone(s) " + strings.Join(open, ", ") + " not done"))
		return "", nil
	}
	missing, evidence, err := proof()
	if err != nil {
		return "", err
	}
	if missing != "" {
		s.Outcome = OutcomeFailed
		s.SetStop(FailureStop(missing))
		return missing, nil
	}
	s.Outcome, s.Evidence = OutcomeDone, evidence
	return "", nil
}

// RunStatus is how a run stands, in the one vocabulary that `lemmings
// status`, `runs`, `log`, serve's badges, report.md, the run_end event and
// the exit code all use. The checkpoint store keeps the graph's own status
// (which says what can be resumed); this is what a person is told.
type RunStatus string

// The run statuses. Done is said only when the remit's work passed.
const (
	RunRunning     RunStatus = "running"     // a process is advancing it now
	RunDone        RunStatus = "done"        // the work passed, with evidence (docs: "no success without evidence")
	RunFailed      RunStatus = "failed"      // it ended without its work done, or a fault stopped it
	RunStopped     RunStatus = "stopped"     // a halt, the wall time, a task or spend limit stopped it first
	RunPaused      RunStatus = "paused"      // it waits for an approval
	RunInterrupted RunStatus = "interrupted" // Ctrl-C or a termination signal stopped it
	RunCrashed     RunStatus = "crashed"     // its process died without recording an end
	RunForked      RunStatus = "forked"      // made by lemmings fork --no-run, not run yet
)

// String is the status as every place writes it.
func (s RunStatus) String() string { return string(s) }

// Standing is a run's status with the reason and the one next step that works.
type Standing struct {
	Status RunStatus `json:"status"`
	Reason string    `json:"reason,omitempty"`
	Next   string    `json:"next,omitempty"`
	// Resumable: lemmings resume continues it (the store holds it unfinished).
	Resumable bool `json:"resumable"`
}

// Stored is what the checkpoint store says of a run.
type Stored struct {
	Status graph.Status
	// Active: a process holds the run now (graph.RunInfo.Active). A run
	// stored as running that nobody holds has crashed.
	Active bool
	Reason string // why it paused or halted
	Error  string // why it failed or was interrupted
}

// StandingOf says how a run stands from its stored status and last state.
// A demo's run is never pointed at resume: its scripted model server ended
// with it.
func StandingOf(st Stored, s *State) Standing {
	out := standingOf(st, s)
	if s.Demo && out.Resumable && out.Status != RunRunning {
		out.Next = "a demo run cannot be resumed: its scripted model server ended with it (lemmings demo runs the demo again)"
	}
	return out
}

func standingOf(st Stored, s *State) Standing {
	id := s.RunID
	resume := fmt.Sprintf("lemmings resume %s", id)
	switch st.Status {
	case graph.StatusRunning:
		if st.Active {
			return Standing{Status: RunRunning, Next: fmt.Sprintf("lemmings log -f %s follows it; lemmings halt %s stops it", id, id)}
		}
		return Standing{Status: RunCrashed, Resumable: true,
			Reason: "its process ended without recording how (killed, crashed, or the machine stopped)",
			Next:   resume + " continues from the last checkpoint"}
	case graph.StatusPaused:
		if strings.HasPrefix(st.Reason, "fork of ") { // made by lemmings fork --no-run, waiting for no one
			return Standing{Status: RunForked, Resumable: true, Reason: st.Reason + ", not run yet", Next: resume + " runs it"}
		}
		return Standing{Status: RunPaused, Resumable: true, Reason: "waiting for a decision: " + orNoneRecorded(st.Reason),
			Next: resume + ` --approve   (or --reject "why")`}
	case graph.StatusHalted:
		reason := st.Reason
		if reason == "" {
			reason = "halt requested"
		}
		next := resume + " continues from the last checkpoint"
		if strings.Contains(reason, KeyMaxWallTime) {
			next += " with a new limits.max_wall_time (it counts from each start or resume)"
		}
		return Standing{Status: RunStopped, Resumable: true, Reason: reason, Next: next}
	case graph.StatusInterrupted:
		return Standing{Status: RunInterrupted, Resumable: true, Reason: "Ctrl-C or a termination signal",
			Next: resume + " continues from the last checkpoint"}
	case graph.StatusFailed:
		return Standing{Status: RunFailed, Resumable: true, Reason: orNoneRecorded(st.Error),
			Next: "fix the cause, then " + resume + " continues from the last checkpoint"}
	case graph.StatusDone:
		return endedStanding(s)
	}
	return Standing{Status: RunFailed, Reason: fmt.Sprintf("unknown stored status %q", st.Status)}
}

// endedStanding is the standing of a run that reached its end: the Report
// node settled its outcome.
func endedStanding(s *State) Standing {
	passed := committedTasks(s)
	keeps := fmt.Sprintf("the branch %s keeps the %s that passed: git merge %s", s.Branch, textutil.Count(passed, "task"), s.Branch)
	if passed == 0 {
		keeps = fmt.Sprintf("nothing was committed on %s", s.Branch)
	}
	switch s.Outcome {
	case OutcomeDone:
		return Standing{Status: RunDone, Reason: s.Evidence,
			Next: fmt.Sprintf("review the branch, then merge it: git merge %s", s.Branch)}
	case OutcomeStopped:
		return Standing{Status: RunStopped, Reason: orNoneRecorded(s.StopReason),
			Next: keeps + "; a run stopped at a limit cannot be resumed: raise the limit and start a new run (lemmings run) for the rest"}
	}
	fix := "fix the cause"
	if len(s.Failures) > 0 {
		fix += " (see Failures in the report)"
	}
	return Standing{Status: RunFailed, Reason: orNoneRecorded(s.StopReason),
		Next: keeps + "; " + fix + " and start a new run with lemmings run"}
}

// committedTasks counts the tasks whose work is a commit on the branch.
func committedTasks(s *State) int {
	n := 0
	for _, e := range s.DoneList {
		if e.Commit != "" {
			n++
		}
	}
	return n
}

func orNoneRecorded(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none recorded)"
	}
	return s
}

// The exit codes of a process that ran a run (README: Exit codes; 2, bad
// usage, is the command's own).
const (
	ExitDone        = 0
	ExitFailed      = 1 // the run failed, or could not start
	ExitPaused      = 3 // paused for approval, or stopped (a halt, the wall time, a limit) before its work was done
	ExitInterrupted = 4 // Ctrl-C or a termination signal: lemmings resume continues it
)

// ExitCode is the exit code of a process whose run ended standing st; the
// status the summary, the report and the run_end event say decides it.
// canceled: the process's context was canceled (a signal) before the run
// could store a status of its own.
func ExitCode(st Standing, canceled bool) int {
	switch st.Status {
	case RunDone:
		return ExitDone
	case RunPaused, RunStopped:
		return ExitPaused
	case RunInterrupted:
		return ExitInterrupted
	}
	if canceled {
		return ExitInterrupted
	}
	return ExitFailed
}

// MilestoneShown is a milestone's status as a run's board, status and page
// show it: a run that has ended for good has no active milestone, only
// done, unfinished and not started ones.
func MilestoneShown(milestone string, st Standing) string {
	if st.Resumable || st.Status == RunRunning {
		return milestone
	}
	switch milestone {
	case MilestoneActive:
		return "unfinished"
	case MilestonePending:
		return "not started"
	}
	return milestone
}
