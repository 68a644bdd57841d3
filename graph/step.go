package graph

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"sort"
	"sync"
	"time"
)

// single runs a step of one node.
func (r *runner[S]) single(ctx context.Context, idx int) (out S, next []int, sends []sendTask[S], changes []change, interrupt string, err error) {
	step := r.step + 1
	var dur time.Duration
	out, dur, err = r.runNode(ctx, idx, r.state, step, -1)
	if err != nil {
		reason, ok := interruptReason(err)
		if !ok {
			return out, nil, nil, nil, "", err
		}
		interrupt = reason
	}
	if r.track {
		o := out // only this copy escapes, and only when tracking
		if changes, err = r.tr.diff(&o); err != nil {
			return out, nil, nil, nil, "", fmt.Errorf("graph: run %s: node %q returned a state that cannot be stored: %w", r.runID, r.c.nodes[idx].name, err)
		}
	}
	if r.em != nil {
		r.emit(Event{Kind: EventNodeEnd, Step: step, Node: r.c.nodes[idx].name, Duration: dur, Changed: changedNames(changes)})
	}
	n := &r.c.nodes[idx]
	if n.simple {
		next = r.spare[:0]
		if n.single != endIdx {
			next = append(next, n.single)
		}
		return out, next, nil, changes, interrupt, nil
	}
	next, sends, err = r.successors(ctx, []int{idx}, []S{out})
	return out, next, sends, changes, interrupt, err
}

// interruptReason reports whether err is an Interrupt, and its reason.
func interruptReason(err error) (string, bool) {
	var ie *InterruptError
	if errors.As(err, &ie) {
		return ie.Reason, true
	}
	return "", false
}

// successors lists the nodes that follow ran (-1 stands for Start), each
// router seeing its own node's result: the nodes reached by edges sorted,
// without End or duplicates, and the Send tasks in the order they were made.
func (r *runner[S]) successors(_ context.Context, ran []int, outs []S) ([]int, []sendTask[S], error) {
	next := r.spare[:0]
	var sends []sendTask[S]
	add := func(d int) {
		if d != endIdx && !r.seen[d] {
			r.seen[d] = true
			next = append(next, d)
		}
	}
	var err error
	for k, i := range ran {
		n := &r.c.start
		if i >= 0 {
			n = &r.c.nodes[i]
		}
		for _, d := range n.static {
			add(d)
		}
		for _, cc := range n.conds {
			key := cc.route(outs[k])
			d, ok := cc.dest[key]
			if !ok {
				err = &RouteError{Node: n.name, Destination: key, Declared: cc.names}
				break
			}
			add(d)
		}
		for _, cs := range n.sends {
			for _, sd := range cs.fanout(outs[k]) {
				d, ok := cs.dest[sd.Node]
				if !ok {
					err = &RouteError{Node: n.name, Destination: sd.Node, Declared: cs.names}
					break
				}
				sends = append(sends, sendTask[S]{node: d, in: sd.State})
			}
		}
	}
	for _, d := range next {
		r.seen[d] = false
	}
	if err != nil {
		return nil, nil, err
	}
	sort.Ints(next)
	return next, sends, nil
}

// runNode runs one node with its timeout and retry policy; panics become a
// *NodeError with the stack. It returns the successful attempt's duration.
func (r *runner[S]) runNode(ctx context.Context, idx int, in S, step, send int) (S, time.Duration, error) {
	n := &r.c.nodes[idx]
	if n.flags&flagSubgraph != 0 {
		ctx = context.WithValue(ctx, subKey{}, &subScope{env: r.env, stop: r.stopRequested,
			parent: r.runID, node: n.name, step: r.taskStep, send: send})
	}
	attempts := max(1, n.cfg.retry.MaxAttempts)
	for attempt := 1; ; attempt++ {
		nctx := ctx
		var t0 time.Time
		if r.em != nil {
			nctx = context.WithValue(ctx, emitKey{}, &nodeScope{em: r.em, node: n.name, step: step})
			r.emit(Event{Kind: EventNodeStart, Step: step, Node: n.name, Attempt: attempt})
			t0 = time.Now()
		}
		var cancel context.CancelFunc
		if n.cfg.timeout > 0 {
			nctx, cancel = context.WithTimeout(nctx, n.cfg.timeout)
		}
		out, err, stack := callNode(ctx, nctx, n.name, n.fn, in)
		if cancel != nil {
			if ctx.Err() == nil && errors.Is(nctx.Err(), context.DeadlineExceeded) {
				// A result after the deadline is discarded: the caller asked for bounded time.
				err = fmt.Errorf("timed out after %v: %w", n.cfg.timeout, context.DeadlineExceeded)
			}
			cancel()
		}
		var dur time.Duration
		if r.em != nil {
			dur = time.Since(t0)
		}
		if err == nil {
			return out, dur, nil
		}
		var ie *InterruptError
		var sp *subgraphStop
		if errors.As(err, &ie) || errors.As(err, &sp) {
			return out, dur, err
		}
		if ctx.Err() != nil {
			return out, dur, err
		}
		ne := &NodeError{Node: n.name, Step: step, Attempt: attempt, Err: err, Stack: stack}
		if r.em != nil {
			r.emit(Event{Kind: EventNodeEnd, Step: step, Node: n.name, Attempt: attempt, Duration: dur, Error: err.Error()})
		}
		if attempt >= attempts || stack != "" || (n.cfg.retry.Retryable != nil && !n.cfg.retry.Retryable(err)) {
			return out, dur, ne
		}
		wait := backoff(n.cfg.retry, attempt)
		r.emit(Event{Kind: EventRetry, Step: step, Node: n.name, Attempt: attempt + 1, Duration: wait, Error: err.Error()})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return out, dur, ne
		case <-t.C:
		}
	}
}

