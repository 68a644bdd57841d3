package graph

import (
	"context"
	"sync"
	"testing"
)

func TestNodeOfNamesTheNodeAndStepInsideNodesOnly(t *testing.T) {
	type where struct {
		node string
		step int
		ok   bool
	}
	var mu sync.Mutex
	var seen []where
	record := func(ctx context.Context) {
		n, s, ok := NodeOf(ctx)
		mu.Lock()
		seen = append(seen, where{n, s, ok})
		mu.Unlock()
	}
	g := New[simple]().
		AddNode("a", func(ctx context.Context, s simple) (simple, error) {
			record(ctx)
			derived, cancel := context.WithCancel(ctx)
			defer cancel()
			record(derived) // work started from the node's context is still the node's
			return s, nil
		}).
		AddNode("b", func(ctx context.Context, s simple) (simple, error) { record(ctx); return s, nil }).
		AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", End)
	c := mustCompile(t, g, WithSinks(SinkFunc(func(Event) {})))
	if _, err := c.Run(context.Background(), "r", simple{}); err != nil {
		t.Fatal(err)
	}
	want := []where{{"a", 1, true}, {"a", 1, true}, {"b", 2, true}}
	if len(seen) != len(want) {
		t.Fatalf("seen %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("call %d: %+v, want %+v", i, seen[i], want[i])
		}
	}
	if n, s, ok := NodeOf(context.Background()); ok || n != "" || s != 0 {
		t.Errorf("outside a node: %q %d %v", n, s, ok)
	}
}
