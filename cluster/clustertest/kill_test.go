package clustertest

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
)

// Two workers start at once against an empty database; one takes the run
// and is SIGKILLed in the middle of a step; the other finishes it. The
// branch on the remote holds the checkpointed commits and the re-run step,
// every task committed once; no two sessions ever hold the run's lock.
func TestKilledWorkerRunFinishesOnAnother(t *testing.T) {
	e := newEnv(t)
	srv := demo.NewServer(&demo.Script{LocalLatency: 20 * time.Millisecond, ImplementorLatency: 150 * time.Millisecond})
	defer srv.Close()
	a, b := e.newBox("box-a", srv.URL()), e.newBox("box-b", srv.URL())
	a.startWorker()
	b.startWorker() // both at once, before anything made the tables
	id := e.submit(a)
	base := gitRun(t, e.origin, "rev-parse", "HEAD")
	locks := e.sampleLocks()

	var victim, other *box
	e.waitFor(60*time.Second, "the run to reach step 8", func() bool {
		snap, err := e.state(id)
		return err == nil && snap.Step >= 8
	})
	holder, _ := e.holder(id)
	victim, other = a, b
	if holder == b.name {
		victim, other = b, a
	}
	time.Sleep(60 * time.Millisecond) // inside the next step
	before, _ := e.state(id)
	killed := time.Now()
	victim.kill(syscall.SIGKILL)

	var takeover time.Duration
	e.waitFor(30*time.Second, "another worker to store a step", func() bool {
		h, inc := e.holder(id)
		snap, err := e.state(id)
		if err == nil && h == other.name && inc >= 2 && snap.Step > before.Step {
			takeover = time.Since(killed)
			return true
		}
		return false
	})
	t.Logf("takeover: %v from SIGKILL of %s (at step %d) to the next step stored by %s", takeover, victim.name, before.Step, other.name)
	e.waitFor(3*time.Minute, "the run to finish", func() bool {
		snap, err := e.state(id)
		return err == nil && snap.Status == graph.StatusDone
	})
	most, samples := locks.finish()
	if most > 1 {
		t.Errorf("pg_locks: %d sessions held the run at once", most)
	}
	if samples < 10 {
		t.Errorf("only %d pg_locks samples", samples)
	}
	final, _ := e.state(id)
	head := final.Metadata[run.MetaGitHead]
	if got := gitRun(t, e.remote, "rev-parse", "refs/heads/lemmings/"+id); got != head {
		t.Errorf("remote branch at %s, the last checkpoint names %s", got, head)
	}
	tasks := e.taskTrailers(id, base)
	if len(tasks) == 0 {
		t.Fatal("no task commit on the run branch")
	}
	sorted := slices.Clone(tasks)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(tasks) {
		t.Errorf("a task was committed twice: %v", tasks)
	}
	if final.State.TasksCompleted != len(tasks) {
		t.Errorf("%d tasks completed, %d task commits on the branch", final.State.TasksCompleted, len(tasks))
	}
	// Any machine reads the run through the store.
	status := a.lemmings(e.origin, "status", id)
	if !strings.Contains(status, "done") {
		t.Errorf("status from the submitter: %q", status)
	}
	if report := a.lemmings(e.origin, "report", id); !strings.Contains(report, "#") {
		t.Errorf("report from the submitter: %q", report)
	}
	if log := a.lemmings(e.origin, "log", id); !strings.Contains(log, "implementor") {
		t.Errorf("log from the submitter lacks the implementor: %q", log[:min(len(log), 500)])
	}
	var jobsDone int
	_ = e.openDB().Pool().QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE state = 'completed'").Scan(&jobsDone)
	t.Logf("completed jobs: %d", jobsDone)
}
