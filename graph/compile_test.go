package graph

import (
	"context"
	"strings"
	"testing"
)

type simple struct {
	N   int
	Log []string `graph:"append"`
}

func inc(name string) NodeFunc[simple] {
	return func(_ context.Context, s simple) (simple, error) {
		s.N++
		s.Log = append(s.Log, name)
		return s, nil
	}
}

func TestCompileRefusesBrokenGraphs(t *testing.T) {
	ok := func(_ context.Context, s simple) (simple, error) { return s, nil }
	route := func(simple) string { return "a" }
	cases := []struct {
		name  string
		build func() *Graph[simple]
		opts  []CompileOption
		want  []string
	}{
		{"an edge to an unknown node is named", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddEdge(Start, "a").AddEdge("a", "ghost")
		}, nil, []string{`unknown node "ghost"`}},
		{"an edge from an unknown node is named", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddEdge(Start, "a").AddEdge("a", End).AddEdge("nope", "a")
		}, nil, []string{`unknown node "nope"`}},
		{"a node unreachable from Start is named", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddNode("island", ok).AddEdge(Start, "a").AddEdge("a", End).AddEdge("island", End)
		}, nil, []string{"not reachable from Start: island"}},
		{"a node with no way out is named", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddNode("b", ok).AddEdge(Start, "a").AddEdge("a", "b").AddEdge("a", End)
		}, nil, []string{"no outgoing edge", "b"}},
		{"a loop with no exit is named", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddNode("b", ok).AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", "a")
		}, nil, []string{"no path to End", "a, b"}},
		{"duplicate names are refused", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddNode("a", ok).AddEdge(Start, "a").AddEdge("a", End)
		}, nil, []string{`duplicate node name "a"`}},
		{"a missing entry is refused", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddEdge("a", End)
		}, nil, []string{"missing entry"}},
		{"reserved names are refused", func() *Graph[simple] {
			return New[simple]().AddNode(End, ok).AddNode("a", ok).AddEdge(Start, "a").AddEdge("a", End)
		}, nil, []string{`"__end__" is a reserved name`}},
		{"a router's unknown destination is named", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddEdge(Start, "a").AddConditionalEdges("a", route, "a", "elsewhere", End)
		}, nil, []string{`unknown destination "elsewhere"`}},
		{"an interrupt on an unknown node is named", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddEdge(Start, "a").AddEdge("a", End)
		}, []CompileOption{WithInterruptBefore("zzz")}, []string{`WithInterruptBefore: unknown node "zzz"`}},
		{"metadata over another state type is refused", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddEdge(Start, "a").AddEdge("a", End)
		}, []CompileOption{WithMetadata(func(context.Context, int) map[string]string { return nil })}, []string{"WithMetadata", "graph.simple"}},
		{"every problem is reported at once", func() *Graph[simple] {
			return New[simple]().AddNode("a", ok).AddNode("a", ok).AddEdge(Start, "a").AddEdge("a", "x")
		}, nil, []string{"duplicate", `unknown node "x"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.build().Compile(tc.opts...)
			if err == nil {
				t.Fatal("Compile accepted a broken graph")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

type badUnexported struct {
	Name   string
	secret string
}
type badFunc struct {
	Callback func()
}
type badChan struct{ C chan int }
type badAny struct{ V any }
type nestedBad struct {
	Items []struct {
		OK     int
		hidden string
	}
}
type badTag struct {
	N int `graph:"append"`
}
type okState struct {
	When     struct{ A, B int }
	Skipped  func()            `json:"-"`
	private  chan int          `json:"-"`
	Raw      []byte            `json:"raw"`
	Counts   map[string]int    `graph:"merge"`
	ByID     map[int]string    `graph:"merge"`
	Notes    []string          `graph:"append"`
	Messages map[string][]byte `json:"m,omitempty"`
}

func compileState[S any](t *testing.T) error {
	t.Helper()
	_, err := New[S]().
		AddNode("a", func(_ context.Context, s S) (S, error) { return s, nil }).
		AddEdge(Start, "a").AddEdge("a", End).Compile()
	return err
}

func TestCompileValidatesTheStateType(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"an unexported field is named", compileState[badUnexported](t), "field secret"},
		{"a func field is named", compileState[badFunc](t), "field badFunc.Callback: type func()"},
		{"a chan field is named", compileState[badChan](t), "badChan.C: type chan int"},
		{"an interface field is named", compileState[badAny](t), "badAny.V: interface type"},
		{"a nested unexported field is named", compileState[nestedBad](t), "Items[].hidden is unexported"},
		{"an append tag on a non-slice is refused", compileState[badTag](t), `graph:"append" needs a slice`},
		{"a non-struct state is refused", compileState[int](t), "must be a struct"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
				t.Fatalf("error %v does not mention %q", tc.err, tc.want)
			}
		})
	}
	if err := compileState[okState](t); err != nil {
		t.Fatalf("a valid state (json:\"-\" fields, maps, time-like structs) was refused: %v", err)
	}
}

func TestMermaidDrawsEdgesAndLabels(t *testing.T) {
	g := New[simple]().
		AddNode("plan", inc("plan")).AddNode("do it", inc("do")).AddNode("check", inc("check")).
		AddEdge(Start, "plan").AddEdge("plan", "do it").AddEdge("do it", "check").
		AddConditionalEdgesMap("check", func(s simple) string {
			if s.N > 3 {
				return "pass"
			}
			return "fail"
		}, map[string]string{"pass": End, "fail": "plan"})
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	m := c.Mermaid()
	for _, want := range []string{
		"graph TD;",
		"__start__ --> n_plan;",
		`n_do_20_it["do it"]`,
		`n_check -. "fail" .-> n_plan;`,
		`n_check -. "pass" .-> __end__;`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("Mermaid lacks %q:\n%s", want, m)
		}
	}
	s, err := c.Run(context.Background(), "m", simple{})
	if err != nil || s.N != 6 {
		t.Fatalf("labelled router: N=%d err=%v", s.N, err)
	}
}
