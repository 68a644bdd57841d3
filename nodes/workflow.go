package nodes

import (
	"context"

	"github.com/lemmings-dev/lemmings/graph"
)

// Build wires the workflow graph: its nodes, and the routing functions that
// choose each conditional edge. `lemmings graph` prints the edges from this
// code; docs/architecture.md "The workflow graph" says why they are so.
//
// Every node works on a copy of the state; the hooks (hooks.go: the
// supervisors' bookkeeping, the caller's Deps.Hooks) run around every node,
// registered once here.
func Build(d *Deps) *graph.Graph[WorkflowState] {
	set := d.Settings
	g := graph.New[WorkflowState]()
	hooks := d.hooks()
	node := func(name string, fn graph.NodeFunc[WorkflowState], opts ...graph.NodeOption) {
		g.AddNode(name, around(name, hooks, fn), opts...)
	}
	node(NodeScope, d.ScopeAgent)
	node(NodePlanner, d.TaskPlanner, graph.WithSideEffects())
	node(NodeImplementor, d.Implementor, graph.WithSideEffects())
	node(NodeQA, d.QA)
	node(NodeComplete, d.MarkComplete, graph.WithSideEffects())
	node(NodeFailed, d.MarkFailed, graph.WithSideEffects())
	node(NodeSupervisors, func(ctx context.Context, s WorkflowState) (WorkflowState, error) { return d.supervisors().Run(ctx, s) }, graph.WithSideEffects())
	node(NodeAssessor, d.Assessor)
	node(NodePolish, d.Polish, graph.WithSideEffects())
	node(NodeReport, d.Report)

	g.AddEdge(graph.Start, NodeScope)
	g.AddConditionalEdges(NodeScope, func(s WorkflowState) string { return routeAfterScope(s, set) },
		NodePlanner, NodeSupervisors, NodeReport)
	g.AddConditionalEdges(NodePlanner, func(s WorkflowState) string { return routeAfterPlanner(s, set) },
		NodeImplementor, NodeComplete, NodeFailed, NodeAssessor, NodeSupervisors, NodePolish, NodeScope, NodeReport)
	g.AddConditionalEdges(NodeImplementor, func(s WorkflowState) string { return routeAfterImplementor(s, set.MaxRetries) },
		NodeQA, NodePlanner, NodeFailed)
	g.AddConditionalEdges(NodeQA, func(s WorkflowState) string { return routeAfterQA(s, set.MaxRetries) },
		NodeComplete, NodePlanner, NodeFailed)
	g.AddConditionalEdges(NodeComplete, func(s WorkflowState) string { return routeAfterComplete(s, set) },
		NodeSupervisors, NodeAssessor, NodePlanner)
	g.AddConditionalEdges(NodeFailed, func(s WorkflowState) string { return routeAfterFailed(s, set) },
		NodeSupervisors, NodeAssessor)
	g.AddConditionalEdges(NodeSupervisors, routeAfterSupervisors, NodeAssessor, NodePlanner)
	g.AddConditionalEdges(NodeAssessor, func(s WorkflowState) string { return routeAfterAssessor(s, set) },
		NodePlanner, NodeScope, NodePolish)
	g.AddConditionalEdges(NodePolish, routeAfterPolish, NodePlanner, NodeReport)
	g.AddEdge(NodeReport, graph.End)
	return g
}
