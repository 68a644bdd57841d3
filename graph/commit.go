package graph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Storing the steps of a run: the first snapshot, each committed step as a
// delta or a snapshot, a finished parallel branch, a status.

// header fills the run-level fields every record carries, so that the last
// record alone tells a run's status.
func (r *runner[S]) header(e *entry, status Status) {
	e.status, e.created, e.time = status, r.created, time.Now()
	e.next = r.nextNames(r.next, r.sends)
}

// nextNames lists the nodes of the next step: those reached by edges, then
// the node of each Send task.
func (r *runner[S]) nextNames(next []int, sends []sendTask[S]) []string {
	out := r.names(next)
	for _, t := range sends {
		out = append(out, r.c.nodes[t.node].name)
	}
	return out
}

// sendRecs encodes the Send tasks as changes from the state s they follow,
// filtered like the state (and the live inputs take the filtered values).
func (r *runner[S]) sendRecs(s S, sends []sendTask[S]) ([]sendRec, error) {
	if len(sends) == 0 {
		return nil, nil
	}
	tr := newTracker[S](r.c.plan)
	if _, err := tr.reset(s); err != nil {
		return nil, err
	}
	out := make([]sendRec, len(sends))
	for k := range sends {
		t := &sends[k]
		ch, err := tr.diff(&t.in)
		if err != nil {
			return nil, fmt.Errorf("input of Send task %d to %s: %w", k, r.c.nodes[t.node].name, err)
		}
		if filtered, changed := r.c.redactChanges(ch); changed {
			if err := r.c.adopt(&t.in, ch, filtered); err != nil {
				return nil, fmt.Errorf("filtered input of Send task %d to %s: %w", k, r.c.nodes[t.node].name, err)
			}
			ch = filtered
		}
		out[k] = sendRec{node: r.c.nodes[t.node].name, changes: ch}
	}
	return out, nil
}

func (r *runner[S]) writeStatus(ctx context.Context, status Status, reason, msg string, before bool) error {
	e := entry{reason: r.c.redactText(reason), errMsg: r.c.redactText(msg), pausedBefore: before}
	r.header(&e, status)
	e.nodes = r.lastRan
	r.buf = encodePayload(r.buf[:0], &e)
	if err := r.w.Append(context.WithoutCancel(ctx), Record{Kind: RecordStatus, Step: r.step, Data: r.buf}); err != nil {
		return fmt.Errorf("graph: run %s: store status %s: %w", r.runID, status, err)
	}
	return nil
}

// commitFirst stores step 0: the initial state as a snapshot.
func (r *runner[S]) commitFirst(ctx context.Context) error {
	if !r.track {
		return nil
	}
	full, err := r.tr.reset(r.state)
	if err != nil {
		return err
	}
	if filtered, changed := r.c.redactChanges(full); changed {
		if err := r.c.adopt(&r.state, full, filtered); err != nil {
			return fmt.Errorf("graph: run %s: filtered state: %w", r.runID, err)
		}
		if _, err := r.tr.reset(r.state); err != nil {
			return err
		}
		full = filtered
	}
	if r.w == nil {
		return nil
	}
	if r.c.meta != nil {
		m, err := r.c.meta(ctx, r.state)
		if err != nil {
			return fmt.Errorf("graph: run %s: checkpoint metadata of step 0: %w", r.runID, err)
		}
		r.meta = m
	}
	r.meta = withLineage(r.meta, r.lineage)
	e := entry{nodes: []string{Start}, changes: full, meta: r.meta}
	r.header(&e, StatusRunning)
	if len(r.next) == 0 && len(r.sends) == 0 {
		e.status = StatusDone // Start leads only to End, or to no Sends
	}
	if e.sends, err = r.sendRecs(r.state, r.sends); err != nil {
		return fmt.Errorf("graph: run %s: step 0: %w", r.runID, err)
	}
	r.buf = encodePayload(r.buf[:0], &e)
	if err := r.w.Append(context.WithoutCancel(ctx), Record{Kind: RecordSnapshot, Step: 0, Data: r.buf}); err != nil {
		return err
	}
	r.snapBytes, r.deltaBytes = len(r.buf), 0
	r.emit(Event{Kind: EventCheckpoint, Bytes: len(r.buf), Next: e.next, Changed: changedNames(full)})
	return nil
}

