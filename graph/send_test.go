package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

type mapState struct {
	Items  []int
	Item   int
	Sum    []int          `graph:"append"`
	Seen   map[string]int `graph:"merge"`
	Secret string
	Done   bool
}

// squares: Start → split ⇒ square × len(Items) → total → End.
func squares(calls *atomic.Int32) *Graph[mapState] {
	return New[mapState]().
		AddNode("split", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddNode("square", func(_ context.Context, s mapState) (mapState, error) {
			if calls != nil {
				calls.Add(1)
			}
			s.Sum = append(s.Sum, s.Item*s.Item)
			if s.Seen == nil {
				s.Seen = map[string]int{}
			}
			s.Seen[fmt.Sprint(s.Item)] = 1
			return s, nil
		}).
		AddNode("total", func(_ context.Context, s mapState) (mapState, error) { s.Done = true; return s, nil }).
		AddEdge(Start, "split").
		AddSend("split", func(s mapState) []Send[mapState] {
			out := make([]Send[mapState], 0, len(s.Items))
			for _, it := range s.Items {
				in := s
				in.Item = it
				out = append(out, Send[mapState]{Node: "square", State: in})
			}
			return out
		}, "square").
		AddEdge("square", "total").AddEdge("total", End)
}

func TestSendWithoutACheckpointer(t *testing.T) {
	c := mustCompile(t, squares(nil))
	s, err := c.Run(context.Background(), "r", mapState{Items: []int{1, 2, 3, 4}})
	if err != nil || !slices.Equal(s.Sum, []int{1, 4, 9, 16}) || len(s.Seen) != 4 || !s.Done || s.Item != 0 {
		t.Fatalf("Run = %+v, %v", s, err)
	}
}

func TestNoSendsEndsTheBranch(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		c := mustCompile(t, squares(nil), WithCheckpointer(cp))
		s, err := c.Run(context.Background(), "r", mapState{})
		if err != nil || s.Done {
			t.Fatalf("Run = %+v, %v: no Sends must end the run", s, err)
		}
		if snap, _ := c.State(context.Background(), "r"); snap.Status != StatusDone || snap.Step != 1 {
			t.Fatalf("State = %+v", snap)
		}
	})
}

