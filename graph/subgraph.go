package graph

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A subgraph is a compiled graph run as one node of another. Each time the
// node runs, the subgraph runs as a run of its own, stored in the parent's
// checkpointer under the parent's run id (SubgraphRunID) with the parent's
// durability mode, so its steps are checkpointed as they happen. An
// interrupt inside the subgraph pauses the parent (the parent's step is not
// committed); the parent's Resume runs the node again, which resumes the
// subgraph's run where it stopped instead of starting it over.

// Subgraph is a compiled graph ready to be a node of a graph over state P
// (AddSubgraph). Make one with SubgraphOf or SubgraphMap.
type Subgraph[P any] interface {
	run(ctx context.Context, p P) (P, error)
	history(ctx context.Context, cp Checkpointer, runID, ns string) ([]CheckpointInfo, error)
}

// SubgraphOf uses c, a graph over the parent's own state type, as a node: it
// starts from the parent's state and its final state is the node's result.
func SubgraphOf[S any](c *Compiled[S]) Subgraph[S] {
	return &subgraph[S, S]{c: c, in: func(p S) S { return p }, out: func(_ S, s S) S { return s }}
}

// SubgraphMap uses c, a graph over its own state type C, as a node of a graph
// over P: in builds its initial state from the parent's, out folds its final
// state back into the parent's.
func SubgraphMap[P, C any](c *Compiled[C], in func(P) C, out func(P, C) P) Subgraph[P] {
	return &subgraph[P, C]{c: c, in: in, out: out}
}

type subgraph[P, C any] struct {
	c   *Compiled[C]
	in  func(P) C
	out func(P, C) P
}

var subNodeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$`)

// AddSubgraph adds sub as node name. The name becomes part of the subgraph's
// run ids, so it is 1–100 characters of [A-Za-z0-9._-] not starting with '.'
// or '-'. Node options apply to the node as a whole (a retry resumes the
// subgraph's run).
func (g *Graph[S]) AddSubgraph(name string, sub Subgraph[S], opts ...NodeOption) *Graph[S] {
	if sub == nil {
		g.errs = append(g.errs, fmt.Errorf("AddSubgraph %q: nil subgraph", name))
		return g
	}
	if s, ok := sub.(interface{ valid() error }); ok {
		if err := s.valid(); err != nil {
			g.errs = append(g.errs, fmt.Errorf("AddSubgraph %q: %w", name, err))
			return g
		}
	}
	if !subNodeName.MatchString(name) {
		g.errs = append(g.errs, fmt.Errorf("AddSubgraph %q: a subgraph's node name names its runs: use 1–100 characters of [A-Za-z0-9._-], not starting with '.' or '-'", name))
		return g
	}
	g.addNode(name, sub.run, true, opts)
	if i, ok := g.index[name]; ok {
		g.nodes[i].subg = sub
	}
	return g
}

func (s *subgraph[P, C]) valid() error {
	if s.c == nil || s.in == nil || s.out == nil {
		return errors.New("SubgraphMap needs a compiled graph and both mapping functions")
	}
	return nil
}

// SubgraphRunID is the id of the run of subgraph node in run parent, for the
// node's task scheduled in step (the step it runs in, unless a WithUpdate
// while it waited kept it for a later step); send ≥ 0 is the Send task
// number when the node ran as one.
func SubgraphRunID(parent, node string, step, send int) string {
	id := parent + "/" + node + "@" + strconv.Itoa(step)
	if send >= 0 {
		id += "." + strconv.Itoa(send)
	}
	return id
}

var runPathPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}(/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}@[0-9]{1,19}(\.[0-9]{1,9})?)*$`)

// ValidRunPath reports whether id names a stored run: a run id, or the run of
// a subgraph under one (SubgraphRunID). Stores accept these; Run, Resume and
// Fork's new id take plain run ids only.
func ValidRunPath(id string) bool { return len(id) <= 4096 && runPathPattern.MatchString(id) }

