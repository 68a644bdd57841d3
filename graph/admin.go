package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

func sortRuns(runs []RunInfo) {
	sort.Slice(runs, func(i, j int) bool {
		if !runs[i].Created.Equal(runs[j].Created) {
			return runs[i].Created.Before(runs[j].Created)
		}
		return runs[i].ID < runs[j].ID
	})
}

// Prune frees storage of a run while keeping every checkpoint at a step ≥
// keepFrom loadable (State, StateAt, Resume). Deltas depend on the snapshot
// before them, so whole snapshot+delta chains go or stay together. With
// keepFrom at or past the latest step, the latest state is first written as a
// fresh snapshot so that everything older can go. It takes the run's lock
// (ErrRunLocked while a run advances it) and returns the bytes freed.
func (c *Compiled[S]) Prune(ctx context.Context, runID string, keepFrom int) (int64, error) {
	if c.cp == nil {
		return 0, ErrNoCheckpointer
	}
	w, err := c.cp.Open(ctx, runID, false)
	if err != nil {
		return 0, fmt.Errorf("graph: prune %s: %w", runID, err)
	}
	defer w.Close()
	recs, err := c.cp.Tail(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("graph: prune %s: %w", runID, err)
	}
	ld, err := c.replay(runID, recs, -1)
	if err != nil {
		return 0, fmt.Errorf("graph: prune %s: %w", runID, err)
	}
	if keepFrom >= ld.step {
		keepFrom = ld.step
		if recs[0].Step < ld.step {
			if err := c.rebase(ctx, w, ld); err != nil {
				return 0, fmt.Errorf("graph: prune %s: %w", runID, err)
			}
		}
	}
	freed, err := w.Prune(ctx, keepFrom)
	if err == nil {
		err = w.Sync(ctx)
	}
	if err != nil {
		return freed, fmt.Errorf("graph: prune %s: %w", runID, err)
	}
	return freed, nil
}

// rebase writes the loaded state as a snapshot of its step, with its status
// and Send tasks, and stores again the finished tasks of the step in progress.
func (c *Compiled[S]) rebase(ctx context.Context, w RunWriter, ld *loaded[S]) error {
	tr := newTracker[S](c.plan)
	full, err := tr.reset(ld.state)
	if err != nil {
		return err
	}
	meta := ld.meta
	if meta == nil {
		meta = map[string]string{}
	}
	e := entry{status: ld.status, pausedBefore: ld.pausedBefore, created: ld.created, time: ld.updated,
		nodes: ld.nodes, next: ld.next, reason: ld.reason, errMsg: ld.errMsg, meta: meta, changes: full}
	if ld.taskStep != ld.step+1 {
		e.taskStep = ld.taskStep
	}
	for k, sd := range ld.sends {
		ch, err := tr.diff(&ld.sends[k].in)
		if err != nil {
			return err
		}
		e.sends = append(e.sends, sendRec{node: sd.node, changes: ch})
	}
	if err := w.Append(ctx, Record{Kind: RecordSnapshot, Step: ld.step, Data: encodePayload(nil, &e)}); err != nil {
		return err
	}
	for _, k := range slices.SortedFunc(maps.Keys(ld.pending), compareTasks) {
		pw := ld.pending[k]
		we := entry{status: ld.status, created: ld.created, time: ld.updated, nodes: []string{k.node}, next: ld.next,
			reason: pw.reason, changes: pw.changes, task: k.send + 1}
		if err := w.Append(ctx, Record{Kind: RecordWrite, Step: ld.step + 1, Data: encodePayload(nil, &we)}); err != nil {
			return err
		}
	}
	return nil
}

// DeleteRun removes a stored run and the runs of its subgraphs;
// ErrRunLocked while a writer holds it.
func (c *Compiled[S]) DeleteRun(ctx context.Context, runID string) error {
	if c.cp == nil {
		return ErrNoCheckpointer
	}
	if err := c.cp.Delete(ctx, runID); err != nil {
		return fmt.Errorf("graph: delete run %s: %w", runID, err)
	}
	// Stores that list subgraph runs (a file store keeps them inside the
	// run's folder, gone with it) have them deleted one by one.
	runs, err := c.cp.Runs(ctx)
	if err != nil && len(runs) == 0 {
		return fmt.Errorf("graph: delete run %s: list its subgraph runs: %w", runID, err)
	}
	for _, sr := range runs {
		if strings.HasPrefix(sr.ID, runID+"/") {
			if err := c.cp.Delete(ctx, sr.ID); err != nil && !errors.Is(err, ErrRunNotFound) {
				return fmt.Errorf("graph: delete run %s: subgraph run %s: %w", runID, sr.ID, err)
			}
		}
	}
	return nil
}
