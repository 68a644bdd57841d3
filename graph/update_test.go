package graph

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// An edit from outside a finished run (Update with Goto) stores one step,
// halted with the reason and the metadata it sets; Resume then runs the
// nodes Goto named, and later steps' metadata replaces the edit's.
func TestUpdateEditsAStoredRunWithoutRunningIt(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		meta := func(_ context.Context, s simple) map[string]string {
			return map[string]string{"head": "h" + string(rune('0'+s.N))}
		}
		c := mustCompile(t, line("a", "b", "c"), WithCheckpointer(cp), WithMetadata(meta))
		if _, err := c.Run(ctx, "r", simple{}); err != nil {
			t.Fatal(err)
		}
		snap, err := c.Update(ctx, "r", "task undone", WithUpdate(func(s simple) (simple, error) { s.N = 0; return s, nil }),
			Goto("b"), SetMetadata(map[string]string{"head": "moved"}))
		if err != nil {
			t.Fatal(err)
		}
		if snap.Status != StatusHalted || snap.Reason != "task undone" || snap.Step != 4 || !slices.Equal(snap.Next, []string{"b"}) ||
			snap.Metadata["head"] != "moved" || !slices.Equal(snap.Nodes, []string{UpdateNode}) {
			t.Fatalf("after Update: %+v", snap)
		}
		s, err := c.Resume(ctx, "r")
		if err != nil || !slices.Equal(s.Log, []string{"a", "b", "c", "b", "c"}) || s.N != 2 {
			t.Fatalf("Resume after the update = %+v, %v", s, err)
		}
		end, _ := c.State(ctx, "r")
		if end.Status != StatusDone || end.Metadata["head"] != "h2" {
			t.Fatalf("end %+v", end)
		}
	})
}

func TestUpdateWithoutNextNodesLeavesTheRunDone(t *testing.T) {
	ctx := context.Background()
	c := mustCompile(t, line("a"), WithCheckpointer(NewMemoryCheckpointer()))
	if _, err := c.Run(ctx, "r", simple{}); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Update(ctx, "r", "note", WithUpdate(func(s simple) (simple, error) { s.N = 7; return s, nil }))
	if err != nil || snap.Status != StatusDone || snap.State.N != 7 {
		t.Fatalf("Update = %+v, %v", snap, err)
	}
	if _, err := c.Update(ctx, "r", "x"); err == nil {
		t.Error("Update without WithUpdate succeeded")
	}
	if _, err := c.Update(ctx, "r", "x", WithUpdate(func(s simple) (simple, error) { return s, nil }), Goto("nope")); err == nil {
		t.Error("Goto of an unknown node succeeded")
	}
	if _, err := c.Update(ctx, "nope", "x", WithUpdate(func(s simple) (simple, error) { return s, nil })); !errors.Is(err, ErrRunNotFound) {
		t.Errorf("Update of a missing run: %v", err)
	}
}

// A fork with Goto and SetMetadata starts where Goto says, with the
// metadata of the world the caller made for it.
func TestForkWithGotoAndMetadata(t *testing.T) {
	ctx := context.Background()
	c := mustCompile(t, line("a", "b", "c"), WithCheckpointer(NewMemoryCheckpointer()))
	if _, err := c.Run(ctx, "p", simple{}); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Fork(ctx, "p", 2, "f", WithUpdate(func(s simple) (simple, error) { return s, nil }), Goto("a"),
		SetMetadata(map[string]string{"head": "forked"}))
	if err != nil || !slices.Equal(snap.Next, []string{"a"}) || snap.Metadata["head"] != "forked" {
		t.Fatalf("fork = %+v, %v", snap, err)
	}
	if run, step, ok := ForkOrigin(snap.Metadata); !ok || run != "p" || step != 2 {
		t.Fatalf("origin %v", snap.Metadata)
	}
	s, err := c.Resume(ctx, "f")
	if err != nil || !slices.Equal(s.Log, []string{"a", "b", "a", "b", "c"}) {
		t.Fatalf("Resume of the fork = %+v, %v", s, err)
	}
}
