package graph

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// inner: Start → x → y → End over simple; y fails while fail is set.
func inner(t *testing.T, xRuns *atomic.Int32, fail *atomic.Bool, opts ...CompileOption) *Compiled[simple] {
	return mustCompile(t, New[simple]().
		AddNode("x", func(ctx context.Context, s simple) (simple, error) {
			xRuns.Add(1)
			return inc("x")(ctx, s)
		}).
		AddNode("y", func(ctx context.Context, s simple) (simple, error) {
			if fail != nil && fail.Load() {
				return s, errors.New("y is broken")
			}
			return inc("y")(ctx, s)
		}).
		AddEdge(Start, "x").AddEdge("x", "y").AddEdge("y", End), opts...)
}

func outer(sub *Compiled[simple]) *Graph[simple] {
	return New[simple]().AddNode("a", inc("a")).AddSubgraph("sub", SubgraphOf(sub)).AddNode("b", inc("b")).
		AddEdge(Start, "a").AddEdge("a", "sub").AddEdge("sub", "b").AddEdge("b", End)
}

func TestSubgraphOfTheSameStateType(t *testing.T) {
	var x atomic.Int32
	c := mustCompile(t, outer(inner(t, &x, nil)))
	s, err := c.Run(context.Background(), "r", simple{})
	if err != nil || !slices.Equal(s.Log, []string{"a", "x", "y", "b"}) || s.N != 4 {
		t.Fatalf("Run without a checkpointer = %+v, %v", s, err)
	}
}

func TestFailureInsideASubgraphResumesInsideIt(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var x atomic.Int32
		var fail atomic.Bool
		fail.Store(true)
		c := mustCompile(t, outer(inner(t, &x, &fail)), WithCheckpointer(cp))
		_, err := c.Run(ctx, "r", simple{})
		var ne *NodeError
		if !errors.As(err, &ne) || ne.Node != "sub" || !strings.Contains(err.Error(), "y is broken") {
			t.Fatalf("Run: %v", err)
		}
		if snap, _ := c.State(ctx, "r"); snap.Status != StatusFailed || snap.Step != 1 {
			t.Fatalf("parent = %+v", snap)
		}
		if child, _ := c.State(ctx, "r/sub@2"); child.Status != StatusFailed || child.Step != 1 {
			t.Fatalf("subgraph run = %+v", child)
		}
		fail.Store(false)
		s, err := c.Resume(ctx, "r")
		if err != nil || !slices.Equal(s.Log, []string{"a", "x", "y", "b"}) || x.Load() != 1 {
			t.Fatalf("Resume = %+v, %v (x ran %d times)", s, err, x.Load())
		}
	})
}

// A subgraph's run that finished before the parent could commit its step
// (a crash in between) is not run again.
func TestAFinishedSubgraphRunIsNotRunAgain(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	var x atomic.Int32
	sub := inner(t, &x, nil)
	// The parent's store refuses the step that ran the subgraph: the step fails
	// after the subgraph's run is done and stored.
	store := &failingStore{Checkpointer: cp}
	c := mustCompile(t, outer(sub), WithCheckpointer(store), WithCheckedMetadata(func(_ context.Context, s simple) (map[string]string, error) {
		if slices.Contains(s.Log, "y") && store.failAt == 0 {
			return nil, errors.New("push refused")
		}
		return nil, nil
	}))
	if _, err := c.Run(ctx, "r", simple{}); err == nil || !strings.Contains(err.Error(), "push refused") {
		t.Fatalf("Run: %v", err)
	}
	store.failAt = -1 // let the metadata pass
	s, err := c.Resume(ctx, "r")
	if err != nil || !slices.Equal(s.Log, []string{"a", "x", "y", "b"}) || x.Load() != 1 {
		t.Fatalf("Resume = %+v, %v (x ran %d times)", s, err, x.Load())
	}
}

