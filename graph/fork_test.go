package graph

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// A fork of a step whose next step is a fan-out carries the Send tasks with
// their inputs, and runs every task again (the parent's finished tasks too).
func TestForkCarriesSendTasksAndRerunsThem(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var calls atomic.Int32
		c := mustCompile(t, squares(&calls), WithCheckpointer(cp))
		if _, err := c.Run(ctx, "p", mapState{Items: []int{2, 3, 4}}); err != nil {
			t.Fatal(err)
		}
		snap, err := c.Fork(ctx, "p", 1, "f")
		if err != nil || !slices.Equal(snap.Next, []string{"square", "square", "square"}) || len(snap.Pending) != 0 {
			t.Fatalf("fork = %+v, %v", snap, err)
		}
		s, err := c.Resume(ctx, "f")
		if err != nil || !slices.Equal(s.Sum, []int{4, 9, 16}) || calls.Load() != 6 {
			t.Fatalf("Resume of the fork = %+v, %v (%d calls)", s, err, calls.Load())
		}
	})
}

func TestForkOfAForkNamesItsOwnParentAndSurvivesAPrune(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	c := mustCompile(t, line("a", "b", "c", "d"), WithCheckpointer(cp), WithSnapshotBytes(1))
	if _, err := c.Run(ctx, "p", simple{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fork(ctx, "p", 1, "f1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Fork(ctx, "f1", 3, "f2")
	if err != nil {
		t.Fatal(err)
	}
	if run, step, ok := ForkOrigin(snap.Metadata); !ok || run != "f1" || step != 3 {
		t.Fatalf("origin of the second fork: %v", snap.Metadata)
	}
	if _, err := c.Prune(ctx, "f1", 4); err != nil {
		t.Fatal(err)
	}
	after, _ := c.State(ctx, "f1")
	if run, step, ok := ForkOrigin(after.Metadata); !ok || run != "p" || step != 1 {
		t.Fatalf("the origin did not survive a prune: %v", after.Metadata)
	}
}

func TestResumeWithAnUpdateAsANode(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	g := New[simple]().AddNode("a", inc("a")).AddNode("b", inc("b")).AddNode("c", inc("c")).
		AddEdge(Start, "a").AddConditionalEdges("a", func(s simple) string {
		if s.N >= 10 {
			return "c"
		}
		return "b"
	}, "b", "c").AddEdge("b", End).AddEdge("c", End)
	c := mustCompile(t, g, WithCheckpointer(cp), WithInterruptBefore("b"))
	if _, err := c.Run(ctx, "r", simple{}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	s, err := c.Resume(ctx, "r", WithUpdate(func(s simple) (simple, error) { s.N = 10; return s, nil }), AsNode("a"))
	if err != nil || !slices.Equal(s.Log, []string{"a", "c"}) {
		t.Fatalf("Resume as a = %+v, %v: a's router must pick c on the edited state", s, err)
	}
	h, _ := c.History(ctx, "r")
	if !slices.Equal(h[2].Nodes, []string{"a"}) || !slices.Equal(h[2].Next, []string{"c"}) {
		t.Fatalf("the update's checkpoint: %+v", h[2])
	}
	if _, err := c.Run(ctx, "x", simple{}, WithUpdate(func(s simple) (simple, error) { return s, nil })); err == nil || !strings.Contains(err.Error(), "WithUpdate applies to Resume and Fork") {
		t.Fatalf("Run with an update: %v", err)
	}
}

// A fork of a checkpoint where the parent had paused before a node pauses
// there again when it runs: a replay replays its interrupts.
func TestForkReplaysInterrupts(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	c := mustCompile(t, line("a", "deploy"), WithCheckpointer(cp), WithInterruptBefore("deploy"))
	if _, err := c.Run(ctx, "p", simple{}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Replay(ctx, "p", 1, "f"); !errors.Is(err, ErrPaused) || !strings.Contains(err.Error(), "before deploy") {
		t.Fatalf("Replay: %v", err)
	}
	if s, err := c.Resume(ctx, "f"); err != nil || !slices.Equal(s.Log, []string{"a", "deploy"}) {
		t.Fatalf("Resume = %+v, %v", s, err)
	}
}

// State reads from the last snapshot on: a snapshot must repeat the
// metadata (the fork's origin) even when the step did not change it.
func TestForkOriginSurvivesSnapshots(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	c := mustCompile(t, line("a", "b", "c", "d", "e", "f"), WithCheckpointer(cp), WithSnapshotBytes(1))
	if _, err := c.Run(ctx, "p", simple{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Replay(ctx, "p", 1, "f"); err != nil {
		t.Fatal(err)
	}
	snap, _ := c.State(ctx, "f")
	if run, step, ok := ForkOrigin(snap.Metadata); !ok || run != "p" || step != 1 {
		t.Fatalf("State of the fork after its snapshots: metadata %v", snap.Metadata)
	}
}

// A fork's update goes through WithRedact like any checkpoint.
func TestForkUpdateIsRedacted(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	c := mustCompile(t, line("a", "b"), WithCheckpointer(cp), WithRedact(func(b []byte) []byte {
		return []byte(strings.ReplaceAll(string(b), "sk-123", "[redacted]"))
	}))
	if _, err := c.Run(ctx, "p", simple{}); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Fork(ctx, "p", 1, "f", WithUpdate(func(s simple) (simple, error) {
		s.Log = append(s.Log, "token sk-123")
		return s, nil
	}))
	if err != nil || !slices.Equal(snap.State.Log, []string{"a", "token [redacted]"}) {
		t.Fatalf("fork = %+v, %v", snap, err)
	}
	recs, _ := cp.Records(ctx, "f")
	if strings.Contains(string(recs[0].Data), "sk-123") {
		t.Fatal("the secret reached the store")
	}
}