// commit stores the step that ran nodes ran and makes out the state. A delta
// holds only the changed fields; a full snapshot is written instead once the
// deltas since the last one outweigh it (and at least WithSnapshotBytes).
// A pause asked by the step (pause != "") is recorded in the same record, so
// no crash can keep the step and lose its pause.
func (r *runner[S]) commit(ctx context.Context, ran []string, out S, next []int, sends []sendTask[S], changes []change, pause string) error {
	step := r.step + 1
	bytes := 0
	if filtered, changed := r.c.redactChanges(changes); changed {
		if err := r.c.adopt(&out, changes, filtered); err != nil {
			return fmt.Errorf("graph: run %s: filtered state of step %d: %w", r.runID, step, err)
		}
		changes = filtered
	}
	if r.w != nil {
		var meta map[string]string
		if r.c.meta != nil {
			m, err := r.c.meta(ctx, out)
			if err != nil {
				return fmt.Errorf("graph: run %s: checkpoint metadata of step %d: %w", r.runID, step, err)
			}
			m = withLineage(m, r.lineage)
			if !maps.Equal(m, r.meta) {
				meta = m
				if meta == nil {
					meta = map[string]string{}
				}
			}
		}
		status := StatusRunning
		if len(next) == 0 && len(sends) == 0 {
			status = StatusDone
		}
		e := entry{nodes: ran, meta: meta}
		if pause != "" {
			status, e.reason = StatusPaused, r.c.redactText(pause)
		}
		e.status, e.created, e.time, e.next = status, r.created, time.Now(), r.nextNames(next, sends)
		var err error
		if e.sends, err = r.sendRecs(out, sends); err != nil {
			return fmt.Errorf("graph: run %s: step %d: %w", r.runID, step, err)
		}
		kind := RecordDelta
		e.changes = changes
		if r.deltaBytes >= max(r.c.snapBytes, r.snapBytes) {
			kind = RecordSnapshot
			o := out
			full, err := r.tr.fullOf(&o)
			if err != nil {
				return err
			}
			e.changes, _ = r.c.redactChanges(full) // the state is filtered already; the store gets no chance to differ
			if e.meta == nil && r.meta != nil {
				e.meta = r.meta // State loads from the last snapshot on: it must repeat the metadata
			}
		}
		r.buf = encodePayload(r.buf[:0], &e)
		if err := r.w.Append(context.WithoutCancel(ctx), Record{Kind: kind, Step: step, Data: r.buf}); err != nil {
			return fmt.Errorf("graph: run %s: store step %d: %w", r.runID, step, err)
		}
		bytes = len(r.buf)
		if kind == RecordSnapshot {
			r.snapBytes, r.deltaBytes = bytes, 0
		} else {
			r.deltaBytes += bytes
		}
		if meta != nil {
			r.meta = meta
		}
	}
	if r.track {
		if err := r.tr.commit(out, changes); err != nil {
			return err
		}
	}
	r.state, r.step, r.skipBefore, r.taskStep = out, step, false, step+1
	if r.w != nil {
		r.lastRan = ran
	}
	r.spare, r.next, r.sends = r.next[:0], next, sends
	r.pending = nil
	if r.em != nil {
		r.emit(Event{Kind: EventCheckpoint, Step: step, Bytes: bytes, Changed: changedNames(changes), Next: r.nextNames(next, sends)})
	}
	return nil
}

