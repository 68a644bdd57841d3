package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/runstate"
)

// StatusStarting is the status of a run whose process is still preparing
// (models, index): a new run with no checkpoint yet, or a resume or decision
// started here that has not taken the run yet.
const StatusStarting = "starting"

// RunStatus is where a run stands: what status, run, resume, approve, reject
// and wait answer with.
type RunStatus struct {
	RunID  string `json:"run_id"`
	Status string `json:"status" jsonschema:"starting, running, done, failed, stopped, paused, interrupted, crashed, forked (made by fork without running it), or damaged (the words lemmings status uses; done only when the work passed, with evidence)"`
	Active bool   `json:"active" jsonschema:"a lemmings process is advancing the run right now"`
	Hint   string `json:"hint" jsonschema:"what to do next, in words"`

	Remit     string   `json:"remit,omitempty"`
	Branch    string   `json:"branch,omitempty" jsonschema:"the git branch the run commits to"`
	Phase     string   `json:"phase,omitempty"`
	Step      int      `json:"step"`
	NextNodes []string `json:"next_nodes,omitempty" jsonschema:"the workflow nodes that run next"`
	Started   string   `json:"started,omitempty"`
	Updated   string   `json:"updated,omitempty"`

	Milestone         int       `json:"milestone"`
	Milestones        int       `json:"milestones"`
	TasksCompleted    int       `json:"tasks_completed"`
	TasksFailed       int       `json:"tasks_failed"`
	TasksPlanned      int       `json:"tasks_planned"`
	CurrentTask       *TaskInfo `json:"current_task,omitempty"`
	PendingDirectives int       `json:"pending_directives"`
	CostUSD           float64   `json:"cost_usd"`

	Outcome   string `json:"outcome,omitempty"`
	Reason    string `json:"reason,omitempty" jsonschema:"why the run stands where it does (for done: the evidence)"`
	Error     string `json:"error,omitempty"`
	PausedFor string `json:"paused_for,omitempty" jsonschema:"milestones or task: what a paused run waits for a decision on"`
	Report    string `json:"report,omitempty" jsonschema:"path of the report, once written (also the resource lemmings://runs/<run_id>/report)"`
	Log       string `json:"log,omitempty" jsonschema:"output of the lemmings process started for the run by this server"`
}

// TaskInfo is the task a run works on.
type TaskInfo struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Attempt int    `json:"attempt"`
}

// pick returns the run named id, or with id empty the most recent run that
// want accepts, with the CLI's wording (lemmings status, report, log).
func (s *Server) pick(ctx context.Context, id string, want func(graph.RunInfo) bool) (*inspect.Store, string, error) {
	store, err := inspect.Open(s.opts.Root)
	if err != nil && id == "" {
		id = s.latestChild() // the first run, started here, has no checkpoint yet
	}
	if err != nil {
		if id != "" {
			if s.childOf(id) != nil {
				return nil, id, nil // started here, no checkpoint yet
			}
			return nil, "", fmt.Errorf("no such run %q in %s: %v", id, s.opts.Root, err)
		}
		return nil, "", err
	}
	picked, err := store.Pick(ctx, id, want)
	if errors.Is(err, inspect.ErrNoSuchRun) && s.childOf(id) != nil {
		return store, id, nil
	}
	return store, picked, err
}

