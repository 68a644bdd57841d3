package graph_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
)

// Plan is the state of the time-travel examples.
type Plan struct {
	Goal    string
	Files   []string
	File    string   // one review task's input
	Reviews []string `graph:"append"`
	Verdict string
}

func ExampleCompiled_Fork() {
	store := graph.NewMemoryCheckpointer()
	g := graph.New[Plan]().
		AddNode("plan", func(_ context.Context, p Plan) (Plan, error) {
			p.Files = []string{"main.go"}
			return p, nil
		}).
		AddNode("quick", func(_ context.Context, p Plan) (Plan, error) { p.Verdict = "shipped quickly"; return p, nil }).
		AddNode("careful", func(_ context.Context, p Plan) (Plan, error) { p.Verdict = "shipped carefully"; return p, nil }).
		AddEdge(graph.Start, "plan").
		AddConditionalEdges("plan", func(p Plan) string {
			if len(p.Files) > 1 {
				return "careful"
			}
			return "quick"
		}, "quick", "careful").
		AddEdge("quick", graph.End).AddEdge("careful", graph.End)
	app, _ := g.Compile(graph.WithCheckpointer(store))
	ctx := context.Background()
	p, _ := app.Run(ctx, "r1", Plan{Goal: "add --json"})
	fmt.Println("r1:", p.Verdict)

	// Open step 1 of r1 as a new run, with the plan edited as if "plan" had
	// returned it: plan's router picks the next node from the edited state.
	snap, _ := app.Fork(ctx, "r1", 1, "r2", graph.WithUpdate(func(p Plan) (Plan, error) {
		p.Files = append(p.Files, "json.go")
		return p, nil
	}), graph.AsNode("plan"))
	from, step, _ := graph.ForkOrigin(snap.Metadata)
	fmt.Println("r2:", snap.Status, snap.Next, "forked from", from, "at", step)
	p, _ = app.Resume(ctx, "r2")
	fmt.Println("r2:", p.Verdict)
	// Output:
	// r1: shipped quickly
	// r2: paused [careful] forked from r1 at 1
	// r2: shipped carefully
}

func ExampleGraph_AddSend() {
	g := graph.New[Plan]().
		AddNode("plan", func(_ context.Context, p Plan) (Plan, error) {
			p.Files = []string{"a.go", "b.go", "c.go"}
			return p, nil
		}).
		AddNode("review", func(_ context.Context, p Plan) (Plan, error) {
			p.Reviews = append(p.Reviews, "reviewed "+p.File)
			return p, nil
		}).
		AddNode("judge", func(_ context.Context, p Plan) (Plan, error) {
			p.Verdict = strings.Join(p.Reviews, "; ")
			return p, nil
		}).
		AddEdge(graph.Start, "plan").
		// One review task per file, each with the file as its input; their
		// new Reviews are joined in Send order.
		AddSend("plan", func(p Plan) []graph.Send[Plan] {
			var out []graph.Send[Plan]
			for _, f := range p.Files {
				in := p
				in.File = f
				out = append(out, graph.Send[Plan]{Node: "review", State: in})
			}
			return out
		}, "review").
		AddEdge("review", "judge").AddEdge("judge", graph.End)
	app, _ := g.Compile(graph.WithCheckpointer(graph.NewMemoryCheckpointer()))
	p, _ := app.Run(context.Background(), "r", Plan{})
	fmt.Println(p.Verdict)
	// Output:
	// reviewed a.go; reviewed b.go; reviewed c.go
}

// QA is the state of a subgraph.
type QA struct {
	Diff   string
	Passed bool
}

func ExampleSubgraphMap() {
	qa, _ := graph.New[QA]().
		AddNode("test", func(_ context.Context, q QA) (QA, error) { return q, nil }).
		AddNode("approve", func(_ context.Context, q QA) (QA, error) { q.Passed = true; return q, nil }).
		AddEdge(graph.Start, "test").AddEdge("test", "approve").AddEdge("approve", graph.End).
		Compile(graph.WithInterruptBefore("approve")) // a person approves inside the subgraph
	g := graph.New[Plan]().
		AddSubgraph("qa", graph.SubgraphMap(qa,
			func(p Plan) QA { return QA{Diff: p.Goal} },
			func(p Plan, q QA) Plan {
				if q.Passed {
					p.Verdict = "passed"
				}
				return p
			})).
		AddEdge(graph.Start, "qa").AddEdge("qa", graph.End)
	app, _ := g.Compile(graph.WithCheckpointer(graph.NewMemoryCheckpointer()))
	ctx := context.Background()
	_, err := app.Run(ctx, "r", Plan{Goal: "add --json"})
	fmt.Println(errors.Is(err, graph.ErrPaused), err)
	p, _ := app.Resume(ctx, "r") // continues inside the subgraph
	fmt.Println(p.Verdict)
	hist, _ := app.History(ctx, "r")
	for _, h := range hist {
		fmt.Printf("%q step %d %v\n", h.Namespace, h.Step, h.Nodes)
	}
	// Output:
	// true graph: run r at step 0 (in subgraph qa: before approve): graph: run paused
	// passed
	// "" step 0 [__start__]
	// "qa@1" step 0 [__start__]
	// "qa@1" step 1 [test]
	// "qa@1" step 2 [approve]
	// "" step 1 [qa]
}
