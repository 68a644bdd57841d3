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

type teamState struct {
	Topic    string
	Notes    []string       `graph:"append"`
	Scores   map[string]int `graph:"merge"`
	Verdict  string
	Internal string `json:"-"`
}

// team: Start → lead → {style, design, lessons} → judge → End
func team(calls *sync.Map, fail *atomic.Bool) *Graph[teamState] {
	member := func(name string, score int) NodeFunc[teamState] {
		return func(ctx context.Context, s teamState) (teamState, error) {
			n, _ := calls.LoadOrStore(name, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			Emit(ctx, "thinking", map[string]string{"who": name})
			if name == "design" && fail != nil && fail.Load() {
				return s, errors.New("design model unavailable")
			}
			s.Notes = append(s.Notes, name+" on "+s.Topic)
			if s.Scores == nil {
				s.Scores = map[string]int{}
			}
			s.Scores[name] = score
			return s, nil
		}
	}
	return New[teamState]().
		AddNode("lead", func(_ context.Context, s teamState) (teamState, error) {
			s.Topic = "api"
			s.Scores = map[string]int{"lead": 1}
			return s, nil
		}).
		AddNode("style", member("style", 3)).
		AddNode("design", member("design", 5)).
		AddNode("lessons", member("lessons", 2)).
		AddNode("judge", func(_ context.Context, s teamState) (teamState, error) {
			total := 0
			for _, v := range s.Scores {
				total += v
			}
			s.Verdict = fmt.Sprintf("%d notes, score %d", len(s.Notes), total)
			return s, nil
		}).
		AddEdge(Start, "lead").
		AddEdge("lead", "style").AddEdge("lead", "design").AddEdge("lead", "lessons").
		AddEdge("style", "judge").AddEdge("design", "judge").AddEdge("lessons", "judge").
		AddEdge("judge", End)
}

func TestFanOutJoinsWithReducers(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		var calls sync.Map
		var mu sync.Mutex
		var custom []Event
		sink := SinkFunc(func(e Event) {
			if e.Kind == EventCustom {
				mu.Lock()
				custom = append(custom, e)
				mu.Unlock()
			}
		})
		c := mustCompile(t, team(&calls, nil), WithCheckpointer(cp), WithSinks(sink))
		s, err := c.Run(context.Background(), "t", teamState{})
		if err != nil {
			t.Fatal(err)
		}
		// Node order (declaration order) decides the append order, not timing.
		if !slices.Equal(s.Notes, []string{"style on api", "design on api", "lessons on api"}) {
			t.Errorf("Notes = %v", s.Notes)
		}
		if fmt.Sprint(s.Scores) != "map[design:5 lead:1 lessons:2 style:3]" || s.Verdict != "3 notes, score 11" {
			t.Errorf("Scores = %v, Verdict = %q", s.Scores, s.Verdict)
		}
		if len(custom) != 3 {
			t.Fatalf("custom events from branches: %+v", custom)
		}
		for _, e := range custom {
			if e.Name != "thinking" || e.Step != 2 || !strings.Contains(string(e.Data), e.Node) {
				t.Errorf("custom event %+v", e)
			}
		}
		h, _ := c.History(context.Background(), "t")
		if len(h) != 4 || strings.Join(h[2].Nodes, ",") != "style,design,lessons" || !slices.Equal(h[2].Next, []string{"judge"}) {
			t.Errorf("history: %+v", h)
		}
		st, _ := c.State(context.Background(), "t")
		if !slices.Equal(st.State.Notes, s.Notes) || st.State.Verdict != s.Verdict {
			t.Errorf("stored state %+v differs from the result %+v", st.State, s)
		}
	})
}

func TestFanOutFailureRerunsOnlyTheFailedBranch(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var calls sync.Map
		var fail atomic.Bool
		fail.Store(true)
		c := mustCompile(t, team(&calls, &fail), WithCheckpointer(cp))
		_, err := c.Run(ctx, "f", teamState{})
		var ne *NodeError
		if !errors.As(err, &ne) || ne.Node != "design" {
			t.Fatalf("err = %v", err)
		}
		snap, _ := c.State(ctx, "f")
		if snap.Status != StatusFailed || snap.Step != 1 || !slices.Equal(snap.Pending, []string{"lessons", "style"}) {
			t.Fatalf("State = %+v", snap)
		}
		if runs, _ := c.ListRuns(ctx); len(runs) != 1 || runs[0].Status != StatusFailed || runs[0].Step != 1 {
			t.Fatalf("ListRuns = %+v", runs)
		}
		fail.Store(false)
		s, err := c.Resume(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]int32{"style": 1, "lessons": 1, "design": 2} {
			n, _ := calls.Load(name)
			if got := n.(*atomic.Int32).Load(); got != want {
				t.Errorf("%s ran %d times, want %d", name, got, want)
			}
		}
		if !slices.Equal(s.Notes, []string{"style on api", "design on api", "lessons on api"}) || s.Verdict != "3 notes, score 11" {
			t.Errorf("final = %+v", s)
		}
	})
}