func TestParentStopCheckHaltsInsideTheSubgraph(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	var stop atomic.Bool
	sub := mustCompile(t, New[simple]().
		AddNode("x", func(ctx context.Context, s simple) (simple, error) {
			stop.Store(true) // a halt asked while the subgraph runs
			return inc("x")(ctx, s)
		}).AddNode("y", inc("y")).
		AddEdge(Start, "x").AddEdge("x", "y").AddEdge("y", End))
	c := mustCompile(t, outer(sub), WithCheckpointer(cp), WithStopCheck(func(string) bool { return stop.Load() }))
	_, err := c.Run(ctx, "r", simple{})
	if !errors.Is(err, ErrHalted) {
		t.Fatalf("Run: %v", err)
	}
	parent, _ := c.State(ctx, "r")
	child, _ := c.State(ctx, "r/sub@2")
	if parent.Status != StatusHalted || parent.Step != 1 || child.Status != StatusHalted || child.Step != 1 {
		t.Fatalf("parent %+v, subgraph %+v", parent, child)
	}
	stop.Store(false)
	s, err := c.Resume(ctx, "r")
	if err != nil || !slices.Equal(s.Log, []string{"a", "x", "y", "b"}) {
		t.Fatalf("Resume = %+v, %v", s, err)
	}
}

func TestSendToASubgraphGivesEachTaskItsOwnRun(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	var x atomic.Int32
	g := New[simple]().AddNode("a", inc("a")).AddSubgraph("sub", SubgraphOf(inner(t, &x, nil))).
		AddEdge(Start, "a").
		AddSend("a", func(s simple) []Send[simple] {
			return []Send[simple]{{Node: "sub", State: s}, {Node: "sub", State: s}}
		}, "sub").AddEdge("sub", End)
	c := mustCompile(t, g, WithCheckpointer(cp))
	s, err := c.Run(ctx, "r", simple{})
	if err != nil || !slices.Equal(s.Log, []string{"a", "x", "y", "x", "y"}) {
		t.Fatalf("Run = %+v, %v", s, err)
	}
	for _, id := range []string{"r/sub@2.0", "r/sub@2.1"} {
		if snap, err := c.State(ctx, id); err != nil || snap.Status != StatusDone {
			t.Errorf("%s: %+v, %v", id, snap, err)
		}
	}
	h, _ := c.History(ctx, "r")
	var ns []string
	for _, ci := range h {
		if ci.Namespace != "" && !slices.Contains(ns, ci.Namespace) {
			ns = append(ns, ci.Namespace)
		}
	}
	if !slices.Equal(ns, []string{"sub@2.0", "sub@2.1"}) {
		t.Fatalf("namespaces in the history: %v", ns)
	}
}

func TestNestedSubgraphPauseReachesTheTop(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var x atomic.Int32
		deep := inner(t, &x, nil, WithInterruptBefore("y"))
		mid := mustCompile(t, New[simple]().AddSubgraph("deep", SubgraphOf(deep)).AddEdge(Start, "deep").AddEdge("deep", End))
		c := mustCompile(t, outer(mid), WithCheckpointer(cp))
		_, err := c.Run(ctx, "r", simple{})
		if !errors.Is(err, ErrPaused) || !strings.Contains(err.Error(), "in subgraph sub: in subgraph deep: before y") {
			t.Fatalf("Run: %v", err)
		}
		if snap, _ := c.State(ctx, "r/sub@2/deep@1"); snap.Status != StatusPaused {
			t.Fatalf("the innermost run: %+v", snap)
		}
		h, _ := c.History(ctx, "r")
		if last := h[len(h)-1]; last.Namespace != "sub@2/deep@1" || last.Step != 1 {
			t.Fatalf("last checkpoint of the history: %+v", last)
		}
		s, err := c.Resume(ctx, "r")
		if err != nil || !slices.Equal(s.Log, []string{"a", "x", "y", "b"}) || x.Load() != 1 {
			t.Fatalf("Resume = %+v, %v", s, err)
		}
	})
}

func TestSubgraphNodeNamesAreRunIDParts(t *testing.T) {
	var x atomic.Int32
	_, err := New[simple]().AddSubgraph("has space", SubgraphOf(inner(t, &x, nil))).AddEdge(Start, "has space").AddEdge("has space", End).Compile()
	if err == nil || !strings.Contains(err.Error(), "names its runs") {
		t.Fatalf("Compile: %v", err)
	}
	_, err = New[simple]().AddSubgraph("s", SubgraphMap[simple, simple](nil, nil, nil)).Compile()
	if err == nil || !strings.Contains(err.Error(), "needs a compiled graph") {
		t.Fatalf("Compile: %v", err)
	}
}

func TestRunPaths(t *testing.T) {
	for id, want := range map[string]bool{
		"run-1": true, "run-1/sub@2": true, "run-1/sub@2.3/deep@1": true,
		"run-1/sub": false, "run-1/sub@x": false, "/sub@2": false, "run-1/.x@2": false, "a/../b": false,
	} {
		if ValidRunPath(id) != want {
			t.Errorf("ValidRunPath(%q) = %v", id, !want)
		}
	}
	if ValidRunID("run-1/sub@2") {
		t.Error("a subgraph's run path passes as a run id")
	}
	if got := SubgraphRunID("p", "review", 4, -1); got != "p/review@4" {
		t.Error(got)
	}
}

