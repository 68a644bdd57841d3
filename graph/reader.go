package graph

import (
	"context"
	"fmt"
	"reflect"
)

// Reader reads the runs a Checkpointer stores, given only their state type:
// what a status page, a run list or a log viewer needs, without the nodes,
// edges and options a compiled graph carries. It can also prune and delete
// stored runs, which need no graph either. It is safe for concurrent use.
type Reader[S any] struct {
	c *Compiled[S]
}

// NewReader returns a Reader of the runs in cp whose state is S. The error
// names state fields that cannot be checkpointed (as Compile does).
func NewReader[S any](cp Checkpointer) (*Reader[S], error) {
	if cp == nil {
		return nil, ErrNoCheckpointer
	}
	plan, err := buildPlan(reflect.TypeFor[S]())
	if err != nil {
		return nil, fmt.Errorf("graph: reader: %w", err)
	}
	return &Reader[S]{c: &Compiled[S]{cp: cp, plan: plan, byName: map[string]int{}}}, nil
}

// State returns the latest checkpoint of a run (Compiled.State).
func (r *Reader[S]) State(ctx context.Context, runID string) (Snapshot[S], error) {
	return r.c.State(ctx, runID)
}

// StateAt returns the state committed at a given step (Compiled.StateAt).
func (r *Reader[S]) StateAt(ctx context.Context, runID string, step int) (S, error) {
	return r.c.StateAt(ctx, runID, step)
}

// History lists a run's retained checkpoints, oldest first (Compiled.History).
// A Reader does not know the graph's subgraphs: their runs' checkpoints are
// not listed with the parent's, as the compiled graph's History lists them.
func (r *Reader[S]) History(ctx context.Context, runID string) ([]CheckpointInfo, error) {
	return r.c.History(ctx, runID)
}

// ListRuns lists the stored runs, oldest first (Compiled.ListRuns).
func (r *Reader[S]) ListRuns(ctx context.Context) ([]RunInfo, error) {
	return r.c.ListRuns(ctx)
}

// Prune frees storage of a run, keeping every checkpoint at a step ≥
// keepFrom loadable (Compiled.Prune).
func (r *Reader[S]) Prune(ctx context.Context, runID string, keepFrom int) (int64, error) {
	return r.c.Prune(ctx, runID, keepFrom)
}

// DeleteRun removes a stored run (Compiled.DeleteRun).
func (r *Reader[S]) DeleteRun(ctx context.Context, runID string) error {
	return r.c.DeleteRun(ctx, runID)
}
