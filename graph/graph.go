package graph

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// Start and End are the pseudo-nodes that begin and finish every graph.
const (
	Start = "__start__"
	End   = "__end__"
	// UpdateNode names the checkpoint written by Resume(WithUpdate(...)).
	UpdateNode = "__update__"
)

// NodeFunc is a node: it receives the state and returns the new state.
type NodeFunc[S any] func(ctx context.Context, s S) (S, error)

// Graph is a graph under construction. Its methods record mistakes and
// Compile reports them all, so calls can be chained.
type Graph[S any] struct {
	nodes []*nodeDef[S]
	index map[string]int
	edges []edgeDef
	conds []condDef[S]
	sends []sendDef[S]
	errs  []error
}

type nodeDef[S any] struct {
	name string
	fn   NodeFunc[S]
	cfg  nodeConfig
	sub  bool // a subgraph (AddSubgraph)
	subg subgraphHistory
}

// subgraphHistory is the part of a Subgraph that History needs.
type subgraphHistory interface {
	history(ctx context.Context, cp Checkpointer, runID, ns string) ([]CheckpointInfo, error)
}

type sendDef[S any] struct {
	from    string
	fanout  func(S) []Send[S]
	targets []string
}

// Send is one invocation of Node with State as its input, returned by the
// fan-out function of AddSend. Its result is joined with the step's other
// results by the state's reducers, counting only what Node changed in
// State.
type Send[S any] struct {
	Node  string
	State S
}

type edgeDef struct{ from, to string }

type condDef[S any] struct {
	from   string
	route  func(S) string
	dests  []string          // declared destinations, in declaration order
	routes map[string]string // route value → destination, nil when the router returns names
}

// New starts an empty graph over state type S (a struct).
func New[S any]() *Graph[S] {
	return &Graph[S]{index: map[string]int{}}
}

// AddNode adds a node; names are unique and may not be Start, End or empty.
func (g *Graph[S]) AddNode(name string, fn NodeFunc[S], opts ...NodeOption) *Graph[S] {
	g.addNode(name, fn, false, opts)
	return g
}

func (g *Graph[S]) addNode(name string, fn NodeFunc[S], sub bool, opts []NodeOption) {
	switch {
	case name == "":
		g.errs = append(g.errs, fmt.Errorf("AddNode: empty node name"))
		return
	case name == Start || name == End || name == UpdateNode:
		g.errs = append(g.errs, fmt.Errorf("AddNode: %q is a reserved name", name))
		return
	case fn == nil:
		g.errs = append(g.errs, fmt.Errorf("AddNode %q: nil function", name))
		return
	}
	if _, dup := g.index[name]; dup {
		g.errs = append(g.errs, fmt.Errorf("AddNode: duplicate node name %q", name))
		return
	}
	var cfg nodeConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.timeout < 0 {
		g.errs = append(g.errs, fmt.Errorf("AddNode %q: negative timeout %v", name, cfg.timeout))
	}
	if r := cfg.retry; r.InitialBackoff < 0 || r.MaxBackoff < 0 || r.Jitter < 0 || r.Jitter > 1 {
		g.errs = append(g.errs, fmt.Errorf("AddNode %q: retry policy needs backoffs ≥ 0 and 0 ≤ Jitter ≤ 1", name))
	}
	g.index[name] = len(g.nodes)
	g.nodes = append(g.nodes, &nodeDef[S]{name: name, fn: fn, cfg: cfg, sub: sub})
}

// AddEdge adds a static edge. Several edges from one node fan out: their
// destinations run in parallel in the next step and their results are joined.
func (g *Graph[S]) AddEdge(from, to string) *Graph[S] {
	g.edges = append(g.edges, edgeDef{from: from, to: to})
	return g
}

// AddConditionalEdges adds a router: after from runs, route picks the next node
// by name among destinations (which may include End). A name outside
// destinations fails the run with a *RouteError.
func (g *Graph[S]) AddConditionalEdges(from string, route func(S) string, destinations ...string) *Graph[S] {
	if route == nil {
		g.errs = append(g.errs, fmt.Errorf("AddConditionalEdges from %q: nil router", from))
		return g
	}
	if len(destinations) == 0 {
		g.errs = append(g.errs, fmt.Errorf("AddConditionalEdges from %q: no destinations declared", from))
		return g
	}
	g.conds = append(g.conds, condDef[S]{from: from, route: route, dests: append([]string(nil), destinations...)})
	return g
}

// AddConditionalEdgesMap is AddConditionalEdges with a router that returns a
// label (such as "pass" or "fail"); routes maps each label to a node name.
// Mermaid draws the labels on the edges.
func (g *Graph[S]) AddConditionalEdgesMap(from string, route func(S) string, routes map[string]string) *Graph[S] {
	if route == nil {
		g.errs = append(g.errs, fmt.Errorf("AddConditionalEdgesMap from %q: nil router", from))
		return g
	}
	if len(routes) == 0 {
		g.errs = append(g.errs, fmt.Errorf("AddConditionalEdgesMap from %q: no routes declared", from))
		return g
	}
	c := condDef[S]{from: from, route: route, routes: make(map[string]string, len(routes))}
	for _, label := range slices.Sorted(maps.Keys(routes)) {
		c.routes[label] = routes[label]
		c.dests = append(c.dests, routes[label])
	}
	g.conds = append(g.conds, c)
	return g
}

// AddSend adds a fan-out: after from runs, fanout returns any number of
// Sends, each an invocation of one of targets with its own input state; they
// run in parallel in the next step (with any nodes reached by edges) and
// their results are joined by the state's reducers. A Send to a node outside
// targets fails the run with a *RouteError; no Sends lead nowhere, like End.
func (g *Graph[S]) AddSend(from string, fanout func(S) []Send[S], targets ...string) *Graph[S] {
	if fanout == nil {
		g.errs = append(g.errs, fmt.Errorf("AddSend from %q: nil fan-out function", from))
		return g
	}
	if len(targets) == 0 {
		g.errs = append(g.errs, fmt.Errorf("AddSend from %q: no targets declared", from))
		return g
	}
	g.sends = append(g.sends, sendDef[S]{from: from, fanout: fanout, targets: append([]string(nil), targets...)})
	return g
}