// commitUpdate stores a state edited by Resume(WithUpdate) as its own step.
// Attributed to rc.asNode, the next step is asNode's successors on the edited
// state; with Goto, the nodes it names; otherwise the next nodes stay, and
// branches already finished are stored again for the new step.
// A non-empty halt stores the run halted with that reason (Update).
func (r *runner[S]) commitUpdate(ctx context.Context, s S, rc runConfig, halt string) error {
	changes, err := r.tr.diff(&s)
	if err != nil {
		return err
	}
	if filtered, changed := r.c.redactChanges(changes); changed {
		if err := r.c.adopt(&s, changes, filtered); err != nil {
			return err
		}
		changes = filtered
	}
	pending := r.pending
	next, sends := append([]int(nil), r.next...), r.sends
	nodes := []string{UpdateNode}
	before := r.skipBefore
	taskStep := r.taskStep // the same tasks: their subgraph runs keep their ids
	if asNode := rc.asNode; asNode != "" {
		idx := -1
		if asNode != Start {
			idx = r.c.byName[asNode]
		}
		if next, sends, err = r.successors(ctx, []int{idx}, []S{s}); err != nil {
			return err
		}
		next = append([]int(nil), next...)
		nodes, pending, before, taskStep = []string{asNode}, nil, false, r.step+2
	}
	if rc.hasGoTo {
		next, sends, pending, before, taskStep = r.c.gotoIndexes(rc.goTo), nil, nil, false, r.step+2
	}
	var meta map[string]string
	if rc.meta != nil {
		meta = withLineage(maps.Clone(r.meta), rc.meta)
		meta = withLineage(meta, r.lineage)
	}
	e := entry{nodes: nodes, changes: changes, pausedBefore: before, meta: meta}
	if taskStep != r.step+2 {
		e.taskStep = taskStep
	}
	e.status, e.created, e.time, e.next = StatusRunning, r.created, time.Now(), r.nextNames(next, sends)
	if halt != "" {
		e.status, e.reason = StatusHalted, r.c.redactText(halt)
	}
	if len(next) == 0 && len(sends) == 0 {
		e.status, e.reason = StatusDone, ""
	}
	if e.sends, err = r.sendRecs(s, sends); err != nil {
		return err
	}
	r.buf = encodePayload(r.buf[:0], &e)
	if err := r.w.Append(context.WithoutCancel(ctx), Record{Kind: RecordDelta, Step: r.step + 1, Data: r.buf}); err != nil {
		return err
	}
	r.deltaBytes += len(r.buf)
	if err := r.tr.commit(s, changes); err != nil {
		return err
	}
	r.state, r.step, r.next, r.sends, r.lastRan, r.skipBefore, r.taskStep = s, r.step+1, next, sends, nodes, before, taskStep
	if meta != nil {
		r.meta = meta
	}
	r.emit(Event{Kind: EventCheckpoint, Node: nodes[0], Bytes: len(r.buf), Changed: changedNames(changes), Next: e.next})
	for _, k := range slices.SortedFunc(maps.Keys(pending), compareTasks) {
		if err := r.storeWrite(ctx, k, pending[k]); err != nil {
			return err
		}
	}
	r.pending = pending
	return nil
}

func compareTasks(a, b taskKey) int {
	if c := strings.Compare(a.node, b.node); c != 0 {
		return c
	}
	return a.send - b.send
}

// storeWrite records one finished task of the parallel step being computed.
func (r *runner[S]) storeWrite(ctx context.Context, k taskKey, pw pendingWrite) error {
	stored, _ := r.c.redactChanges(pw.changes) // the step's commit filters what the run goes on with
	e := entry{nodes: []string{k.node}, changes: stored, reason: r.c.redactText(pw.reason), task: k.send + 1}
	node := k.label()
	r.header(&e, StatusRunning)
	buf := encodePayload(nil, &e)
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if err := r.w.Append(context.WithoutCancel(ctx), Record{Kind: RecordWrite, Step: r.step + 1, Data: buf}); err != nil {
		return fmt.Errorf("graph: run %s: store result of %s: %w", r.runID, node, err)
	}
	return nil
}
