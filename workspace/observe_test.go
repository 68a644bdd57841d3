package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

type recordingObserver struct {
	gates   []GateRecord
	commits []CommitRecord
}

func (o *recordingObserver) ObserveGate(_ context.Context, g GateRecord) {
	o.gates = append(o.gates, g)
}
func (o *recordingObserver) ObserveCommit(_ context.Context, c CommitRecord) {
	o.commits = append(o.commits, c)
}

func TestTheContextsObserverSeesGatesAndCommits(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	r, err := OpenRepo(bg(), dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.CreateWorktree(bg(), "run-1")
	if err != nil {
		t.Fatal(err)
	}
	obs := &recordingObserver{}
	ctx := WithObserver(bg(), obs)

	results := RunGates(ctx, testBox(t), wt.Dir(), []Gate{{Name: "ok", Command: "true"}, {Name: "bad", Command: "exit 4"}, {Name: "never", Command: "true"}}, 0)
	if err := os.WriteFile(filepath.Join(wt.Dir(), "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sha, err := wt.Commit(ctx, "add b\n\nbecause", map[string]string{TrailerRun: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit(ctx, "nothing", nil); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("empty commit: %v", err)
	}
	RunGate(bg(), testBox(t), wt.Dir(), Gate{Name: "unseen", Command: "true"}, 0)
	if _, err := wt.Commit(bg(), "unseen", nil); !errors.Is(err, ErrNothingToCommit) {
		t.Fatal(err)
	}

	if len(obs.gates) != 2 || obs.gates[0].Result != results[0] || obs.gates[1].Result.ExitCode != 4 || obs.gates[1].Start.Before(obs.gates[0].Start) {
		t.Errorf("gates seen: %+v (ran %+v)", obs.gates, results)
	}
	if len(obs.commits) != 2 {
		t.Fatalf("commits seen: %+v", obs.commits)
	}
	c, empty := obs.commits[0], obs.commits[1]
	if c.SHA != sha || c.Err != nil || c.Message != "add b\n\nbecause" || c.Branch != "lemmings/run-1" || c.End.Before(c.Start) {
		t.Errorf("commit: %+v", c)
	}
	if empty.SHA != "" || !errors.Is(empty.Err, ErrNothingToCommit) {
		t.Errorf("empty commit: %+v", empty)
	}
}
