package nodes

import (
	"context"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Build wires the workflow graph: its nodes, and the routing functions that
// choose each conditional edge. `lemmings graph` prints the edges from this
// code; docs/architecture.md "The workflow graph" says why they are so.
//
// Every node works on a copy of the state; the hooks (hooks.go: the
// supervisors' bookkeeping, the caller's Deps.Hooks) run around every node,
// registered once here.
func Build(d *Deps) *graph.Graph[runstate.State] {
	set := d.Settings
	g := graph.New[runstate.State]()
	hooks := d.hooks()
	node := func(name string, fn graph.NodeFunc[runstate.State], opts ...graph.NodeOption) {
		g.AddNode(name, around(name, hooks, fn), opts...)
	}
	node(runstate.NodeScope, d.ScopeAgent)
	node(runstate.NodePlanner, d.TaskPlanner, graph.WithSideEffects())
	node(runstate.NodeImplementor, d.Implementor, graph.WithSideEffects())
	node(runstate.NodeQA, d.QA)
	node(runstate.NodeComplete, d.MarkComplete, graph.WithSideEffects())
	node(runstate.NodeFailed, d.MarkFailed, graph.WithSideEffects())
	node(runstate.NodeSupervisors, func(ctx context.Context, s runstate.State) (runstate.State, error) {
		return d.supervisors().Run(ctx, s)
	}, graph.WithSideEffects())
	node(runstate.NodeAssessor, d.Assessor)
	node(runstate.NodePolish, d.Polish, graph.WithSideEffects())
	node(runstate.NodeReport, d.Report)

	g.AddEdge(graph.Start, runstate.NodeScope)
	g.AddConditionalEdges(runstate.NodeScope, func(s runstate.State) string { return routeAfterScope(s, set) },
		runstate.NodePlanner, runstate.NodeSupervisors, runstate.NodeReport)
	g.AddConditionalEdges(runstate.NodePlanner, func(s runstate.State) string { return routeAfterPlanner(s, set) },
		runstate.NodeImplementor, runstate.NodeComplete, runstate.NodeFailed, runstate.NodeAssessor, runstate.NodeSupervisors, runstate.NodePolish, runstate.NodeScope, runstate.NodeReport)
	g.AddConditionalEdges(runstate.NodeImplementor, func(s runstate.State) string { return routeAfterImplementor(s, set.MaxRetries) },
		runstate.NodeQA, runstate.NodePlanner, runstate.NodeFailed)
	g.AddConditionalEdges(runstate.NodeQA, func(s runstate.State) string { return routeAfterQA(s, set.MaxRetries) },
		runstate.NodeComplete, runstate.NodePlanner, runstate.NodeFailed)
	g.AddConditionalEdges(runstate.NodeComplete, func(s runstate.State) string { return routeAfterComplete(s, set) },
		runstate.NodeSupervisors, runstate.NodeAssessor, runstate.NodePlanner)
	g.AddConditionalEdges(runstate.NodeFailed, func(s runstate.State) string { return routeAfterFailed(s, set) },
		runstate.NodeSupervisors, runstate.NodeAssessor)
	g.AddConditionalEdges(runstate.NodeSupervisors, routeAfterSupervisors, runstate.NodeAssessor, runstate.NodePlanner)
	g.AddConditionalEdges(runstate.NodeAssessor, func(s runstate.State) string { return routeAfterAssessor(s, set) },
		runstate.NodePlanner, runstate.NodeScope, runstate.NodePolish)
	g.AddConditionalEdges(runstate.NodePolish, routeAfterPolish, runstate.NodePlanner, runstate.NodeReport)
	g.AddEdge(runstate.NodeReport, graph.End)
	return g
}
