package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Update edits a stored run without running it (LangGraph's update_state):
// WithUpdate's edit is committed as the run's next step, attributed to
// "__update__" (or AsNode's node), with Goto's next nodes and SetMetadata's
// keys when given, and the run is stored halted with reason, so that Resume
// continues it from the edit. A run that ended (done) may be edited too:
// with next nodes (Goto, AsNode) it can then be resumed. The run must not be
// held by another process (ErrRunLocked). The edit is one record, synced: a
// crash leaves it whole or not at all.
func (c *Compiled[S]) Update(ctx context.Context, runID, reason string, opts ...RunOption) (Snapshot[S], error) {
	fail := func(err error) (Snapshot[S], error) {
		return Snapshot[S]{}, fmt.Errorf("graph: update %s: %w", runID, err)
	}
	if c.cp == nil {
		return fail(ErrNoCheckpointer)
	}
	if !ValidRunID(runID) {
		return fail(fmt.Errorf("%w: %q", ErrInvalidRunID, runID))
	}
	rc, update, err := c.options(opts)
	if err != nil {
		return fail(err)
	}
	if update == nil {
		return fail(errors.New("Update needs WithUpdate"))
	}
	w, err := c.cp.Open(ctx, runID, false)
	if err != nil {
		return fail(err)
	}
	recs, err := c.cp.Tail(ctx, runID)
	var ld *loaded[S]
	if err == nil {
		ld, err = c.replay(runID, recs, -1)
	}
	if err != nil {
		_ = w.Close()
		return fail(err)
	}
	r := c.newRunner(runID, callEnv{cp: c.cp, durable: DurabilitySync})
	r.w = w
	defer r.close()
	if err := r.restore(ld); err != nil {
		return fail(err)
	}
	s, err := update(r.state)
	if err != nil {
		return fail(fmt.Errorf("update: %w", err))
	}
	if strings.TrimSpace(reason) == "" {
		reason = "updated"
	}
	if err := r.commitUpdate(ctx, s, rc, reason); err != nil {
		return fail(err)
	}
	if err := w.Sync(context.WithoutCancel(ctx)); err != nil {
		return fail(err)
	}
	return c.State(ctx, runID)
}
