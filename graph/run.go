package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"
)

// runner advances one run. Its state is the last committed checkpoint.
type runner[S any] struct {
	c     *Compiled[S]
	runID string
	w     RunWriter // nil without a checkpointer
	wmu   sync.Mutex
	em    *emitter // nil without sinks
	tr    *tracker[S]
	track bool // diffs are needed at every step (store or sinks)

	state   S
	step    int
	lastRan []string // nodes of the last committed step
	next    []int
	spare   []int // second buffer for computing next
	seen    []bool
	created time.Time
	meta    map[string]string
	pending map[string]pendingWrite // branches of step+1 already finished
	// skipBefore: the run was paused before its next nodes and resumed, so it
	// does not pause there again; it holds (and is stored) until a step commits.
	skipBefore bool

	snapBytes, deltaBytes int // last snapshot's size, deltas written since
	buf                   []byte
	calls                 int        // steps taken in this Run/Resume call
	recent                [12]string // nodes of the last steps, for RecursionError
}

type pendingWrite struct {
	changes []change
	reason  string // the branch returned Interrupt(reason)
}

func (c *Compiled[S]) newRunner(runID string) *runner[S] {
	r := &runner[S]{c: c, runID: runID, em: newEmitter(runID, c.sinks), seen: make([]bool, len(c.nodes))}
	r.track = c.cp != nil || r.em != nil
	if r.track {
		r.tr = newTracker[S](c.plan)
	}
	return r
}

// Run starts a new run from initial and advances it until End, an interrupt,
// a halt, a failure or cancellation. It returns the last committed state.
// With a checkpointer the run id must be new (ErrRunExists otherwise).
func (c *Compiled[S]) Run(ctx context.Context, runID string, initial S) (S, error) {
	if !ValidRunID(runID) {
		return initial, fmt.Errorf("%w: %q", ErrInvalidRunID, runID)
	}
	r := c.newRunner(runID)
	if c.cp != nil {
		w, err := c.cp.Open(ctx, runID, true)
		if err != nil {
			return initial, fmt.Errorf("graph: start run %s: %w", runID, err)
		}
		r.w = w
		defer r.close()
	}
	r.emit(Event{Kind: EventRunStart})
	r.state, r.created = initial, time.Now()
	next, err := r.successors(ctx, []int{-1}, []S{initial})
	if err != nil {
		r.emit(Event{Kind: EventRunEnd, Status: StatusFailed, Error: err.Error()})
		return initial, err
	}
	r.next = next
	if err := r.commitFirst(ctx); err != nil {
		r.emit(Event{Kind: EventRunEnd, Status: StatusFailed, Error: err.Error()})
		return initial, fmt.Errorf("graph: start run %s: %w", runID, err)
	}
	return r.loop(ctx)
}

// Resume continues a stored run from its last checkpoint: nodes that had not
// finished run (again); a finished branch of a parallel step does not.
func (c *Compiled[S]) Resume(ctx context.Context, runID string, opts ...ResumeOption) (S, error) {
	var zero S
	if c.cp == nil {
		return zero, ErrNoCheckpointer
	}
	if !ValidRunID(runID) {
		return zero, fmt.Errorf("%w: %q", ErrInvalidRunID, runID)
	}
	var rc resumeConfig
	for _, o := range opts {
		o(&rc)
	}
	var update func(S) (S, error)
	if rc.update != nil {
		fn, ok := rc.update.(func(S) (S, error))
		if !ok {
			return zero, fmt.Errorf("graph: resume %s: WithUpdate function %T does not take the graph's state type", runID, rc.update)
		}
		update = fn
	}
	r := c.newRunner(runID)
	w, err := c.cp.Open(ctx, runID, false)
	if err != nil {
		return zero, fmt.Errorf("graph: resume %s: %w", runID, err)
	}
	r.w = w
	defer r.close()
	recs, err := c.cp.Tail(ctx, runID)
	if err != nil {
		return zero, fmt.Errorf("graph: resume %s: %w", runID, err)
	}
	ld, err := c.replay(runID, recs, -1)
	if err != nil {
		return zero, fmt.Errorf("graph: resume %s: %w", runID, err)
	}
	if ld.status == StatusDone {
		return ld.state, fmt.Errorf("graph: resume %s: %w at step %d", runID, ErrRunFinished, ld.step)
	}
	if err := r.restore(ld); err != nil {
		return ld.state, fmt.Errorf("graph: resume %s: %w", runID, err)
	}
	r.emit(Event{Kind: EventRunStart, Status: ld.status, Next: ld.next})
	if update != nil {
		s, err := update(r.state)
		if err != nil {
			return r.state, fmt.Errorf("graph: resume %s: update: %w", runID, err)
		}
		if err := r.commitUpdate(ctx, s); err != nil {
			return r.state, r.fail(ctx, fmt.Errorf("graph: resume %s: store update: %w", runID, err))
		}
	} else if err := r.writeStatus(ctx, StatusRunning, "", "", r.skipBefore); err != nil {
		return r.state, r.fail(ctx, err)
	}
	return r.loop(ctx)
}

