package graph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Metadata keys of a fork: every checkpoint of a run made by Fork carries the
// run and the step it was forked from (they override any WithMetadata keys
// of the same name).
const (
	MetaForkRun  = "graph.fork.run"
	MetaForkStep = "graph.fork.step"
)

// ForkOrigin reads the run and step a run was forked from out of checkpoint
// metadata (Snapshot.Metadata, CheckpointInfo.Metadata); ok is false for a
// run that is not a fork.
func ForkOrigin(meta map[string]string) (run string, step int, ok bool) {
	run, ok = meta[MetaForkRun]
	if !ok {
		return "", 0, false
	}
	step, err := strconv.Atoi(meta[MetaForkStep])
	if err != nil {
		return "", 0, false
	}
	return run, step, true
}

// lineageOf returns the keys of meta the runtime keeps in every checkpoint
// (fork origin, durability), nil when it has none.
func lineageOf(meta map[string]string) map[string]string {
	var out map[string]string
	for _, k := range []string{MetaForkRun, MetaForkStep, MetaDurability} {
		if v, ok := meta[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// withLineage returns m with the runtime's keys set (a copy when it adds them).
func withLineage(m, lineage map[string]string) map[string]string {
	if lineage == nil {
		return m
	}
	out := make(map[string]string, len(m)+len(lineage))
	maps.Copy(out, m)
	maps.Copy(out, lineage)
	return out
}

// Fork makes run newID from the checkpoint of step in run parentID and stores
// it, without running it; Resume runs it (or use Replay). The parent is not
// changed. The new run starts with the state, next nodes and Send tasks the
// parent had after that step, keeps the step numbers (its first checkpoint
// is that step), and carries MetaForkRun and MetaForkStep in the metadata of
// every checkpoint; tasks the parent had finished of the step after are run
// again. It is stored paused (reason "fork of RUN at step N"), or done when
// nothing follows that step.
//
// WithUpdate edits the state first; the fork's first checkpoint is then step
// step+1, attributed to "__update__" (the next nodes stay) or, with AsNode,
// to that node, whose edges and routers pick the next nodes from the edited
// state. The fork runs in the parent's durability mode unless WithDurability
// gives it its own. The fork is written as one record: a crash leaves the
// whole fork or none of it.
func (c *Compiled[S]) Fork(ctx context.Context, parentID string, step int, newID string, opts ...RunOption) (Snapshot[S], error) {
	if c.cp == nil {
		return Snapshot[S]{}, ErrNoCheckpointer
	}
	fail := func(err error) (Snapshot[S], error) {
		return Snapshot[S]{}, fmt.Errorf("graph: fork %s at step %d as %s: %w", parentID, step, newID, err)
	}
	if !ValidRunPath(parentID) {
		return fail(fmt.Errorf("%w: %q", ErrInvalidRunID, parentID))
	}
	if !ValidRunID(newID) {
		return fail(fmt.Errorf("%w: %q", ErrInvalidRunID, newID))
	}
	rc, update, err := c.options(opts)
	if err != nil {
		return fail(err)
	}
	ld, err := c.loadAt(ctx, c.cp, parentID, step)
	if err != nil {
		return fail(err)
	}
	// The fork's record holds no branch writes: a replay runs the whole next
	// step again. No tracking: restore need not encode the state.
	r := c.newRunner(newID, callEnv{})
	if err := r.restore(ld); err != nil {
		return fail(err)
	}
	state, next, sends, nodes, at := ld.state, r.next, r.sends, ld.nodes, step
	if update != nil {
		if state, err = update(state); err != nil {
			return fail(fmt.Errorf("update: %w", err))
		}
		at, nodes = step+1, []string{UpdateNode}
		if rc.asNode != "" {
			idx := -1
			if rc.asNode != Start {
				idx = c.byName[rc.asNode]
			}
			if next, sends, err = r.successors(ctx, []int{idx}, []S{state}); err != nil {
				return fail(err)
			}
			nodes = []string{rc.asNode}
		}
		if rc.hasGoTo {
			next, sends = c.gotoIndexes(rc.goTo), nil
		}
	}
	full, err := newTracker[S](c.plan).reset(state)
	if err != nil {
		return fail(err)
	}
	if filtered, changed := c.redactChanges(full); changed {
		if err := c.adopt(&state, full, filtered); err != nil {
			return fail(err)
		}
		full = filtered
	}
	now := time.Now()
	meta := ld.meta
	if rc.meta != nil {
		meta = withLineage(maps.Clone(meta), rc.meta)
	}
	meta = withLineage(meta, map[string]string{MetaForkRun: parentID, MetaForkStep: strconv.Itoa(step)})
	switch rc.durability {
	case "": // the parent's mode, kept in its metadata
	case DurabilitySync:
		delete(meta, MetaDurability)
	default:
		meta[MetaDurability] = string(rc.durability)
	}
	e := entry{status: StatusPaused, reason: fmt.Sprintf("fork of %s at step %d", parentID, step), created: now, time: now,
		nodes: nodes, next: r.nextNames(next, sends), changes: full, meta: meta}
	if len(next) == 0 && len(sends) == 0 {
		e.status, e.reason = StatusDone, ""
	}
	if e.sends, err = r.sendRecs(state, sends); err != nil {
		return fail(err)
	}
	w, err := c.cp.Open(ctx, newID, true)
	if err != nil {
		return fail(err)
	}
	err = w.Append(context.WithoutCancel(ctx), Record{Kind: RecordSnapshot, Step: at, Data: encodePayload(nil, &e)})
	if err == nil {
		err = w.Sync(context.WithoutCancel(ctx))
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	return Snapshot[S]{RunID: newID, State: state, Status: e.status, Step: at, Nodes: nodes, Next: e.next,
		Metadata: e.meta, Created: now, Updated: now, Reason: e.reason}, nil
}

// Replay forks run parentID at step as newID (Fork, with its WithUpdate and
// AsNode) and runs the fork (Resume, with its WithDurability): the nodes
// after that step run again, their model calls, side effects and interrupts
// included. Replaying the last step of a finished run runs nothing.
func (c *Compiled[S]) Replay(ctx context.Context, parentID string, step int, newID string, opts ...RunOption) (S, error) {
	var zero S
	snap, err := c.Fork(ctx, parentID, step, newID, opts...)
	if err != nil {
		return zero, err
	}
	if snap.Status == StatusDone {
		return snap.State, nil // nothing follows that step
	}
	// The options were checked by Fork; no WithDurability ("") runs the
	// fork in its own mode.
	rc, _, _ := c.options(opts)
	return c.resume(ctx, callEnv{cp: c.cp, durable: rc.durability}, newID, nil, runConfig{})
}

// loadAt rebuilds the checkpoint of step from all the run's retained records.
func (c *Compiled[S]) loadAt(ctx context.Context, cp Checkpointer, runID string, step int) (*loaded[S], error) {
	recs, err := cp.Records(ctx, runID)
	if err != nil {
		return nil, err
	}
	start := -1
	for i, r := range recs {
		if r.Kind == RecordSnapshot && r.Step <= step {
			start = i
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("%w: run %s has no checkpoint of step %d (pruned?)", ErrStepNotFound, runID, step)
	}
	return c.replay(runID, recs[start:], step)
}

// gotoIndexes are the nodes Goto names, End left out (it means "nothing next").
func (c *Compiled[S]) gotoIndexes(names []string) []int {
	var out []int
	for _, n := range names {
		if i, ok := c.byName[n]; ok && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}