// backoff is the wait after attempt: doubling from InitialBackoff up to
// MaxBackoff, scaled down by up to Jitter.
func backoff(p RetryPolicy, attempt int) time.Duration {
	d := p.InitialBackoff
	if d == 0 {
		d = 100 * time.Millisecond
	}
	limit := p.MaxBackoff
	if limit == 0 {
		limit = 30 * time.Second
	}
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	if p.Jitter > 0 {
		d = time.Duration(float64(d) * (1 - p.Jitter*rand.Float64()))
	}
	return d
}

// AbandonGrace is how long a node gets to return once its run is stopped
// (a halt, Ctrl-C, SIGTERM, the wall time) before the run stops without
// it. A node honours its context; one stuck in a system call that no
// cancellation reaches (an open(2) of a FIFO, a read of a hung network
// file system) would otherwise keep the run, and its process, forever.
var AbandonGrace = 5 * time.Second

// AbandonedError: a node did not return within AbandonGrace of its run
// being stopped; the run stopped without it. It matches the cause of the
// stop (context.Canceled, or the halt's ErrHalted).
type AbandonedError struct {
	Node  string
	Grace time.Duration
	Cause error
}

func (e *AbandonedError) Error() string {
	return fmt.Sprintf("node %q did not return within %s of the run being stopped (stuck in a system call?): the run stopped without it: %v", e.Node, e.Grace, e.Cause)
}

func (e *AbandonedError) Unwrap() error { return e.Cause }

// callNode calls fn with nctx, turning a panic into an error and a stack.
// When run (the run's context) is done and fn has not returned within
// AbandonGrace, it returns an *AbandonedError and leaves fn behind: the
// process that ends the run ends it too.
func callNode[S any](run, nctx context.Context, name string, fn NodeFunc[S], s S) (S, error, string) {
	type result struct {
		out   S
		err   error
		stack string
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("panic: %v", p)
				r.stack = string(debug.Stack())
			}
			done <- r
		}()
		r.out, r.err = fn(nctx, s)
	}()
	select {
	case r := <-done:
		return r.out, r.err, r.stack
	case <-run.Done():
	}
	t := time.NewTimer(AbandonGrace)
	defer t.Stop()
	select {
	case r := <-done:
		return r.out, r.err, r.stack
	case <-t.C:
		var zero S
		cause := context.Cause(run)
		if cause == nil {
			cause = run.Err()
		}
		return zero, &AbandonedError{Node: name, Grace: AbandonGrace, Cause: cause}, ""
	}
}

