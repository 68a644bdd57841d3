package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// loaded is a run rebuilt from its records.
type loaded[S any] struct {
	state        S
	step         int
	status       Status
	nodes, next  []string
	created      time.Time
	updated      time.Time
	meta         map[string]string
	reason       string
	errMsg       string
	pausedBefore bool
	pending      map[string]pendingWrite // finished branches of step+1
	snapBytes    int
	deltaBytes   int
}

// replay rebuilds a run from records that start with a snapshot; upto ≥ 0
// stops after the checkpoint of that step.
func (c *Compiled[S]) replay(runID string, recs []Record, upto int) (*loaded[S], error) {
	if len(recs) == 0 || recs[0].Kind != RecordSnapshot {
		return nil, fmt.Errorf("%w: run %s: records do not start with a snapshot", ErrCorrupt, runID)
	}
	ld := &loaded[S]{}
	for _, rec := range recs {
		if upto >= 0 && rec.Step > upto && (rec.Kind == RecordDelta || rec.Kind == RecordSnapshot) {
			break
		}
		e, err := decodePayload(rec.Kind, rec.Step, rec.Data)
		if err != nil {
			return nil, fmt.Errorf("%w: run %s: record of step %d: %v", ErrCorrupt, runID, rec.Step, err)
		}
		switch rec.Kind {
		case RecordSnapshot:
			var zero S
			ld.state = zero
			ld.snapBytes, ld.deltaBytes = e.size, 0
			fallthrough
		case RecordDelta:
			if err := applyChanges(c.plan, &ld.state, e.changes); err != nil {
				return nil, fmt.Errorf("%w: run %s: step %d: %v", ErrCorrupt, runID, rec.Step, err)
			}
			if rec.Kind == RecordDelta {
				ld.deltaBytes += e.size
			}
			ld.step, ld.nodes, ld.pending = rec.Step, e.nodes, nil
			ld.reason, ld.errMsg, ld.pausedBefore = e.reason, e.errMsg, e.pausedBefore
		case RecordWrite:
			if rec.Step != ld.step+1 || len(e.nodes) != 1 {
				continue // a branch of a step that was later committed or superseded
			}
			if ld.pending == nil {
				ld.pending = map[string]pendingWrite{}
			}
			ld.pending[e.nodes[0]] = pendingWrite{changes: e.changes, reason: e.reason}
			continue
		case RecordStatus:
			ld.reason, ld.errMsg, ld.pausedBefore = e.reason, e.errMsg, e.pausedBefore
		}
		ld.status, ld.next, ld.created, ld.updated = e.status, e.next, e.created, e.time
		if e.meta != nil {
			ld.meta = e.meta
		}
	}
	if upto >= 0 && ld.step != upto {
		return nil, fmt.Errorf("%w: run %s has no checkpoint of step %d", ErrStepNotFound, runID, upto)
	}
	return ld, nil
}

// Snapshot is a run's latest checkpoint.
type Snapshot[S any] struct {
	RunID    string
	State    S
	Status   Status
	Step     int
	Nodes    []string // the nodes that ran in Step
	Next     []string // the nodes to run next; empty when done
	Pending  []string // nodes of the next step already finished (their results are stored)
	Metadata map[string]string
	Created  time.Time
	Updated  time.Time
	Reason   string // why it paused
	Error    string // why it failed or was interrupted
}

// State returns the latest checkpoint of a run. It reads the last segment
// only, and works while another process writes the run.
func (c *Compiled[S]) State(ctx context.Context, runID string) (Snapshot[S], error) {
	if c.cp == nil {
		return Snapshot[S]{}, ErrNoCheckpointer
	}
	if !ValidRunID(runID) {
		return Snapshot[S]{}, fmt.Errorf("%w: %q", ErrInvalidRunID, runID)
	}
	recs, err := c.cp.Tail(ctx, runID)
	if err != nil {
		return Snapshot[S]{}, fmt.Errorf("graph: state of %s: %w", runID, err)
	}
	ld, err := c.replay(runID, recs, -1)
	if err != nil {
		return Snapshot[S]{}, fmt.Errorf("graph: state of %s: %w", runID, err)
	}
	snap := Snapshot[S]{RunID: runID, State: ld.state, Status: ld.status, Step: ld.step, Nodes: ld.nodes, Next: ld.next,
		Metadata: ld.meta, Created: ld.created, Updated: ld.updated, Reason: ld.reason, Error: ld.errMsg}
	snap.Pending = slices.Sorted(maps.Keys(ld.pending))
	return snap, nil
}

