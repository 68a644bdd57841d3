package graph

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// runner advances one run. Its state is the last committed checkpoint.
type runner[S any] struct {
	c     *Compiled[S]
	env   callEnv
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
	sends   []sendTask[S] // Send tasks of the next step, after next
	// taskStep is the step the next tasks were scheduled in: step+1, unless
	// an update kept them (commitUpdate). Their subgraph runs are named by it.
	taskStep int
	spare    []int // second buffer for computing next
	seen     []bool
	created  time.Time
	meta     map[string]string
	lineage  map[string]string        // fork origin, kept in every stored metadata
	pending  map[taskKey]pendingWrite // branches of step+1 already finished
	// skipBefore: the run was paused before its next nodes and resumed, so it
	// does not pause there again; it holds (and is stored) until a step commits.
	skipBefore bool

	snapBytes, deltaBytes int // last snapshot's size, deltas written since
	buf                   []byte
	calls                 int        // steps taken in this Run/Resume call
	recent                [12]string // nodes of the last steps, for RecursionError
}

// callEnv is what one call runs with: the store (a subgraph's run uses its
// parent's), the durability mode and a parent's stop check.
type callEnv struct {
	cp      Checkpointer
	durable Durability
	stop    func() bool // a parent graph's stop check; nil at the top
}

// sendTask is a Send scheduled for the next step.
type sendTask[S any] struct {
	node int
	in   S
}

// taskKey names a task of a step: a node reached by an edge (send -1) or
// Send task number send.
type taskKey struct {
	node string
	send int
}

func (k taskKey) label() string {
	if k.send < 0 {
		return k.node
	}
	return k.node + "[" + strconv.Itoa(k.send) + "]"
}

type pendingWrite struct {
	changes []change
	reason  string // the branch returned Interrupt(reason)
}

func (c *Compiled[S]) newRunner(runID string, env callEnv) *runner[S] {
	r := &runner[S]{c: c, env: env, runID: runID, em: newEmitter(runID, c.sinks), seen: make([]bool, len(c.nodes))}
	r.track = env.cp != nil || r.em != nil
	if r.track {
		r.tr = newTracker[S](c.plan)
	}
	return r
}

// options reads the options of a call; update is nil without WithUpdate.
func (c *Compiled[S]) options(opts []RunOption) (rc runConfig, update func(S) (S, error), err error) {
	for _, o := range opts {
		o(&rc)
	}
	if rc.durability != "" && !rc.durability.valid() {
		return rc, nil, fmt.Errorf("WithDurability(%q): use DurabilitySync, DurabilityAsync or DurabilityExit", rc.durability)
	}
	if rc.update != nil {
		fn, ok := rc.update.(func(S) (S, error))
		if !ok {
			return rc, nil, fmt.Errorf("WithUpdate function %T does not take the graph's state type", rc.update)
		}
		update = fn
	}
	if (rc.hasGoTo || rc.meta != nil) && update == nil {
		return rc, nil, fmt.Errorf("Goto and SetMetadata need WithUpdate")
	}
	for _, n := range rc.goTo {
		if _, ok := c.byName[n]; !ok && n != End {
			return rc, nil, fmt.Errorf("Goto(%q): no such node", n)
		}
	}
	for k := range rc.meta {
		if k == MetaForkRun || k == MetaForkStep || k == MetaDurability {
			return rc, nil, fmt.Errorf("SetMetadata: %s is the runtime's own key", k)
		}
	}
	if rc.asNode != "" {
		if update == nil {
			return rc, nil, fmt.Errorf("AsNode(%q) needs WithUpdate", rc.asNode)
		}
		if _, ok := c.byName[rc.asNode]; !ok && rc.asNode != Start {
			return rc, nil, fmt.Errorf("AsNode(%q): no such node", rc.asNode)
		}
	}
	return rc, update, nil
}