// isSubRun reports whether id is a subgraph's run (listed under its parent only).
func isSubRun(id string) bool { return strings.Contains(id, "/") }

// subKey carries a *subScope in the context of a subgraph node.
type subKey struct{}

// subScope is what a subgraph node needs of the run it is a step of.
type subScope struct {
	env    callEnv
	stop   func() bool
	parent string
	node   string
	step   int
	send   int
}

// subgraphStop is a subgraph's run that paused or halted: its parent stops
// too, without committing the step, and runs the node again on Resume.
type subgraphStop struct {
	run    string
	reason string
	halted bool
}

func (e *subgraphStop) Error() string {
	if e.halted {
		return fmt.Sprintf("graph: subgraph run %s halted (%s)", e.run, e.reason)
	}
	return fmt.Sprintf("graph: subgraph run %s paused (%s)", e.run, e.reason)
}

func (s *subgraph[P, C]) run(ctx context.Context, p P) (P, error) {
	sc, _ := ctx.Value(subKey{}).(*subScope)
	if sc == nil {
		return p, errors.New("graph: a subgraph node runs only inside a run")
	}
	id := SubgraphRunID(sc.parent, sc.node, sc.step, sc.send)
	env := callEnv{cp: sc.env.cp, durable: sc.env.durable, stop: sc.stop}
	var out C
	var err error
	if env.cp == nil {
		out, err = s.c.begin(ctx, env, id, s.in(p))
	} else {
		out, err = s.c.enter(ctx, env, id, func() C { return s.in(p) })
	}
	label := taskKey{node: sc.node, send: sc.send}.label()
	var pe *pauseError
	switch {
	case err == nil:
		return s.out(p, out), nil
	case errors.As(err, &pe):
		return p, &subgraphStop{run: id, reason: "in subgraph " + label + ": " + pe.reason}
	case errors.Is(err, ErrHalted):
		var he *haltError
		reason := "in subgraph " + label
		if errors.As(err, &he) && he.reason != "" {
			reason += ": " + he.reason
		}
		return p, &subgraphStop{run: id, reason: reason, halted: true}
	}
	return p, err
}

// enter starts the subgraph's run, or resumes it when an earlier attempt of
// the node stored it (a pause, a crash, a failure); a run already done gives
// its final state without running anything again.
func (c *Compiled[S]) enter(ctx context.Context, env callEnv, id string, in func() S) (S, error) {
	snap, err := c.state(ctx, env.cp, id)
	switch {
	case errors.Is(err, ErrRunNotFound):
		return c.begin(ctx, env, id, in())
	case err != nil:
		var zero S
		return zero, err
	case snap.Status == StatusDone:
		return snap.State, nil
	}
	return c.resume(ctx, env, id, nil, runConfig{})
}

func (s *subgraph[P, C]) history(ctx context.Context, cp Checkpointer, runID, ns string) ([]CheckpointInfo, error) {
	return s.c.history(ctx, cp, runID, ns)
}

// subruns lists the runs of the subgraph nodes among the tasks labels ran in
// step of run runID, with their namespaces.
func (c *Compiled[S]) subruns(runID string, step int, labels []string) (ids, nss []string, subs []subgraphHistory) {
	for _, l := range labels {
		name, send := l, -1
		if i := strings.LastIndexByte(l, '['); i > 0 && strings.HasSuffix(l, "]") {
			if k, err := strconv.Atoi(l[i+1 : len(l)-1]); err == nil {
				name, send = l[:i], k
			}
		}
		i, ok := c.byName[name]
		if !ok || c.nodes[i].subg == nil {
			continue
		}
		id := SubgraphRunID(runID, name, step, send)
		ids = append(ids, id)
		nss = append(nss, strings.TrimPrefix(id, runID+"/"))
		subs = append(subs, c.nodes[i].subg)
	}
	return ids, nss, subs
}