func TestSendToAnUndeclaredNodeIsARouteError(t *testing.T) {
	g := New[mapState]().AddNode("a", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddNode("b", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddEdge(Start, "a").AddSend("a", func(s mapState) []Send[mapState] {
		return []Send[mapState]{{Node: "b", State: s}, {Node: "a", State: s}}
	}, "b").AddEdge("b", End)
	_, err := mustCompile(t, g).Run(context.Background(), "r", mapState{})
	var re *RouteError
	if !errors.As(err, &re) || re.Node != "a" || re.Destination != "a" || !slices.Equal(re.Declared, []string{"b"}) {
		t.Fatalf("err = %v", err)
	}
}

func TestCompileChecksSendTargets(t *testing.T) {
	g := New[mapState]().AddNode("a", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddEdge(Start, "a").AddEdge("a", End).
		AddSend("a", func(mapState) []Send[mapState] { return nil }, "mars", End).
		AddSend("nowhere", func(mapState) []Send[mapState] { return nil }, "a").
		AddSend("a", nil, "a")
	_, err := g.Compile()
	for _, want := range []string{`unknown target "mars"`, `unknown target "__end__"`, `AddSend from "nowhere": unknown node`, "nil fan-out"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile error %v lacks %q", err, want)
		}
	}
}

// The Send inputs of a paused step are stored: they survive the pause, a
// state update (they are what the router built) and a Prune down to one snapshot.
func TestSendInputsSurviveAPauseAnUpdateAndAPrune(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var calls atomic.Int32
		c := mustCompile(t, squares(&calls), WithCheckpointer(cp), WithInterruptBefore("square"))
		if _, err := c.Run(ctx, "r", mapState{Items: []int{2, 3}}); !errors.Is(err, ErrPaused) {
			t.Fatal(err)
		}
		snap, _ := c.State(ctx, "r")
		if !slices.Equal(snap.Next, []string{"square", "square"}) {
			t.Fatalf("Next = %v", snap.Next)
		}
		if _, err := c.Prune(ctx, "r", 1); err != nil {
			t.Fatal(err)
		}
		_, err := c.Resume(ctx, "r", WithUpdate(func(s mapState) (mapState, error) {
			s.Items = nil // the Sends were made already; they keep their inputs
			s.Sum = append(s.Sum, 100)
			return s, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := c.State(ctx, "r")
		if !slices.Equal(s.State.Sum, []int{100, 4, 9}) || !s.State.Done || calls.Load() != 2 {
			t.Fatalf("final = %+v (%d calls)", s.State, calls.Load())
		}
		h, _ := c.History(ctx, "r")
		if got := h[len(h)-2].Nodes; !slices.Equal(got, []string{"square[0]", "square[1]"}) {
			t.Errorf("nodes of the fan-out step = %v", got)
		}
	})
}

// Send inputs go through WithRedact like the state, and the task runs with
// the filtered input, as a resumed run would.
func TestSendInputsAreRedacted(t *testing.T) {
	ctx := context.Background()
	cp := NewMemoryCheckpointer()
	var got []string
	g := New[mapState]().AddNode("a", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddNode("b", func(_ context.Context, s mapState) (mapState, error) {
			got = append(got, s.Secret)
			return s, nil
		}).
		AddEdge(Start, "a").AddSend("a", func(s mapState) []Send[mapState] {
		s.Secret = "sk-123"
		return []Send[mapState]{{Node: "b", State: s}}
	}, "b").AddEdge("b", End)
	c := mustCompile(t, g, WithCheckpointer(cp), WithRedact(func(b []byte) []byte {
		return []byte(strings.ReplaceAll(string(b), "sk-123", "[redacted]"))
	}))
	if _, err := c.Run(ctx, "r", mapState{}); err != nil {
		t.Fatal(err)
	}
	recs, _ := cp.Records(ctx, "r")
	for _, r := range recs {
		if strings.Contains(string(r.Data), "sk-123") {
			t.Fatalf("the secret reached the store in a %d record", r.Kind)
		}
	}
	if !slices.Equal(got, []string{"[redacted]"}) {
		t.Fatalf("the task saw %v", got)
	}
}

func TestSendsAndEdgesInOneStep(t *testing.T) {
	c := mustCompile(t, New[mapState]().
		AddNode("a", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddNode("b", func(_ context.Context, s mapState) (mapState, error) {
			s.Sum = append(s.Sum, s.Item)
			return s, nil
		}).
		AddEdge(Start, "a").AddEdge("a", "b").
		AddSend("a", func(s mapState) []Send[mapState] {
			return []Send[mapState]{{Node: "b", State: mapState{Item: 7}}, {Node: "b", State: mapState{Item: 8}}}
		}, "b").
		AddEdge("b", End), WithCheckpointer(NewMemoryCheckpointer()))
	// The Sends' inputs have no Sum: each task's new elements are counted
	// from its own input, not from the step's state.
	s, err := c.Run(context.Background(), "r", mapState{Item: 1, Sum: []int{5}})
	if err != nil || !slices.Equal(s.Sum, []int{5, 1, 7, 8}) {
		t.Fatalf("Run = %+v, %v: the node reached by its edge first, then the Sends in order", s, err)
	}
}

func TestMermaidShowsSendsAndSubgraphs(t *testing.T) {
	sub := mustCompile(t, line("x"))
	g := squares(nil).AddSubgraph("inner", SubgraphOf(mustCompile(t, New[mapState]().
		AddNode("y", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddEdge(Start, "y").AddEdge("y", End)))).AddEdge("total", "inner").AddEdge("inner", End)
	_ = sub
	m := mustCompile(t, g).Mermaid()
	if !strings.Contains(m, `n_split == "send" ==> n_square;`) || !strings.Contains(m, `n_inner[["inner"]]`) {
		t.Fatalf("Mermaid:\n%s", m)
	}
}

// Two Send inputs rebuilt from one stored state must not share its arrays:
// each appended its own element to Sum, and each task sees its own.
func TestSendInputsRebuiltFromTheStoreAreSeparate(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var seen [][]int
	g := New[mapState]().
		AddNode("split", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddNode("echo", func(_ context.Context, s mapState) (mapState, error) {
			mu.Lock()
			seen = append(seen, slices.Clone(s.Sum))
			mu.Unlock()
			return s, nil
		}).
		AddEdge(Start, "split").
		AddSend("split", func(s mapState) []Send[mapState] {
			var out []Send[mapState]
			for _, k := range []int{10, 20} {
				in := s
				in.Sum = append(slices.Clip(s.Sum), k)
				out = append(out, Send[mapState]{Node: "echo", State: in})
			}
			return out
		}, "echo").AddEdge("echo", End)
	c := mustCompile(t, g, WithCheckpointer(NewMemoryCheckpointer()), WithInterruptBefore("echo"),
		WithMerge(func(base mapState, _ []string, _ []mapState) (mapState, error) { return base, nil }))
	// The first snapshot decodes Sum with spare capacity (encoding/json grows arrays).
	if _, err := c.Run(ctx, "r", mapState{Sum: []int{1, 2, 3}}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(seen, slices.Compare)
	if len(seen) != 2 || !slices.Equal(seen[0], []int{1, 2, 3, 10}) || !slices.Equal(seen[1], []int{1, 2, 3, 20}) {
		t.Fatalf("the tasks saw %v", seen)
	}
}