// Run starts a new run from initial and advances it until End, an interrupt,
// a halt, a failure or cancellation. It returns the last committed state.
// With a checkpointer the run id must be new (ErrRunExists otherwise).
// WithDurability is the option that applies.
func (c *Compiled[S]) Run(ctx context.Context, runID string, initial S, opts ...RunOption) (S, error) {
	if !ValidRunID(runID) {
		return initial, fmt.Errorf("%w: %q", ErrInvalidRunID, runID)
	}
	rc, update, err := c.options(opts)
	if err == nil && update != nil {
		err = fmt.Errorf("WithUpdate applies to Resume and Fork; Run starts from its initial state")
	}
	if err != nil {
		return initial, fmt.Errorf("graph: start run %s: %w", runID, err)
	}
	return c.begin(ctx, callEnv{cp: c.cp, durable: c.runMode(rc.durability, nil)}, runID, initial)
}

func (c *Compiled[S]) begin(ctx context.Context, env callEnv, runID string, initial S) (S, error) {
	r := c.newRunner(runID, env)
	if env.cp != nil {
		w, err := env.cp.Open(ctx, runID, true)
		if err != nil {
			return initial, fmt.Errorf("graph: start run %s: %w", runID, err)
		}
		r.w = wrapWriter(w, env.durable)
		defer r.close()
		if env.durable != DurabilitySync {
			r.lineage = map[string]string{MetaDurability: string(env.durable)}
		}
	}
	r.emit(Event{Kind: EventRunStart})
	r.state, r.created, r.taskStep = initial, time.Now(), 1
	next, sends, err := r.successors(ctx, []int{-1}, []S{initial})
	if err != nil {
		r.emit(Event{Kind: EventRunEnd, Status: StatusFailed, Error: err.Error()})
		return initial, err
	}
	r.next, r.sends = next, sends
	if err := r.commitFirst(ctx); err != nil {
		r.emit(Event{Kind: EventRunEnd, Status: StatusFailed, Error: err.Error()})
		return initial, fmt.Errorf("graph: start run %s: %w", runID, err)
	}
	return r.loop(ctx)
}

// Resume continues a stored run from its last checkpoint: nodes that had not
// finished run (again); a finished branch of a parallel step does not.
// WithUpdate (with AsNode) edits the state first; WithDurability applies.
func (c *Compiled[S]) Resume(ctx context.Context, runID string, opts ...RunOption) (S, error) {
	var zero S
	if c.cp == nil {
		return zero, ErrNoCheckpointer
	}
	if !ValidRunID(runID) {
		return zero, fmt.Errorf("%w: %q", ErrInvalidRunID, runID)
	}
	rc, update, err := c.options(opts)
	if err != nil {
		return zero, fmt.Errorf("graph: resume %s: %w", runID, err)
	}
	return c.resume(ctx, callEnv{cp: c.cp, durable: rc.durability}, runID, update, rc)
}

// resume continues a stored run; env.durable "" takes the run's own mode.

