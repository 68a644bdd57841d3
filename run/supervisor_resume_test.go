package run

// End-to-end tests of resuming a run whose supervisor work was interrupted:
// nothing lost, nothing applied twice.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// supCancelAfter cancels the run when pred first holds for an event.
func supCancelAfter(e *supEnv, cancel context.CancelFunc, pred func(graph.Event, []graph.Event) bool) {
	var once sync.Once
	var seen []graph.Event
	e.onEvent = func(ev graph.Event) {
		seen = append(seen, ev)
		if pred(ev, seen) {
			once.Do(cancel)
		}
	}
}

func supStoredState(t *testing.T, repo, runID string) runstate.State {
	t.Helper()
	app, err := Store(repo)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := app.State(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return snap.State
}

// supBootstrapCalls counts the code_style calls made in bootstrap mode (the
// job under test; later runs are never bootstraps once it landed).
func supBootstrapCalls(e *supEnv) int {
	n := 0
	for _, c := range supCallsOf(e.Cloud, prompts.CodeStyle) {
		if strings.Contains(c.Messages[0].Content, prompts.MarkerBootstrap) {
			n++
		}
	}
	return n
}

// supCheckOnce checks that the bootstrap job ran twice in all (the first
// process's call and one re-run), landed once, committed once, and made its
// directive once.
func supCheckOnce(t *testing.T, e *supEnv, res Result, jobID string) {
	t.Helper()
	if n := supBootstrapCalls(e); n != 2 {
		t.Errorf("%d bootstrap code_style calls, want the interrupted one and one re-run", n)
	}
	if c := supTrailerCommits(t, e.Repo, res.Branch, supervisors.TrailerJob, jobID); len(c) != 1 {
		t.Errorf("commits with %s: %s: %v, want exactly one", supervisors.TrailerJob, jobID, c)
	}
	runs := 0
	for _, r := range res.State.SupervisorRunLog {
		if r.JobID == jobID {
			runs++
			if r.Status != "ok" || !slices.Equal(r.Docs, []string{suptest.ConventionPath}) || !slices.Equal(r.Directives, []string{"d1"}) {
				t.Errorf("run %+v", r)
			}
		}
	}
	if runs != 1 {
		t.Errorf("job %s logged %d times", jobID, runs)
	}
	ids := map[string]bool{}
	for _, f := range res.State.DirectiveLog {
		if f.Description == supDirectiveDesc {
			ids[f.DirectiveID] = true
		}
	}
	for _, d := range res.State.PendingDirectives {
		if d.Description == supDirectiveDesc {
			ids[d.ID] = true
		}
	}
	if len(ids) != 1 || !ids["d1"] {
		t.Errorf("the job's directive exists as %v, want d1 once", ids)
	}
	if got := supFates(res.State); !slices.Equal(got, []string{"d1:task", "d1:completed"}) {
		t.Errorf("directive log %v", got)
	}
	if len(res.State.SupervisorJobs) != 0 {
		t.Errorf("jobs left: %v", res.State.SupervisorJobs)
	}
}

// TestSupE2EResumeWithJobInFlight: the run stops while a supervisor job is in
// flight (recorded in the checkpoint); the resumed run re-runs it once and
// lands it once.
func TestSupE2EResumeWithJobInFlight(t *testing.T) {
	t.Parallel()
	tm := &supTeam{Supervisor: supBootstrapStyle, DirectiveFate: supTaskFate, SupervisorLatency: time.Hour}
	e := supNewEnv(t, tm)
	e.Cfg.Supervisors.Mode = "background"
	e.Cfg.Supervisors.CodeStyle.Interval = 2
	e.Cfg.Supervisors.Design.Enabled = false
	e.Cfg.Supervisors.Internaliser.Enabled = false
	plan := e.supPlan(4)
	res := supStartUntilJobInFlight(t, e, plan)

	tm.setSupervisorLatency(0)
	res2, err := e.resume(context.Background(), res.RunID)
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, e.eventLog())
	}
	if res2.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("resumed run ended %q: %s", res2.State.Outcome, res2.State.StopReason)
	}
	supCheckOnce(t, e, res2, "code_style-2-1")
}