// StateAt returns the state committed at a given step, if it is still retained.
func (c *Compiled[S]) StateAt(ctx context.Context, runID string, step int) (S, error) {
	var zero S
	if c.cp == nil {
		return zero, ErrNoCheckpointer
	}
	recs, err := c.cp.Records(ctx, runID)
	if err != nil {
		return zero, fmt.Errorf("graph: state of %s at step %d: %w", runID, step, err)
	}
	start := -1
	for i, r := range recs {
		if r.Kind == RecordSnapshot && r.Step <= step {
			start = i
		}
	}
	if start < 0 {
		return zero, fmt.Errorf("graph: %w: run %s has no checkpoint of step %d (pruned?)", ErrStepNotFound, runID, step)
	}
	ld, err := c.replay(runID, recs[start:], step)
	if err != nil {
		return zero, fmt.Errorf("graph: state of %s at step %d: %w", runID, step, err)
	}
	return ld.state, nil
}

// CheckpointInfo describes one stored checkpoint (History).
type CheckpointInfo struct {
	Step     int
	Nodes    []string // nodes that ran
	Next     []string
	Status   Status // as recorded with the checkpoint
	Time     time.Time
	Metadata map[string]string
	Changed  []string // fields stored as changed (all fields for a snapshot)
	Bytes    int      // size of the stored record
	Snapshot bool     // a full snapshot rather than a delta
}

// History lists a run's retained checkpoints, oldest first.
func (c *Compiled[S]) History(ctx context.Context, runID string) ([]CheckpointInfo, error) {
	if c.cp == nil {
		return nil, ErrNoCheckpointer
	}
	recs, err := c.cp.Records(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("graph: history of %s: %w", runID, err)
	}
	var out []CheckpointInfo
	var meta map[string]string
	for _, rec := range recs {
		if rec.Kind != RecordSnapshot && rec.Kind != RecordDelta {
			continue
		}
		e, err := decodePayload(rec.Kind, rec.Step, rec.Data)
		if err != nil {
			return nil, fmt.Errorf("graph: history of %s: %w: step %d: %v", runID, ErrCorrupt, rec.Step, err)
		}
		if e.meta != nil {
			meta = e.meta
		}
		if n := len(out); n > 0 && out[n-1].Step >= rec.Step {
			continue // a snapshot written again for the same step by Prune
		}
		out = append(out, CheckpointInfo{Step: rec.Step, Nodes: e.nodes, Next: e.next, Status: e.status, Time: e.time,
			Metadata: meta, Changed: changedNames(e.changes), Bytes: e.size, Snapshot: rec.Kind == RecordSnapshot})
	}
	return out, nil
}

// RunInfo summarises a stored run (ListRuns).
type RunInfo struct {
	ID      string
	Status  Status
	Step    int
	Created time.Time
	Updated time.Time
	Nodes   []string // nodes of the last step
	Next    []string
	Reason  string
	Error   string
	// Active: a writer holds the run now. A run stored as running that is not
	// active was cut off (crash, kill) and can be resumed.
	Active bool
}

// ListRuns lists the stored runs, oldest first. It reads one record per run.
// Runs it cannot read are left out and named by a *DamagedRunsError returned
// with the others (which are listed all the same).
func (c *Compiled[S]) ListRuns(ctx context.Context) ([]RunInfo, error) {
	if c.cp == nil {
		return nil, ErrNoCheckpointer
	}
	var damaged DamagedRunsError
	runs, err := c.cp.Runs(ctx)
	if dr := (*DamagedRunsError)(nil); errors.As(err, &dr) {
		for id, e := range dr.Runs {
			damaged.add(id, e)
		}
	} else if err != nil {
		return nil, fmt.Errorf("graph: list runs: %w", err)
	}
	out := make([]RunInfo, 0, len(runs))
	for _, sr := range runs {
		info := RunInfo{ID: sr.ID, Active: sr.Active}
		e, err := decodePayload(sr.Last.Kind, sr.Last.Step, sr.Last.Data)
		if err != nil {
			damaged.add(sr.ID, fmt.Errorf("%w: %v", ErrCorrupt, err))
			continue
		}
		if sr.Last.Kind == RecordWrite {
			// The last record is a branch of a step in progress: read the whole tail.
			snap, err := c.State(ctx, sr.ID)
			if err != nil {
				damaged.add(sr.ID, err)
				continue
			}
			info.Status, info.Step, info.Created, info.Updated = snap.Status, snap.Step, snap.Created, snap.Updated
			info.Nodes, info.Next, info.Reason, info.Error = snap.Nodes, snap.Next, snap.Reason, snap.Error
			out = append(out, info)
			continue
		}
		info.Status, info.Step, info.Created, info.Updated = e.status, sr.Last.Step, e.created, e.time
		info.Nodes, info.Next, info.Reason, info.Error = e.nodes, e.next, e.reason, e.errMsg
		out = append(out, info)
	}
	sortRuns(out)
	if len(damaged.Runs) > 0 {
		return out, &damaged
	}
	return out, nil
}
