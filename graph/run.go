package graph

import (
	"context"
	"fmt"
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
			return r.state, r.cancelled(ctx, err)
		}
		if r.c.stop != nil && r.c.stop(r.runID) {
			return r.state, r.halt(ctx, "")
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
				return r.state, r.cancelled(ctx, cerr)
			}
			return r.state, r.fail(ctx, err)
		}
		r.recent[(r.step+1)%len(r.recent)] = r.stepLabel(ran)
		if interrupt == "" {
			if i := r.anyFlag(ran, flagInterruptAfter); i >= 0 {
				interrupt = "after " + r.c.nodes[i].name
			}
		}
		// A pause is stored with the step that asked for it: a torn or
		// lost last record then loses the step too, which runs again and
		// pauses again, instead of leaving a step whose pause is gone.
		if err := r.commit(ctx, ran, out, next, changes, interrupt); err != nil {
			return r.state, r.fail(ctx, err)
		}
		if interrupt != "" {
			return r.state, r.paused(ctx, interrupt)
		}
		if r.w != nil && r.anyFlag(ran, flagSideEffects) >= 0 {
			if err := r.sync(ctx); err != nil {
				return r.state, r.fail(ctx, err)
			}
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
