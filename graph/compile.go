package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// endIdx stands for End among successor indexes.
const endIdx = -1

// Node flags resolved at Compile.
const (
	flagInterruptBefore = 1 << iota
	flagInterruptAfter
	flagSideEffects
	flagSubgraph
)

// Compiled is a validated graph, ready to run. It is immutable and safe for
// concurrent runs with different ids.
type Compiled[S any] struct {
	nodes  []cnode[S]
	start  cnode[S] // Start's edges, evaluated on the initial state
	byName map[string]int

	cp        Checkpointer
	limit     int
	sinks     []Sink
	meta      func(context.Context, S) (map[string]string, error)
	merge     func(S, []string, []S) (S, error)
	stop      func(string) bool
	redact    func([]byte) []byte
	snapBytes int
	durable   Durability // default durability of calls
	plan      *statePlan
	mermaid   string
}

type cnode[S any] struct {
	name   string
	label  []string // {name}: the nodes of a step that ran only this node
	subg   subgraphHistory
	fn     NodeFunc[S]
	cfg    nodeConfig
	flags  uint8
	static []int // successors by static edge (endIdx for End), sorted
	conds  []ccond[S]
	sends  []csend[S]
	single int  // the only successor when there is exactly one static edge and no router
	simple bool // single is valid
}

type csend[S any] struct {
	fanout func(S) []Send[S]
	dest   map[string]int // declared target → node index
	names  []string       // declared targets, for errors
}

type ccond[S any] struct {
	route  func(S) string
	dest   map[string]int // route value → node index or endIdx
	labels bool           // route values are labels (AddConditionalEdgesMap)
	names  []string       // declared route values, for errors
}

// Compile validates the graph and the state type and returns a runnable graph.
// The error names every problem found: unknown nodes in edges, nodes not
// reachable from Start, nodes with no way to End, a missing entry, state
// fields that cannot be checkpointed, and options that do not fit.
func (g *Graph[S]) Compile(opts ...CompileOption) (*Compiled[S], error) {
	cfg := compileConfig{recursionLimit: DefaultRecursionLimit, snapshotBytes: DefaultSnapshotBytes, durability: DurabilitySync}
	for _, o := range opts {
		o(&cfg)
	}
	errs := append([]error(nil), g.errs...)
	c := &Compiled[S]{byName: map[string]int{}, cp: cfg.checkpointer, limit: cfg.recursionLimit,
		sinks: cfg.sinks, stop: cfg.stopCheck, redact: cfg.redact, snapBytes: cfg.snapshotBytes, durable: cfg.durability}
	for i, n := range g.nodes {
		c.byName[n.name] = i
		c.nodes = append(c.nodes, cnode[S]{name: n.name, label: []string{n.name}, fn: n.fn, cfg: n.cfg, subg: n.subg})
		if n.cfg.sideEffects {
			c.nodes[i].flags |= flagSideEffects
		}
		if n.sub {
			c.nodes[i].flags |= flagSubgraph
		}
	}
	c.start.name = Start
	errs = append(errs, c.wireEdges(g)...)
	errs = append(errs, c.checkTopology()...)
	errs = append(errs, c.applyOptions(&cfg)...)
	plan, err := buildPlan(reflect.TypeFor[S]())
	if err != nil {
		errs = append(errs, err)
	}
	c.plan = plan
	if len(errs) > 0 {
		return nil, fmt.Errorf("graph: compile: %w", errors.Join(errs...))
	}
	for i := range c.nodes {
		n := &c.nodes[i]
		sort.Ints(n.static)
		if len(n.static) == 1 && len(n.conds) == 0 && len(n.sends) == 0 {
			n.single, n.simple = n.static[0], true
		}
	}
	sort.Ints(c.start.static)
	c.mermaid = g.renderMermaid()
	return c, nil
}

// source is the node an edge may leave from (Start included), nil if none.
func (c *Compiled[S]) source(name string) *cnode[S] {
	if name == Start {
		return &c.start
	}
	if i, ok := c.byName[name]; ok {
		return &c.nodes[i]
	}
	return nil
}