func TestFanOutConflictsAreErrors(t *testing.T) {
	type st struct {
		Owner string
		Tags  []string       `graph:"append"`
		M     map[string]int `graph:"merge"`
	}
	build := func(a, b NodeFunc[st]) *Graph[st] {
		return New[st]().AddNode("a", a).AddNode("b", b).AddNode("fork", func(_ context.Context, s st) (st, error) {
			s.Tags = append(s.Tags, "base")
			s.M = map[string]int{"k": 1}
			return s, nil
		}).
			AddEdge(Start, "fork").AddEdge("fork", "a").AddEdge("fork", "b").AddEdge("a", End).AddEdge("b", End)
	}
	set := func(v string) NodeFunc[st] {
		return func(_ context.Context, s st) (st, error) { s.Owner = v; return s, nil }
	}
	cases := []struct {
		name string
		a, b NodeFunc[st]
		want string
	}{
		{"two branches setting one plain field differently", set("x"), set("y"), "field Owner written by a, b"},
		{"a branch rewriting an append field", set(""), func(_ context.Context, s st) (st, error) {
			s.Tags = []string{"replaced"}
			return s, nil
		}, "changed or removed existing elements"},
		{"two branches setting one map key differently",
			func(_ context.Context, s st) (st, error) { s.M = map[string]int{"k": 2}; return s, nil },
			func(_ context.Context, s st) (st, error) { s.M = map[string]int{"k": 3}; return s, nil },
			"key k set differently"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCompile(t, build(tc.a, tc.b))
			_, err := c.Run(context.Background(), "x", st{})
			var me *MergeError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	// The same value from both, and disjoint map keys, join fine.
	c := mustCompile(t, build(
		func(_ context.Context, s st) (st, error) {
			s.Owner = "same"
			s.M["a"] = 1
			delete(s.M, "k")
			return s, nil
		},
		func(_ context.Context, s st) (st, error) {
			s.Owner = "same"
			s.M = map[string]int{"k": 1, "b": 2}
			return s, nil
		}))
	s, err := c.Run(context.Background(), "y", st{})
	if err != nil || s.Owner != "same" || fmt.Sprint(s.M) != "map[a:1 b:2]" {
		t.Fatalf("join = %+v, %v", s, err)
	}
}

func TestWithMergeReplacesReducers(t *testing.T) {
	c := mustCompile(t, team(&sync.Map{}, nil), WithMerge(func(base teamState, nodes []string, outs []teamState) (teamState, error) {
		base.Verdict = strings.Join(nodes, "|")
		base.Topic = outs[0].Topic
		return base, nil
	}))
	s, err := c.Run(context.Background(), "m", teamState{})
	if err != nil || len(s.Notes) != 0 || !strings.HasPrefix(s.Verdict, "0 notes") {
		t.Fatalf("merge = %+v, %v", s, err)
	}
}

func TestBranchesDoNotShareAppendArrays(t *testing.T) {
	// A base slice with spare capacity must not let two branches write the same slot.
	type st struct {
		L []int `graph:"append"`
	}
	add := func(v int) NodeFunc[st] {
		return func(_ context.Context, s st) (st, error) { s.L = append(s.L, v); return s, nil }
	}
	c := mustCompile(t, New[st]().
		AddNode("fork", func(_ context.Context, s st) (st, error) {
			s.L = make([]int, 1, 16)
			return s, nil
		}).AddNode("a", add(1)).AddNode("b", add(2)).
		AddEdge(Start, "fork").AddEdge("fork", "a").AddEdge("fork", "b").AddEdge("a", End).AddEdge("b", End))
	for i := 0; i < 20; i++ {
		s, err := c.Run(context.Background(), "x", st{})
		if err != nil || !slices.Equal(s.L, []int{0, 1, 2}) {
			t.Fatalf("L = %v, %v", s.L, err)
		}
	}
}
