package graph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Storing the steps of a run: the first snapshot, each committed step as a
// delta or a snapshot, a finished parallel branch, a status.

// header fills the run-level fields every record carries, so that the last
// record alone tells a run's status.
func (r *runner[S]) header(e *entry, status Status) {
	e.status, e.created, e.time = status, r.created, time.Now()
	e.next = r.names(r.next)
}

func (r *runner[S]) writeStatus(ctx context.Context, status Status, reason, msg string, before bool) error {
	e := entry{reason: reason, errMsg: msg, pausedBefore: before}
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
	e := entry{nodes: []string{Start}, changes: full, meta: r.meta}
	r.header(&e, StatusRunning)
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
func (r *runner[S]) commit(ctx context.Context, ran []int, out S, next []int, changes []change) error {
	step := r.step + 1
	bytes := 0
	if r.w != nil {
		var meta map[string]string
		if r.c.meta != nil {
			m, err := r.c.meta(ctx, out)
			if err != nil {
				return fmt.Errorf("graph: run %s: checkpoint metadata of step %d: %w", r.runID, step, err)
			}
			if !maps.Equal(m, r.meta) {
				meta = m
				if meta == nil {
					meta = map[string]string{}
				}
			}
		}
		status := StatusRunning
		if len(next) == 0 {
			status = StatusDone
		}
		e := entry{nodes: r.names(ran), meta: meta}
		e.status, e.created, e.time, e.next = status, r.created, time.Now(), r.names(next)
		kind := RecordDelta
		e.changes = changes
		if r.deltaBytes >= max(r.c.snapBytes, r.snapBytes) {
			kind = RecordSnapshot
			o := out
			full, err := r.tr.fullOf(&o)
			if err != nil {
				return err
			}
			e.changes = full
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
	r.state, r.step, r.skipBefore = out, step, false
	if r.w != nil {
		r.lastRan = r.names(ran)
	}
	r.spare, r.next = r.next[:0], next
	r.pending = nil
	if r.em != nil {
		r.emit(Event{Kind: EventCheckpoint, Step: step, Bytes: bytes, Changed: changedNames(changes), Next: r.names(next)})
	}
	return nil
}

// commitUpdate stores a state edited by Resume(WithUpdate) as its own step;
// branches already finished are stored again for the new step.
func (r *runner[S]) commitUpdate(ctx context.Context, s S) error {
	changes, err := r.tr.diff(&s)
	if err != nil {
		return err
	}
	pending := r.pending
	next := append([]int(nil), r.next...)
	e := entry{nodes: []string{UpdateNode}, changes: changes, pausedBefore: r.skipBefore}
	r.header(&e, StatusRunning)
	r.buf = encodePayload(r.buf[:0], &e)
	if err := r.w.Append(context.WithoutCancel(ctx), Record{Kind: RecordDelta, Step: r.step + 1, Data: r.buf}); err != nil {
		return err
	}
	r.deltaBytes += len(r.buf)
	if err := r.tr.commit(s, changes); err != nil {
		return err
	}
	r.state, r.step, r.next, r.lastRan = s, r.step+1, next, []string{UpdateNode}
	r.emit(Event{Kind: EventCheckpoint, Node: UpdateNode, Bytes: len(r.buf), Changed: changedNames(changes), Next: e.next})
	for _, name := range slices.Sorted(maps.Keys(pending)) {
		if err := r.storeWrite(ctx, name, pending[name]); err != nil {
			return err
		}
	}
	r.pending = pending
	return nil
}

// storeWrite records one finished branch of the parallel step being computed.
func (r *runner[S]) storeWrite(ctx context.Context, node string, pw pendingWrite) error {
	e := entry{nodes: []string{node}, changes: pw.changes, reason: pw.reason}
	r.header(&e, StatusRunning)
	buf := encodePayload(nil, &e)
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if err := r.w.Append(context.WithoutCancel(ctx), Record{Kind: RecordWrite, Step: r.step + 1, Data: buf}); err != nil {
		return fmt.Errorf("graph: run %s: store result of %s: %w", r.runID, node, err)
	}
	return nil
}
