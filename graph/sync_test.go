package graph

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// syncLog wraps a checkpointer and logs appends, syncs and node runs in order.
type syncLog struct {
	Checkpointer
	mu  sync.Mutex
	log []string
}

func (s *syncLog) add(x string) { s.mu.Lock(); s.log = append(s.log, x); s.mu.Unlock() }

func (s *syncLog) Open(ctx context.Context, id string, create bool) (RunWriter, error) {
	w, err := s.Checkpointer.Open(ctx, id, create)
	if err != nil {
		return nil, err
	}
	return &syncWriter{RunWriter: w, s: s}, nil
}

type syncWriter struct {
	RunWriter
	s *syncLog
}

func (w *syncWriter) Append(ctx context.Context, r Record) error {
	w.s.add(map[RecordKind]string{RecordSnapshot: "snap", RecordDelta: "delta", RecordWrite: "write", RecordStatus: "status"}[r.Kind])
	return w.RunWriter.Append(ctx, r)
}

func (w *syncWriter) Sync(ctx context.Context) error {
	w.s.add("sync")
	return w.RunWriter.Sync(ctx)
}

func TestSideEffectNodesAreFencedBySyncs(t *testing.T) {
	sl := &syncLog{Checkpointer: NewMemoryCheckpointer()}
	node := func(name string) NodeFunc[simple] {
		return func(_ context.Context, s simple) (simple, error) { sl.add(name); return s, nil }
	}
	g := New[simple]().AddNode("a", node("a")).AddNode("commit", node("commit"), WithSideEffects()).AddNode("b", node("b")).
		AddEdge(Start, "a").AddEdge("a", "commit").AddEdge("commit", "b").AddEdge("b", End)
	c := mustCompile(t, g, WithCheckpointer(sl))
	if _, err := c.Run(context.Background(), "s", simple{}); err != nil {
		t.Fatal(err)
	}
	want := "snap a delta sync commit delta sync b delta sync"
	if got := join(sl.log); got != want {
		t.Fatalf("order\n got %s\nwant %s", got, want)
	}
	sl.log = nil
	c = mustCompile(t, line("a", "b"), WithCheckpointer(sl), WithInterruptAfter("a"))
	if _, err := c.Run(context.Background(), "p", simple{}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	// The pause is stored in the step's own record (a crash cannot keep the
	// step and lose its pause), then synced.
	if got := join(sl.log); got != "snap delta sync" {
		t.Fatalf("a pause must end with a sync: %s", got)
	}
}

func join(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestSameRunTwiceInOneProcessIsRefused(t *testing.T) {
	cp := NewMemoryCheckpointer()
	started := make(chan struct{})
	release := make(chan struct{})
	g := New[simple]().AddNode("wait", func(_ context.Context, s simple) (simple, error) {
		close(started)
		<-release
		return s, nil
	}).AddEdge(Start, "wait").AddEdge("wait", End)
	c := mustCompile(t, g, WithCheckpointer(cp))
	done := make(chan error)
	go func() { _, err := c.Run(context.Background(), "dup", simple{}); done <- err }()
	<-started
	if _, err := c.Resume(context.Background(), "dup"); !errors.Is(err, ErrRunLocked) {
		t.Errorf("second writer: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSyncPolicies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []FileOption
		syncs int
	}{
		// Default: one sync of the segment and its two directories when the run ends.
		{"default syncs when the run stops", nil, 3},
		// Every commit: the first segment (file, rename, dirs) and then each of 5 appends; the end adds 1.
		{"SyncEveryCommit syncs each append", []FileOption{SyncEveryCommit()}, 3 + 5 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp, _ := NewFileCheckpointer(t.TempDir(), tc.opts...)
			ffs := &faultFS{budget: -1}
			cp.fs = ffs
			c := mustCompile(t, line("a", "b", "c", "d", "e"), WithCheckpointer(cp))
			if s, err := c.Run(context.Background(), "e", simple{}); err != nil || s.N != 5 {
				t.Fatalf("%+v %v", s, err)
			}
			if ffs.syncs != tc.syncs {
				t.Fatalf("%d syncs, want %d", ffs.syncs, tc.syncs)
			}
		})
	}
}