// TestSupE2EResumeOfflineWithJobInFlight: a run resumed offline sends nothing
// to the cloud, not even the job an online process left in flight; that job
// is logged as skipped, with a warning, and the run completes.
func TestSupE2EResumeOfflineWithJobInFlight(t *testing.T) {
	t.Parallel()
	tm := &supTeam{Supervisor: supBootstrapStyle, DirectiveFate: supTaskFate, SupervisorLatency: time.Hour}
	e := supNewEnv(t, tm)
	e.Cfg.Supervisors.Mode = "background"
	e.Cfg.Supervisors.CodeStyle.Interval = 2
	e.Cfg.Supervisors.Design.Enabled = false
	e.Cfg.Supervisors.Internaliser.Enabled = false
	res := supStartUntilJobInFlight(t, e, e.supPlan(4))
	before := len(e.Cloud.Calls())

	e.Cfg.Offline = true
	res2, err := e.resume(context.Background(), res.RunID)
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, e.eventLog())
	}
	if res2.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("resumed run ended %q: %s", res2.State.Outcome, res2.State.StopReason)
	}
	if n := len(e.Cloud.Calls()) - before; n != 0 {
		t.Fatalf("%d requests reached the cloud after an offline resume", n)
	}
	runs := supRunLog(res2.State, prompts.CodeStyle)
	if len(runs) != 1 || runs[0].JobID != "code_style-2-1" || runs[0].Status != "skipped" || len(res2.State.SupervisorJobs) != 0 {
		t.Fatalf("runs %+v jobs %v", runs, res2.State.SupervisorJobs)
	}
	if !slices.ContainsFunc(e.warnings(), func(w string) bool { return strings.Contains(w, "supervisor code_style skipped: supervisors are off") }) {
		t.Fatalf("no warning for the skipped job: %q", e.warnings())
	}
}

// supStartUntilJobInFlight starts the plan and stops the run once the step
// that launched the first supervisor job is checkpointed and the cloud is
// working on the call; the checkpoint must list the job.
func supStartUntilJobInFlight(t *testing.T, e *supEnv, plan string) Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	supCancelAfter(e, cancel, func(ev graph.Event, seen []graph.Event) bool {
		if ev.Kind != graph.EventCheckpoint {
			return false
		}
		for i := len(seen) - 2; i >= 0; i-- {
			if seen[i].Kind == graph.EventNodeEnd {
				if seen[i].Node != runstate.NodeSupervisors {
					return false
				}
				for deadline := time.Now().Add(10 * time.Second); supBootstrapCalls(e) == 0 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				return true
			}
		}
		return false
	})
	res, err := e.start(ctx, plan)
	e.mu.Lock()
	e.onEvent = nil
	e.mu.Unlock()
	if err == nil {
		t.Fatalf("the first run was not interrupted: %s", res.Status)
	}
	stored := supStoredState(t, e.Repo, res.RunID)
	if len(stored.SupervisorJobs) != 1 || stored.SupervisorJobs[0].ID != "code_style-2-1" {
		t.Fatalf("checkpointed jobs %+v, want code_style-2-1 in flight", stored.SupervisorJobs)
	}
	if n := supBootstrapCalls(e); n != 1 {
		t.Fatalf("%d calls before the stop", n)
	}
	return res
}

// TestSupE2EResumeAfterLandingBeforeCheckpoint: the run dies after a job's
// documents were committed but before the landing step was checkpointed; the
// resumed run re-runs the job, finds its commit and writes nothing twice.
func TestSupE2EResumeAfterLandingBeforeCheckpoint(t *testing.T) {
	t.Parallel()
	// A real model words a re-run differently: the store alone would then
	// commit the documents a second time.
	var answers atomic.Int32
	reworded := func(role string, c llmtest.Call) (llmtest.Reply, bool) {
		r, ok := supBootstrapStyle(role, c)
		if ok {
			r.Content = strings.Replace(r.Content, "Bad: out/file.txt", fmt.Sprintf("Bad: out/file-%d.txt", answers.Add(1)), 1)
		}
		return r, ok
	}
	tm := &supTeam{Supervisor: reworded, DirectiveFate: supTaskFate}
	e := supNewEnv(t, tm)
	e.Cfg.Supervisors.Mode = "background"
	e.Cfg.Supervisors.CodeStyle.Interval = 2
	e.Cfg.Supervisors.Design.Enabled = false
	e.Cfg.Supervisors.Internaliser.Enabled = false
	plan := e.supPlan(5)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	landedIn := ""
	supCancelAfter(e, cancel, func(ev graph.Event, _ []graph.Event) bool {
		if ev.Kind == graph.EventCustom && ev.Name == "supervisor_done" {
			landedIn = ev.Node
			return true
		}
		return false
	})
	res, err := e.start(ctx, plan)
	if err == nil {
		t.Fatalf("the first run was not interrupted: %s", res.Status)
	}
	if landedIn != runstate.NodePlanner {
		t.Fatalf("the job landed in %q, want a planning round", landedIn)
	}
	if c := supTrailerCommits(t, e.Repo, res.Branch, supervisors.TrailerJob, "code_style-2-1"); len(c) != 1 {
		t.Fatalf("the first process did not commit the job's documents: %v", c)
	}
	stored := supStoredState(t, e.Repo, res.RunID)
	if len(stored.SupervisorJobs) != 1 || len(stored.PendingDirectives) != 0 {
		t.Fatalf("checkpoint after the interrupted landing: jobs %+v directives %+v", stored.SupervisorJobs, stored.PendingDirectives)
	}

	e.mu.Lock()
	e.onEvent = nil
	e.mu.Unlock()
	res2, err := e.resume(context.Background(), res.RunID)
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, e.eventLog())
	}
	if res2.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("resumed run ended %q: %s", res2.State.Outcome, res2.State.StopReason)
	}
	supCheckOnce(t, e, res2, "code_style-2-1")
}
