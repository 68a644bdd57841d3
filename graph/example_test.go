package graph_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/lemmings-dev/lemmings/graph"
)

// Draft is the state of a small review loop.
type Draft struct {
	Text     string
	Rounds   int
	Comments []string `graph:"append"`
}

func Example() {
	dir, _ := os.MkdirTemp("", "graph-example")
	defer os.RemoveAll(dir)
	store, err := graph.NewFileCheckpointer(dir)
	if err != nil {
		fmt.Println(err)
		return
	}

	g := graph.New[Draft]().
		AddNode("write", func(ctx context.Context, d Draft) (Draft, error) {
			d.Text += "!"
			d.Rounds++
			return d, nil
		}).
		AddNode("review", func(ctx context.Context, d Draft) (Draft, error) {
			d.Comments = append(d.Comments, fmt.Sprintf("round %d: %q", d.Rounds, d.Text))
			return d, nil
		}).
		AddEdge(graph.Start, "write").
		AddEdge("write", "review").
		AddConditionalEdges("review", func(d Draft) string {
			if d.Rounds < 3 {
				return "write"
			}
			return graph.End
		}, "write", graph.End)

	app, err := g.Compile(graph.WithCheckpointer(store), graph.WithInterruptBefore("review"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	_, err = app.Run(ctx, "demo", Draft{Text: "hello"})
	fmt.Println("paused:", errors.Is(err, graph.ErrPaused))

	// A person approves; the run continues from its checkpoint, even in another process.
	for errors.Is(err, graph.ErrPaused) {
		_, err = app.Resume(ctx, "demo")
	}
	snap, _ := app.State(ctx, "demo")
	fmt.Println(snap.Status, snap.Step, snap.State.Text)
	for _, c := range snap.State.Comments {
		fmt.Println(c)
	}
	_, err = app.Resume(ctx, "demo")
	fmt.Println(errors.Is(err, graph.ErrRunFinished))
	// Output:
	// paused: true
	// done 6 hello!!!
	// round 1: "hello!"
	// round 2: "hello!!"
	// round 3: "hello!!!"
	// true
}
