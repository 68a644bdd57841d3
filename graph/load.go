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
	sends        []loadedSend[S]          // Send tasks of step+1; their nodes end next
	taskStep     int                      // the step the next tasks were scheduled in
	pending      map[taskKey]pendingWrite // finished tasks of step+1
	snapBytes    int
	deltaBytes   int
}

type loadedSend[S any] struct {
	node string
	in   S
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
			ld.taskStep = taskStepOf(e)
			ld.reason, ld.errMsg, ld.pausedBefore = e.reason, e.errMsg, e.pausedBefore
			ld.sends = nil
			for k, sr := range e.sends {
				in := branchCopy(ld.state) // the input's appends must not land in the state's arrays
				if err := applyChanges(c.plan, &in, sr.changes); err != nil {
					return nil, fmt.Errorf("%w: run %s: step %d: Send task %d: %v", ErrCorrupt, runID, rec.Step, k, err)
				}
				ld.sends = append(ld.sends, loadedSend[S]{node: sr.node, in: in})
			}
		case RecordWrite:
			if rec.Step != ld.step+1 || len(e.nodes) != 1 {
				continue // a branch of a step that was later committed or superseded
			}
			if ld.pending == nil {
				ld.pending = map[taskKey]pendingWrite{}
			}
			ld.pending[taskKey{node: e.nodes[0], send: e.task - 1}] = pendingWrite{changes: e.changes, reason: e.reason}
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
	Next     []string // the nodes to run next (a Send task's node once per task); empty when done
	Pending  []string // tasks of the next step already finished (their results are stored): nodes, and Send tasks as "node[k]"
	Metadata map[string]string
	Created  time.Time
	Updated  time.Time
	Reason   string // why it paused
	Error    string // why it failed or was interrupted
}

// State returns the latest checkpoint of a run (or of a subgraph's run,
// SubgraphRunID). It reads the last segment only, and works while another
// process writes the run.
func (c *Compiled[S]) State(ctx context.Context, runID string) (Snapshot[S], error) {
	if c.cp == nil {
		return Snapshot[S]{}, ErrNoCheckpointer
	}
	return c.state(ctx, c.cp, runID)
}

func (c *Compiled[S]) state(ctx context.Context, cp Checkpointer, runID string) (Snapshot[S], error) {
	if !ValidRunPath(runID) {
		return Snapshot[S]{}, fmt.Errorf("%w: %q", ErrInvalidRunID, runID)
	}
	recs, err := cp.Tail(ctx, runID)
	if err != nil {
		return Snapshot[S]{}, fmt.Errorf("graph: state of %s: %w", runID, err)
	}
	ld, err := c.replay(runID, recs, -1)
	if err != nil {
		return Snapshot[S]{}, fmt.Errorf("graph: state of %s: %w", runID, err)
	}
	snap := Snapshot[S]{RunID: runID, State: ld.state, Status: ld.status, Step: ld.step, Nodes: ld.nodes, Next: ld.next,
		Metadata: ld.meta, Created: ld.created, Updated: ld.updated, Reason: ld.reason, Error: ld.errMsg}
	for _, k := range slices.SortedFunc(maps.Keys(ld.pending), compareTasks) {
		snap.Pending = append(snap.Pending, k.label())
	}
	return snap, nil
}

// StateAt returns the state committed at a given step, if it is still retained.
func (c *Compiled[S]) StateAt(ctx context.Context, runID string, step int) (S, error) {
	var zero S
	if c.cp == nil {
		return zero, ErrNoCheckpointer
	}
	ld, err := c.loadAt(ctx, c.cp, runID, step)
	if err != nil {
		return zero, fmt.Errorf("graph: state of %s at step %d: %w", runID, step, err)
	}
	return ld.state, nil
}

// CheckpointInfo describes one stored checkpoint (History).
type CheckpointInfo struct {
	// Namespace is empty for the run's own checkpoints; a checkpoint of a
	// subgraph's run has the part of its run id after the run's
	// ("review@4", "review@4/inner@2"; SubgraphRunID).
	Namespace string
	Step      int
	Nodes     []string // nodes that ran; a Send task as "node[k]"
	Next      []string
	Status    Status // as recorded with the checkpoint
	Time      time.Time
	Metadata  map[string]string
	Changed   []string // fields stored as changed (all fields for a snapshot)
	Bytes     int      // size of the stored record
	Snapshot  bool     // a full snapshot rather than a delta
}

// History lists a run's retained checkpoints, oldest first. The checkpoints
// of the runs of its subgraph nodes come just before the checkpoint of the
// step they ran in (or last, for a step still in progress), with their
// Namespace set.
func (c *Compiled[S]) History(ctx context.Context, runID string) ([]CheckpointInfo, error) {
	if c.cp == nil {
		return nil, ErrNoCheckpointer
	}
	return c.history(ctx, c.cp, runID, "")
}

func (c *Compiled[S]) history(ctx context.Context, cp Checkpointer, runID, ns string) ([]CheckpointInfo, error) {
	recs, err := cp.Records(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("graph: history of %s: %w", runID, err)
	}
	var out []CheckpointInfo
	var meta map[string]string
	var last *entry
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
		if last != nil && last.step >= rec.Step {
			continue // a snapshot written again for the same step by Prune
		}
		if last != nil { // a run's first checkpoint did not run its nodes (Start, or a fork's)
			if out, err = c.appendSubruns(ctx, cp, out, runID, ns, taskStepOf(last), e.nodes); err != nil {
				return nil, err
			}
		}
		out = append(out, CheckpointInfo{Namespace: ns, Step: rec.Step, Nodes: e.nodes, Next: e.next, Status: e.status, Time: e.time,
			Metadata: meta, Changed: changedNames(e.changes), Bytes: e.size, Snapshot: rec.Kind == RecordSnapshot})
		last = e
	}
	if last != nil && len(last.next) > 0 { // subgraphs of the step in progress
		labels := slices.Clone(last.next[:len(last.next)-len(last.sends)])
		for k, sr := range last.sends {
			labels = append(labels, taskKey{node: sr.node, send: k}.label())
		}
		if out, err = c.appendSubruns(ctx, cp, out, runID, ns, taskStepOf(last), labels); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// taskStepOf is the step the tasks after the checkpoint e were scheduled in.
func taskStepOf(e *entry) int {
	if e.taskStep > 0 {
		return e.taskStep
	}
	return e.step + 1
}

// appendSubruns adds the checkpoints of the subgraph runs among the tasks
// labels of step; a run not stored (it never started) is skipped.
func (c *Compiled[S]) appendSubruns(ctx context.Context, cp Checkpointer, out []CheckpointInfo, runID, ns string, step int, labels []string) ([]CheckpointInfo, error) {
	ids, nss, subs := c.subruns(runID, step, labels)
	for i, id := range ids {
		sub := nss[i]
		if ns != "" {
			sub = ns + "/" + sub
		}
		h, err := subs[i].history(ctx, cp, id, sub)
		if errors.Is(err, ErrRunNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, h...)
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

// ListRuns lists the stored runs, oldest first (not the runs of subgraphs,
// which History shows under their parent). It reads one record per run.
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
		if isSubRun(sr.ID) {
			continue // a subgraph's run belongs to its parent's history
		}
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
