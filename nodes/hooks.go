package nodes

import (
	"context"
	"errors"
	"slices"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Hook is work that runs around the nodes, registered in one place
// (Deps.hooks) rather than called from inside them: the supervisors'
// bookkeeping, and the hooks of the caller (Deps.Hooks: board.md and
// report.md, which package run registers). Before runs on the state a node starts from (on a
// copy, which the node then receives); After on the state the node leaves,
// also when it pauses for a human. A hook's error fails the step as the
// node's own would.
type Hook struct {
	Name string
	// Nodes limits the hook to these nodes (nil: every node).
	Nodes  []string
	Before func(ctx context.Context, node string, s *runstate.State) error
	After  func(ctx context.Context, node string, s *runstate.State) error
}

// happen records a fact for the hooks around the node.
func happen(s *runstate.State, fact string) { s.Happened = append(s.Happened, fact) }

// hooks are every Hook of the workflow, in the order they run: the
// workflow's own, then the caller's. The quick and the full pipeline share
// them, as they share the graph.
func (d *Deps) hooks() []Hook {
	return append([]Hook{steeringOf(d).steerHook(), d.supervisorHook()}, d.Hooks...)
}

// around wraps a node in the hooks that apply to it. The facts the node
// reported are cleared after the last After hook, so none reaches the
// checkpoint.
func around(name string, hooks []Hook, fn graph.NodeFunc[runstate.State]) graph.NodeFunc[runstate.State] {
	var mine []Hook
	for _, h := range hooks {
		if h.Nodes == nil || slices.Contains(h.Nodes, name) {
			mine = append(mine, h)
		}
	}
	return func(ctx context.Context, in runstate.State) (runstate.State, error) {
		s := in
		for _, h := range mine {
			if h.Before == nil {
				continue
			}
			c := s.Clone()
			if err := h.Before(ctx, name, &c); err != nil {
				return c, err
			}
			s = c
		}
		out, err := fn(ctx, s)
		var pause *graph.InterruptError
		if err != nil && !errors.As(err, &pause) {
			return out, err
		}
		for _, h := range mine {
			if h.After == nil {
				continue
			}
			if herr := h.After(ctx, name, &out); herr != nil {
				return out, herr
			}
		}
		out.Happened = nil
		return out, err
	}
}
