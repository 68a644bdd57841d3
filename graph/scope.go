package graph

import "context"

// NodeOf reports which node and step ctx belongs to: a node's context, and
// every context derived from it, knows them while the run has sinks. ok is
// false outside a node. Observers of work done inside nodes (a model call, a
// gate, a commit) use it to place that work under the node that did it.
func NodeOf(ctx context.Context) (node string, step int, ok bool) {
	sc, _ := ctx.Value(emitKey{}).(*nodeScope)
	if sc == nil {
		return "", 0, false
	}
	return sc.node, sc.step, true
}