// target is the index an edge may lead to (End included).
func (c *Compiled[S]) target(name string) (int, bool) {
	if name == End {
		return endIdx, true
	}
	i, ok := c.byName[name]
	return i, ok
}

// wireEdges resolves the graph's static and conditional edges to node
// indexes, with an error for each edge that names no node or breaks a rule.
func (c *Compiled[S]) wireEdges(g *Graph[S]) []error {
	var errs []error
	for _, e := range g.edges {
		from := c.source(e.from)
		to, ok := c.target(e.to)
		switch {
		case e.from == End:
			errs = append(errs, fmt.Errorf("edge %s → %s: End has no outgoing edges", e.from, e.to))
		case from == nil:
			errs = append(errs, fmt.Errorf("edge %s → %s: unknown node %q", e.from, e.to, e.from))
		case e.to == Start:
			errs = append(errs, fmt.Errorf("edge %s → %s: no edge may lead to Start", e.from, e.to))
		case !ok:
			errs = append(errs, fmt.Errorf("edge %s → %s: unknown node %q", e.from, e.to, e.to))
		default:
			if !containsInt(from.static, to) {
				from.static = append(from.static, to)
			}
		}
	}
	for _, cd := range g.conds {
		from := c.source(cd.from)
		if from == nil {
			errs = append(errs, fmt.Errorf("conditional edges from %q: unknown node", cd.from))
			continue
		}
		cc := ccond[S]{route: cd.route, dest: map[string]int{}, labels: cd.routes != nil}
		bad := false
		keys := cd.dests
		if cd.routes != nil {
			keys = slices.Sorted(maps.Keys(cd.routes))
		}
		for _, k := range keys {
			name := k
			if cd.routes != nil {
				name = cd.routes[k]
			}
			i, ok := c.target(name)
			if !ok {
				errs = append(errs, fmt.Errorf("conditional edges from %q: unknown destination %q", cd.from, name))
				bad = true
				continue
			}
			cc.dest[k] = i
			cc.names = append(cc.names, k)
		}
		if !bad {
			from.conds = append(from.conds, cc)
		}
	}
	for _, sd := range g.sends {
		from := c.source(sd.from)
		if from == nil {
			errs = append(errs, fmt.Errorf("AddSend from %q: unknown node", sd.from))
			continue
		}
		cs := csend[S]{fanout: sd.fanout, dest: map[string]int{}}
		bad := false
		for _, name := range sd.targets {
			i, ok := c.byName[name]
			if !ok {
				errs = append(errs, fmt.Errorf("AddSend from %q: unknown target %q (a Send runs a node; End and Start are not)", sd.from, name))
				bad = true
				continue
			}
			cs.dest[name] = i
			cs.names = append(cs.names, name)
		}
		if !bad {
			from.sends = append(from.sends, cs)
		}
	}
	return errs
}