func (r *runner[S]) restore(ld *loaded[S]) error {
	r.state, r.step, r.created, r.meta, r.lastRan = ld.state, ld.step, ld.created, ld.meta, ld.nodes
	r.snapBytes, r.deltaBytes = ld.snapBytes, ld.deltaBytes
	r.skipBefore = ld.pausedBefore
	next, err := r.c.indexes(ld.next)
	if err != nil {
		return err
	}
	r.next = next
	if len(ld.pending) > 0 {
		r.pending = ld.pending
		for name := range ld.pending {
			if _, ok := r.c.byName[name]; !ok {
				return fmt.Errorf("checkpoint names node %q, which the graph no longer has", name)
			}
		}
	}
	if r.track {
		if _, err := r.tr.reset(r.state); err != nil {
			return err
		}
	}
	return nil
}

func (c *Compiled[S]) indexes(names []string) ([]int, error) {
	out := make([]int, 0, len(names))
	for _, n := range names {
		i, ok := c.byName[n]
		if !ok {
			return nil, fmt.Errorf("checkpoint names node %q, which the graph no longer has", n)
		}
		out = append(out, i)
	}
	return out, nil
}

func (r *runner[S]) close() {
	if r.w != nil {
		_ = r.w.Close()
	}
}

func (r *runner[S]) emit(ev Event) {
	if r.em == nil {
		return
	}
	if ev.Step == 0 {
		ev.Step = r.step
	}
	r.em.emit(ev)
}

func (r *runner[S]) anyFlag(idx []int, flag uint8) int {
	for _, i := range idx {
		if r.c.nodes[i].flags&flag != 0 {
			return i
		}
	}
	return -1
}

func (r *runner[S]) names(idx []int) []string {
	out := make([]string, len(idx))
	for i, n := range idx {
		out[i] = r.c.nodes[n].name
	}
	return out
}

// loop runs steps until the run stops; it returns the last committed state.
func (r *runner[S]) loop(ctx context.Context) (S, error) {
	for {
		if len(r.next) == 0 {
			return r.state, r.finish(ctx)
		}
		if err := ctx.Err(); err != nil {
			return r.state, r.interrupted(ctx, err)
		}
		if r.c.stop != nil && r.c.stop(r.runID) {
			return r.state, r.halt(ctx)
		}
		if r.calls >= r.c.limit {
			return r.state, r.fail(ctx, &RecursionError{Limit: r.c.limit, Last: r.lastSteps()})
		}
		if i := r.anyFlag(r.next, flagInterruptBefore); i >= 0 && !r.skipBefore {
			return r.state, r.pause(ctx, "before "+r.c.nodes[i].name, true)
		}
		r.calls++
		if r.w != nil && r.anyFlag(r.next, flagSideEffects) >= 0 {
			if err := r.sync(ctx); err != nil {
				return r.state, r.fail(ctx, err)
			}
		}
		ran := r.next
		var (
			out       S
			next      []int
			changes   []change
			interrupt string
			err       error
		)
		if len(ran) == 1 && len(r.pending) == 0 {
			out, next, changes, interrupt, err = r.single(ctx, ran[0])
		} else {
			out, next, changes, interrupt, err = r.parallel(ctx, ran)
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return r.state, r.interrupted(ctx, cerr)
			}
			return r.state, r.fail(ctx, err)
		}
		r.recent[(r.step+1)%len(r.recent)] = r.stepLabel(ran)
		if err := r.commit(ctx, ran, out, next, changes); err != nil {
			return r.state, r.fail(ctx, err)
		}
		if r.w != nil && r.anyFlag(ran, flagSideEffects) >= 0 {
			if err := r.sync(ctx); err != nil {
				return r.state, r.fail(ctx, err)
			}
		}
		if interrupt != "" {
			return r.state, r.pause(ctx, interrupt, false)
		}
		if i := r.anyFlag(ran, flagInterruptAfter); i >= 0 {
			return r.state, r.pause(ctx, "after "+r.c.nodes[i].name, false)
		}
	}
}

