package graph_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
)

// A reader given the state type alone sees what the compiled graph that
// wrote the run sees: its latest state, every checkpoint, the run list.
func TestAReaderOpensARunWithoutTheGraph(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := graph.NewFileCheckpointer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	app, err := counter(3).Compile(graph.WithCheckpointer(store), graph.WithInterruptBefore("count"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Run(ctx, "r1", Count{}); !errors.Is(err, graph.ErrPaused) {
		t.Fatalf("run: %v", err)
	}
	for _, err = app.Resume(ctx, "r1"); errors.Is(err, graph.ErrPaused); _, err = app.Resume(ctx, "r1") {
	}
	if err != nil {
		t.Fatal(err)
	}

	rd, err := graph.NewReader[Count](store)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := app.State(ctx, "r1")
	got, err := rd.State(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || got.State.N != 3 || got.Status != graph.StatusDone {
		t.Errorf("reader's state %+v, the graph's %+v", got, want)
	}
	wantHist, _ := app.History(ctx, "r1")
	hist, err := rd.History(ctx, "r1")
	if err != nil || fmt.Sprint(hist) != fmt.Sprint(wantHist) {
		t.Errorf("history %v (%v), the graph's %v", hist, err, wantHist)
	}
	if s, err := rd.StateAt(ctx, "r1", 1); err != nil || s.N != 1 {
		t.Errorf("state at step 1: %+v %v", s, err)
	}
	runs, err := rd.ListRuns(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != "r1" || runs[0].Status != graph.StatusDone {
		t.Errorf("runs %+v %v", runs, err)
	}
	if err := rd.DeleteRun(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if runs, _ := rd.ListRuns(ctx); len(runs) != 0 {
		t.Errorf("deleted run still listed: %+v", runs)
	}
}

func TestAReaderRefusesAStateItCannotCheckpoint(t *testing.T) {
	t.Parallel()
	store := graph.NewMemoryCheckpointer()
	if _, err := graph.NewReader[struct{ F func() }](store); err == nil {
		t.Error("a state with a func field was accepted")
	}
	if _, err := graph.NewReader[Count](nil); !errors.Is(err, graph.ErrNoCheckpointer) {
		t.Errorf("no checkpointer: %v", err)
	}
}

// Count is a state counted up to a limit, one node per step.
type Count struct{ N int }

func counter(limit int) *graph.Graph[Count] {
	return graph.New[Count]().
		AddNode("count", func(ctx context.Context, c Count) (Count, error) { c.N++; return c, nil }).
		AddEdge(graph.Start, "count").
		AddConditionalEdges("count", func(c Count) string {
			if c.N < limit {
				return "count"
			}
			return graph.End
		}, "count", graph.End)
}

func ExampleReader() {
	dir, _ := os.MkdirTemp("", "graph-reader")
	defer os.RemoveAll(dir)
	store, _ := graph.NewFileCheckpointer(dir)
	app, _ := counter(2).Compile(graph.WithCheckpointer(store))
	_, _ = app.Run(context.Background(), "r1", Count{})

	// Elsewhere (a status page, another process): the state type is enough.
	rd, err := graph.NewReader[Count](store)
	if err != nil {
		fmt.Println(err)
		return
	}
	snap, _ := rd.State(context.Background(), "r1")
	fmt.Println(snap.Status, snap.State.N)
	// Output: done 2
}