// applyOptions sets the interrupts and the typed hooks of cfg on c, with an
// error for each option that names no node, is out of range or does not take
// the graph's state type.
func (c *Compiled[S]) applyOptions(cfg *compileConfig) []error {
	var errs []error
	for _, name := range cfg.interruptBefore {
		if i, ok := c.byName[name]; ok {
			c.nodes[i].flags |= flagInterruptBefore
		} else {
			errs = append(errs, fmt.Errorf("WithInterruptBefore: unknown node %q", name))
		}
	}
	for _, name := range cfg.interruptAfter {
		if i, ok := c.byName[name]; ok {
			c.nodes[i].flags |= flagInterruptAfter
		} else {
			errs = append(errs, fmt.Errorf("WithInterruptAfter: unknown node %q", name))
		}
	}
	if cfg.recursionLimit < 1 {
		errs = append(errs, fmt.Errorf("WithRecursionLimit(%d): the limit must be at least 1", cfg.recursionLimit))
	}
	if !cfg.durability.valid() {
		errs = append(errs, fmt.Errorf("WithDefaultDurability(%q): use DurabilitySync, DurabilityAsync or DurabilityExit", cfg.durability))
	}
	if cfg.snapshotBytes < 1 {
		errs = append(errs, fmt.Errorf("WithSnapshotBytes(%d): must be at least 1", cfg.snapshotBytes))
	}
	stateType := reflect.TypeFor[S]()
	if cfg.metadata != nil {
		switch fn := cfg.metadata.(type) {
		case func(context.Context, S) map[string]string:
			c.meta = func(ctx context.Context, s S) (map[string]string, error) { return fn(ctx, s), nil }
		case func(context.Context, S) (map[string]string, error):
			c.meta = fn
		default:
			errs = append(errs, fmt.Errorf("WithMetadata: function %T does not take the graph's state type %v", cfg.metadata, stateType))
		}
	}
	if cfg.merge != nil {
		fn, ok := cfg.merge.(func(S, []string, []S) (S, error))
		if !ok {
			errs = append(errs, fmt.Errorf("WithMerge: function %T does not take the graph's state type %v", cfg.merge, stateType))
		}
		c.merge = fn
	}
	return errs
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// successorsOf lists every node n may lead to (endIdx included).
func (n *cnode[S]) successorsOf() []int {
	out := append([]int(nil), n.static...)
	for _, cc := range n.conds {
		for _, d := range cc.dest {
			out = append(out, d)
		}
	}
	for _, cs := range n.sends {
		for _, d := range cs.dest {
			out = append(out, d)
		}
		out = append(out, endIdx) // no Sends at all ends the branch
	}
	return out
}

// checkTopology: an entry, every node reachable from Start, every node with a
// way out and a path to End.
func (c *Compiled[S]) checkTopology() []error {
	var errs []error
	if len(c.start.static) == 0 && len(c.start.conds) == 0 && len(c.start.sends) == 0 {
		return append(errs, fmt.Errorf("missing entry: add an edge from graph.Start to the first node"))
	}
	seen := make([]bool, len(c.nodes))
	queue := []int{}
	for _, d := range c.start.successorsOf() {
		if d != endIdx && !seen[d] {
			seen[d] = true
			queue = append(queue, d)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, d := range c.nodes[i].successorsOf() {
			if d != endIdx && !seen[d] {
				seen[d] = true
				queue = append(queue, d)
			}
		}
	}
	var unreachable, noExit, noEnd []string
	reachesEnd := make([]bool, len(c.nodes))
	for changed := true; changed; {
		changed = false
		for i := range c.nodes {
			if reachesEnd[i] {
				continue
			}
			for _, d := range c.nodes[i].successorsOf() {
				if d == endIdx || reachesEnd[d] {
					reachesEnd[i], changed = true, true
					break
				}
			}
		}
	}
	for i, n := range c.nodes {
		switch {
		case !seen[i]:
			unreachable = append(unreachable, n.name)
		case len(n.static) == 0 && len(n.conds) == 0 && len(n.sends) == 0:
			noExit = append(noExit, n.name)
		case !reachesEnd[i]:
			noEnd = append(noEnd, n.name)
		}
	}
	if len(unreachable) > 0 {
		errs = append(errs, fmt.Errorf("nodes not reachable from Start: %s", strings.Join(unreachable, ", ")))
	}
	if len(noExit) > 0 {
		errs = append(errs, fmt.Errorf("nodes with no outgoing edge (add an edge, to End if they finish the run): %s", strings.Join(noExit, ", ")))
	}
	if len(noEnd) > 0 {
		errs = append(errs, fmt.Errorf("nodes with no path to End (a loop without an exit): %s", strings.Join(noEnd, ", ")))
	}
	return errs
}

// Mermaid renders the graph as a Mermaid flowchart; conditional edges are
// dotted and carry their route labels.
func (c *Compiled[S]) Mermaid() string { return c.mermaid }

// Nodes lists the node names in declaration order.
func (c *Compiled[S]) Nodes() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.name
	}
	return out
}