func (r *runner[S]) stepLabel(ran []int) string {
	if len(ran) == 1 {
		return r.c.nodes[ran[0]].name
	}
	return strings.Join(r.names(ran), "+")
}

// lastSteps lists the recorded nodes of the last steps, oldest first.
func (r *runner[S]) lastSteps() []string {
	var out []string
	n := len(r.recent)
	for s := r.step - n + 1; s <= r.step; s++ {
		if s >= 1 && r.recent[s%n] != "" {
			out = append(out, r.recent[s%n])
		}
	}
	return out
}

func (r *runner[S]) sync(ctx context.Context) error {
	if err := r.w.Sync(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("graph: run %s: sync checkpoints: %w", r.runID, err)
	}
	return nil
}

// finish: the last checkpoint already says done; make it durable.
func (r *runner[S]) finish(ctx context.Context) error {
	if r.w != nil {
		if err := r.sync(ctx); err != nil {
			r.emit(Event{Kind: EventRunEnd, Status: StatusDone, Error: err.Error()})
			return err
		}
	}
	r.emit(Event{Kind: EventRunEnd, Status: StatusDone})
	return nil
}

// stopWith stores a terminal status for this call, syncs, and reports it.
func (r *runner[S]) stopWith(ctx context.Context, status Status, reason string, cause error, pausedBefore bool) error {
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	var serr error
	if r.w != nil {
		serr = r.writeStatus(ctx, status, reason, msg, pausedBefore || r.skipBefore)
		if serr == nil {
			serr = r.sync(ctx)
		}
	}
	if cause != nil && status == StatusFailed {
		r.emit(Event{Kind: EventError, Error: msg})
	}
	end := Event{Kind: EventRunEnd, Status: status, Reason: reason, Error: msg}
	if serr != nil {
		end.Error = strings.TrimPrefix(end.Error+"; ", "; ") + serr.Error()
	}
	r.emit(end)
	if serr != nil {
		if cause == nil {
			return serr
		}
		return errors.Join(cause, serr)
	}
	return nil
}

func (r *runner[S]) fail(ctx context.Context, err error) error {
	if serr := r.stopWith(ctx, StatusFailed, "", err, false); serr != nil {
		return serr
	}
	return err
}

func (r *runner[S]) interrupted(ctx context.Context, cause error) error {
	err := fmt.Errorf("graph: run %s interrupted at step %d: %w", r.runID, r.step, cause)
	if serr := r.stopWith(ctx, StatusInterrupted, "", err, false); serr != nil {
		return serr
	}
	return err
}

func (r *runner[S]) halt(ctx context.Context) error {
	err := fmt.Errorf("graph: run %s stopped at step %d: %w", r.runID, r.step, ErrHalted)
	if serr := r.stopWith(ctx, StatusHalted, "", nil, false); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}

func (r *runner[S]) pause(ctx context.Context, reason string, before bool) error {
	r.emit(Event{Kind: EventInterrupt, Reason: reason, Next: r.names(r.next)})
	err := fmt.Errorf("graph: run %s at step %d (%s): %w", r.runID, r.step, reason, ErrPaused)
	if serr := r.stopWith(ctx, StatusPaused, reason, nil, before); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}

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
		r.meta = r.c.meta(ctx, r.state)
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
			if m := r.c.meta(ctx, out); !maps.Equal(m, r.meta) {
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
	for _, name := range sortedKeys(pending) {
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
