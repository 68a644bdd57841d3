package clustertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/run"
)

// A finished run is pruned on schedule (cluster.events_retention): its
// events go, its checkpoints shrink to the last one, and its step refs on
// the remote to the one that checkpoint names; the branch and what status
// and report read stay. A step ref no checkpoint names (a holder pushed it
// and died) goes as soon as the run finishes.
func TestRetentionPrunesFinishedRuns(t *testing.T) {
	e := newEnv(t)
	e.retention = "3s"
	srv := demo.NewServer(&demo.Script{LocalLatency: 10 * time.Millisecond})
	defer srv.Close()
	a := e.newBox("box-a", srv.URL())
	id := e.submit(a)
	base := gitRun(t, e.origin, "rev-parse", "HEAD")
	orphan := "refs/lemmings/" + id + "/9/99"
	gitRun(t, e.origin, "push", "--quiet", e.remote, base+":"+orphan) // as a holder that died after its push
	a.startWorker()
	e.waitDone(id, 3*time.Minute)
	done := time.Now()
	// Before the retention could (3s after the last step): the holder did it.
	e.waitFor(2*time.Second, "the holder to prune the orphan ref", func() bool {
		return !strings.Contains(gitRun(t, e.remote, "for-each-ref", "refs/lemmings/"+id), orphan) &&
			strings.Contains(a.logText(), "pruned step refs no checkpoint names")
	})
	stepRefs := func() []string {
		var refs []string
		for _, l := range strings.Split(gitRun(t, e.remote, "for-each-ref", "--format=%(refname)", "refs/lemmings/"+id), "\n") {
			if l != "" && !strings.HasSuffix(l, "/base") {
				refs = append(refs, l)
			}
		}
		return refs
	}
	before := stepRefs()
	if time.Since(done) < 2*time.Second && len(before) < 2 {
		t.Fatalf("want several step refs before the retention prune, got %v", before)
	}
	final, err := e.state(id)
	if err != nil {
		t.Fatal(err)
	}
	db := e.openDB()
	ctx := context.Background()
	count := func(q string) int {
		var n int
		if err := db.Pool().QueryRow(ctx, q, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	recsBefore := count("SELECT count(*) FROM lemmings_records WHERE run_id = $1")
	e.waitFor(30*time.Second, "the reaper to prune the finished run", func() bool {
		return count("SELECT count(*) FROM lemmings_runs WHERE run_id = $1 AND pruned_at IS NOT NULL") == 1 &&
			count("SELECT count(*) FROM lemmings_records WHERE run_id = $1") == 1 && len(stepRefs()) < len(before)
	})
	t.Logf("records %d → 1; step refs %v → %v", recsBefore, before, stepRefs())
	if n := count("SELECT count(*) FROM lemmings_events WHERE run_id = $1"); n != 0 {
		t.Errorf("%d events left past the retention", n)
	}
	// Only the refs of the last checkpoint's commit stay (one, unless a
	// step re-pushed the same commit).
	head := final.Metadata[run.MetaGitHead]
	refs := stepRefs()
	if len(refs) == 0 {
		t.Errorf("no step ref of the last commit %s left", head)
	}
	for _, ref := range refs {
		if got := gitRun(t, e.remote, "rev-parse", ref); got != head {
			t.Errorf("step ref %s (%s) left after the prune; only the last commit's (%s) should stay", ref, got, head)
		}
	}
	if got := gitRun(t, e.remote, "rev-parse", "refs/heads/lemmings/"+id); got != final.Metadata[run.MetaGitHead] {
		t.Errorf("the run branch moved: %s, want %s", got, final.Metadata[run.MetaGitHead])
	}
	if after, err := e.state(id); err != nil || after.Step != final.Step || after.State.TasksCompleted != final.State.TasksCompleted {
		t.Errorf("the pruned run reads step %d, %d tasks (%v); before: step %d, %d tasks", after.Step, after.State.TasksCompleted, err, final.Step, final.State.TasksCompleted)
	}
	if out := a.lemmings(e.origin, "status", id); !strings.Contains(out, "done") {
		t.Errorf("status of the pruned run: %q", out)
	}
	if out := a.lemmings(e.origin, "report", id); !strings.Contains(out, "#") {
		t.Errorf("report of the pruned run: %q", out)
	}
}