// status reads where a run stands; store may be nil (no runs stored yet).
func (s *Server) status(ctx context.Context, store *inspect.Store, id string) (RunStatus, error) {
	out := RunStatus{RunID: id}
	c := s.childOf(id)
	if c != nil {
		out.Log = c.logPath
	}
	var r inspect.Run
	err := inspect.ErrNoSuchRun
	if store != nil {
		r, err = store.Find(ctx, id)
	}
	if errors.Is(err, inspect.ErrNoSuchRun) && c != nil {
		// Started here; no checkpoint yet: still preparing, or it failed.
		if c.running() {
			out.Status = StatusStarting
			out.Active = true
			out.Hint = "the lemmings process is preparing the run (models, index): call wait to follow it, or status again"
			return out, nil
		}
		return out, fmt.Errorf("run %s did not start: %w", id, c.failure())
	}
	if err != nil {
		return out, err
	}
	out.Status, out.Active = r.DisplayStatus(), r.Active
	// Between a process's start (a resume, an approval) and its taking the
	// run's lock, the store still says how the run stood before: paused,
	// stopped… That is over; the run is starting again.
	starting := c != nil && c.running() && !r.Active
	if starting {
		out.Status, out.Active = StatusStarting, true
	}
	if r.Err != nil {
		out.Error = r.Err.Error()
		out.Hint = "the run's checkpoints cannot be read: " + out.Error
		return out, nil
	}
	v := r.View()
	out.Remit, out.Branch, out.Phase, out.Step, out.NextNodes = v.Remit, v.Branch, v.Phase, r.Step, r.Next
	out.Updated = stamp(r.Updated)
	out.Started = stamp(v.StartedAt)
	out.Milestone, out.Milestones = v.Milestone, v.Milestones
	out.TasksCompleted, out.TasksFailed, out.TasksPlanned = v.Tasks.Completed, v.Tasks.Failed, v.Tasks.Planned
	if t := v.Current; t != nil {
		out.CurrentTask = &TaskInfo{ID: t.ID, Title: t.Title, Attempt: t.Attempt}
	}
	out.PendingDirectives = v.PendingDirectives
	out.CostUSD = v.Total.CostUSD
	out.Outcome, out.Reason = string(v.Outcome), v.Standing.Reason
	if starting {
		out.Reason = "" // the reason it stood still, which the decision or resume ended
	}
	// A Ctrl-C is how an interrupted run ends, not an error (as lemmings status).
	out.Error = r.Error
	if r.Status == graph.StatusInterrupted && strings.Contains(out.Error, context.Canceled.Error()) {
		out.Error = ""
	}
	if r.Status == graph.StatusPaused && !starting {
		if snap, err := store.Snapshot(ctx, id); err == nil {
			out.PausedFor, _ = inspect.PausedFor(snap)
		}
	}
	if p := inspect.ReportPath(s.opts.Root, id); fileExists(p) {
		out.Report = p
	}
	out.Hint = hint(out, v.Standing)
	if starting {
		out.Hint = "the lemmings process is taking up the run (models, index): call wait to follow it, or status again"
	}
	return out, nil
}

// hint says what a calling agent can do next with a run in this state.
func hint(out RunStatus, st runstate.Standing) string {
	switch {
	case out.Active:
		return "the run is moving: call wait to follow it (progress notifications), events for what it did, halt to stop it now (the step it cuts off runs again on resume)"
	case st.Status == runstate.RunForked:
		return "forked and not run yet (reason says from where): resume runs it"
	case st.Status == runstate.RunPaused:
		return fmt.Sprintf("paused, waiting for a decision on its %s (reason says what): call approve, or reject with a reason the planner will read", out.PausedFor)
	case st.Status == runstate.RunDone:
		return fmt.Sprintf("done, its work passed (reason says the evidence): read report; the work is on branch %s (git log %s; git merge %s)", out.Branch, out.Branch, out.Branch)
	case !st.Resumable:
		return fmt.Sprintf("%s, and it cannot be resumed (reason says why): read report; %s", st.Status, st.Next)
	case st.Status == runstate.RunFailed:
		return "failed: read report for why; after fixing the cause, resume continues from the last checkpoint"
	case st.Status == runstate.RunCrashed:
		return "no process holds the run (it crashed or was killed): resume continues it from its last checkpoint"
	default: // stopped by a halt or the wall time, interrupted
		return st.Status.String() + " before the end (reason says why): resume continues it from its last checkpoint"
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