// A parent that paused before its subgraph node, then paused inside the
// subgraph, continues inside on Resume: it does not stop before the node again.
func TestApprovedSubgraphNodeIsNotAskedAgainAfterAPauseInside(t *testing.T) {
	ctx := context.Background()
	var x atomic.Int32
	c := mustCompile(t, outer(inner(t, &x, nil, WithInterruptBefore("y"))), WithCheckpointer(NewMemoryCheckpointer()),
		WithInterruptBefore("sub"))
	if _, err := c.Run(ctx, "r", simple{}); !errors.Is(err, ErrPaused) || !strings.Contains(err.Error(), "before sub") {
		t.Fatalf("Run: %v", err)
	}
	if _, err := c.Resume(ctx, "r"); !errors.Is(err, ErrPaused) || !strings.Contains(err.Error(), "in subgraph sub: before y") {
		t.Fatalf("first Resume: %v", err)
	}
	s, err := c.Resume(ctx, "r")
	if err != nil || !slices.Equal(s.Log, []string{"a", "x", "y", "b"}) {
		t.Fatalf("second Resume = %+v, %v: it must continue inside the subgraph", s, err)
	}
}

// An update of the parent while it is paused inside a subgraph keeps the
// subgraph's task: Resume continues the same subgraph run.
func TestAnUpdateWhilePausedInsideASubgraphContinuesIt(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var x atomic.Int32
		c := mustCompile(t, outer(inner(t, &x, nil, WithInterruptBefore("y"))), WithCheckpointer(cp))
		if _, err := c.Run(ctx, "r", simple{}); !errors.Is(err, ErrPaused) {
			t.Fatal(err)
		}
		note := func(s simple) (simple, error) { s.Log = append(s.Log, "note"); return s, nil }
		if _, err := c.Prune(ctx, "r", 1); err != nil { // a prune between the pause and the update
			t.Fatal(err)
		}
		s, err := c.Resume(ctx, "r", WithUpdate(note))
		// SubgraphOf: the subgraph started from the state before the note
		// and its final state is the node's result.
		if err != nil || x.Load() != 1 || !slices.Equal(s.Log, []string{"a", "x", "y", "b"}) {
			t.Fatalf("Resume with an update = %+v, %v (x ran %d times): the subgraph must continue", s, err, x.Load())
		}
		h, _ := c.History(ctx, "r")
		var ns []string
		for _, ci := range h {
			if ci.Namespace != "" && !slices.Contains(ns, ci.Namespace) {
				ns = append(ns, ci.Namespace)
			}
		}
		if !slices.Equal(ns, []string{"sub@2"}) {
			t.Fatalf("namespaces in the history: %v", ns)
		}
	})
}

// The kept task step survives a Prune down to one snapshot: after an update
// and a second pause inside the subgraph, Resume still continues it.
func TestAKeptTaskStepSurvivesAPrune(t *testing.T) {
	ctx := context.Background()
	var xRuns atomic.Int32
	sub := mustCompile(t, New[simple]().
		AddNode("x", func(ctx context.Context, s simple) (simple, error) { xRuns.Add(1); return inc("x")(ctx, s) }).
		AddNode("y", inc("y")).AddNode("z", inc("z")).
		AddEdge(Start, "x").AddEdge("x", "y").AddEdge("y", "z").AddEdge("z", End), WithInterruptBefore("y", "z"))
	c := mustCompile(t, outer(sub), WithCheckpointer(NewMemoryCheckpointer()))
	if _, err := c.Run(ctx, "r", simple{}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	_, err := c.Resume(ctx, "r", WithUpdate(func(s simple) (simple, error) { s.N += 100; return s, nil }))
	if !errors.Is(err, ErrPaused) || !strings.Contains(err.Error(), "before z") {
		t.Fatalf("Resume with an update: %v", err)
	}
	if _, err := c.Prune(ctx, "r", 1<<30); err != nil {
		t.Fatal(err)
	}
	s, err := c.Resume(ctx, "r")
	if err != nil || xRuns.Load() != 1 || !slices.Equal(s.Log, []string{"a", "x", "y", "z", "b"}) {
		t.Fatalf("Resume after the prune = %+v, %v (x ran %d times)", s, err, xRuns.Load())
	}
}