func (c *Compiled[S]) resume(ctx context.Context, env callEnv, runID string, update func(S) (S, error), rc runConfig) (S, error) {
	var zero S
	w, err := env.cp.Open(ctx, runID, false)
	if err != nil {
		return zero, fmt.Errorf("graph: resume %s: %w", runID, err)
	}
	recs, err := env.cp.Tail(ctx, runID)
	var ld *loaded[S]
	if err == nil {
		ld, err = c.replay(runID, recs, -1)
	}
	if err != nil {
		_ = w.Close()
		return zero, fmt.Errorf("graph: resume %s: %w", runID, err)
	}
	env.durable = c.runMode(env.durable, ld.meta)
	r := c.newRunner(runID, env)
	r.w = wrapWriter(w, env.durable)
	defer r.close()
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
		if err := r.commitUpdate(ctx, s, rc, ""); err != nil {
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
	r.skipBefore, r.taskStep = ld.pausedBefore, ld.taskStep
	r.lineage = lineageOf(ld.meta)
	static := ld.next[:len(ld.next)-len(ld.sends)]
	next, err := r.c.indexes(static)
	if err != nil {
		return err
	}
	r.next = next
	for _, sd := range ld.sends {
		i, ok := r.c.byName[sd.node]
		if !ok {
			return fmt.Errorf("checkpoint names node %q, which the graph no longer has", sd.node)
		}
		r.sends = append(r.sends, sendTask[S]{node: i, in: sd.in})
	}
	if len(ld.pending) > 0 {
		r.pending = ld.pending
		for k := range ld.pending {
			if _, ok := r.c.byName[k.node]; !ok {
				return fmt.Errorf("checkpoint names node %q, which the graph no longer has", k.node)
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
		if len(r.next) == 0 && len(r.sends) == 0 {
			return r.state, r.finish(ctx)
		}
		if err := ctx.Err(); err != nil {
			return r.state, r.cancelled(ctx, err)
		}
		if r.stopRequested() {
			return r.state, r.halt(ctx, "")
		}
		if r.calls >= r.c.limit {
			return r.state, r.fail(ctx, &RecursionError{Limit: r.c.limit, Last: r.lastSteps()})
		}
		if i := r.anyTaskFlag(flagInterruptBefore); i >= 0 && !r.skipBefore {
			return r.state, r.pause(ctx, "before "+r.c.nodes[i].name, true)
		}
		r.calls++
		sideEffects := r.anyTaskFlag(flagSideEffects) >= 0
		if r.w != nil && sideEffects && r.env.durable != DurabilityExit {
			if err := r.sync(ctx); err != nil {
				return r.state, r.fail(ctx, err)
			}
		}
		var (
			ran       []string
			out       S
			next      []int
			sends     []sendTask[S]
			changes   []change
			interrupt string
			err       error
		)
		if len(r.next) == 1 && len(r.sends) == 0 && len(r.pending) == 0 {
			ran = r.c.nodes[r.next[0]].label
			out, next, sends, changes, interrupt, err = r.single(ctx, r.next[0])
		} else {
			ran, out, next, sends, changes, interrupt, err = r.parallel(ctx)
		}
		if err != nil {
			var sp *subgraphStop
			if errors.As(err, &sp) {
				// A subgraph paused or halted inside this step: the step is not
				// committed and its subgraph continues where it stopped on Resume.
				if sp.halted {
					return r.state, r.halt(ctx, sp.reason)
				}
				return r.state, r.pause(ctx, sp.reason, true)
			}
			if cerr := ctx.Err(); cerr != nil {
				return r.state, r.cancelled(ctx, cerr)
			}
			return r.state, r.fail(ctx, err)
		}
		r.recent[(r.step+1)%len(r.recent)] = strings.Join(ran, "+")
		if interrupt == "" {
			if i := r.anyTaskFlag(flagInterruptAfter); i >= 0 {
				interrupt = "after " + r.c.nodes[i].name
			}
		}
		// A pause is stored with the step that asked for it: a torn or
		// lost last record then loses the step too, which runs again and
		// pauses again, instead of leaving a step whose pause is gone.
		if err := r.commit(ctx, ran, out, next, sends, changes, interrupt); err != nil {
			return r.state, r.fail(ctx, err)
		}
		if interrupt != "" {
			return r.state, r.paused(ctx, interrupt)
		}
		if r.w != nil && sideEffects && r.env.durable != DurabilityExit {
			if err := r.sync(ctx); err != nil {
				return r.state, r.fail(ctx, err)
			}
		}
	}
}

// stopRequested polls the graph's stop check and a parent graph's.
func (r *runner[S]) stopRequested() bool {
	return (r.c.stop != nil && r.c.stop(r.runID)) || (r.env.stop != nil && r.env.stop())
}

// anyTaskFlag returns a node of the next step (edge or Send) with flag, or -1.
func (r *runner[S]) anyTaskFlag(flag uint8) int {
	if i := r.anyFlag(r.next, flag); i >= 0 {
		return i
	}
	for _, t := range r.sends {
		if r.c.nodes[t.node].flags&flag != 0 {
			return t.node
		}
	}
	return -1
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