// parallel runs a step of several tasks at once — the nodes reached by
// edges, then the Send tasks — each on its own copy of its input. Every task
// that finishes is recorded at once (a RecordWrite), so a crash or a failing
// sibling never makes it run again; tasks recorded before a crash are not
// rerun on resume. The step fails after every task has returned if any
// failed. It returns the labels of the tasks that ran.
func (r *runner[S]) parallel(ctx context.Context) (ran []string, out S, next []int, sends []sendTask[S], changes []change, interrupt string, err error) {
	step := r.step + 1
	if !r.track {
		// No per-step tracking without store or sinks: build it for this join.
		r.tr = newTracker[S](r.c.plan)
		if _, err := r.tr.reset(r.state); err != nil {
			return nil, out, nil, nil, nil, "", err
		}
	}
	base := branchCopy(r.state)
	type task struct {
		key  taskKey
		node int
		in   S
	}
	tasks := make([]task, 0, len(r.next)+len(r.sends))
	for _, i := range r.next {
		tasks = append(tasks, task{key: taskKey{node: r.c.nodes[i].name, send: -1}, node: i, in: base})
	}
	for k, t := range r.sends {
		tasks = append(tasks, task{key: taskKey{node: r.c.nodes[t.node].name, send: k}, node: t.node, in: branchCopy(t.in)})
	}
	n := len(tasks)
	ins, outs, chs := make([]S, n), make([]S, n), make([][]change, n)
	reasons, errs := make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	for k, t := range tasks {
		ins[k] = t.in
		name := t.key.label()
		if pw, ok := r.pending[t.key]; ok {
			s := branchCopy(t.in)
			if err := applyChanges(r.c.plan, &s, pw.changes); err != nil {
				return nil, out, nil, nil, nil, "", fmt.Errorf("graph: run %s: stored result of %s: %w", r.runID, name, err)
			}
			outs[k], chs[k], reasons[k] = s, pw.changes, pw.reason
			continue
		}
		in := branchCopy(t.in)
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, dur, err := r.runNode(ctx, t.node, in, step, t.key.send)
			var ie *InterruptError
			if err != nil && !errors.As(err, &ie) {
				errs[k] = err
				return
			}
			if ie != nil {
				reasons[k] = ie.Reason
			}
			// What the task changed in its own input: for a Send task that
			// input is not the step's state.
			tr := r.tr
			if t.key.send >= 0 {
				tr = newTracker[S](r.c.plan)
				if _, err := tr.reset(t.in); err != nil {
					errs[k] = fmt.Errorf("graph: run %s: input of %s cannot be stored: %w", r.runID, name, err)
					return
				}
			}
			ch, derr := tr.diff(&o)
			if derr != nil {
				errs[k] = fmt.Errorf("graph: run %s: node %q returned a state that cannot be stored: %w", r.runID, name, derr)
				return
			}
			if r.w != nil {
				if err := r.storeWrite(ctx, t.key, pendingWrite{changes: ch, reason: reasons[k]}); err != nil {
					errs[k] = err
					return
				}
			}
			outs[k], chs[k] = o, ch
			r.emit(Event{Kind: EventNodeEnd, Step: step, Node: t.key.node, Duration: dur, Changed: changedNames(ch)})
		}()
	}
	wg.Wait()
	if err := stepError(errs); err != nil {
		return nil, out, nil, nil, nil, "", err
	}
	for _, reason := range reasons {
		if reason != "" {
			interrupt = reason
			break
		}
	}
	ran = make([]string, n)
	names := make([]string, n)
	nodes := make([]int, n)
	for k, t := range tasks {
		ran[k], names[k], nodes[k] = t.key.label(), t.key.node, t.node
	}
	out, err = r.mergeResults(base, names, ins, outs, chs)
	if err != nil {
		return nil, out, nil, nil, nil, "", err
	}
	if r.track {
		if changes, err = r.tr.diff(&out); err != nil {
			return nil, out, nil, nil, nil, "", fmt.Errorf("graph: run %s: merged state cannot be stored: %w", r.runID, err)
		}
	}
	next, sends, err = r.successors(ctx, nodes, outs)
	return ran, out, next, sends, changes, interrupt, err
}

// stepError is the failure of a parallel step: the tasks' errors joined, or,
// when the only ones are subgraphs that paused or halted, the first of those
// (the step is not committed; the subgraphs continue on Resume).
func stepError(errs []error) error {
	var stop error
	var failed []error
	for _, err := range errs {
		var sp *subgraphStop
		switch {
		case err == nil:
		case errors.As(err, &sp):
			if stop == nil {
				stop = err
			}
		default:
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return errors.Join(failed...)
	}
	return stop
}

// branchCopy gives a branch its own top-level containers: every slice field
// is capped at its length, so appends from two branches land in separate
// arrays, and every map field is cloned, so branches may set keys in place.
// Deeper values (elements, pointers, nested maps) are still shared: branches
// must not modify them in place.
func branchCopy[S any](s S) S {
	v := reflect.ValueOf(&s).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Kind() == reflect.Slice && f.Cap() > f.Len():
			f.Set(f.Slice3(0, f.Len(), f.Len()))
		case f.Kind() == reflect.Map && !f.IsNil():
			m := reflect.MakeMapWithSize(f.Type(), f.Len())
			iter := f.MapRange()
			for iter.Next() {
				m.SetMapIndex(iter.Key(), iter.Value())
			}
			f.Set(m)
		}
	}
	return s
}
