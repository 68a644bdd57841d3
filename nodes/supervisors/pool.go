package supervisors

import (
	"context"
	"sync"
)

// Pool runs supervisor jobs, in parallel with each other and with the local
// loop. Results (of type O) wait here until the workflow lands them between
// tasks; a job unknown to the pool (after a restart) is launched again from
// the state's record of it. The pool knows no model: each job is the call
// the workflow hands Launch.
type Pool[O any] struct {
	base context.Context
	stop context.CancelFunc

	mu   sync.Mutex
	jobs map[string]*job[O]
	wg   sync.WaitGroup
}

type job[O any] struct {
	done    chan struct{}
	outcome O
	// fresh: started by run_supervisors in this process, not relaunched from
	// a record an earlier process left.
	fresh bool
}

// NewPool makes a pool whose jobs live as long as ctx (the run, not the
// node that launched them).
func NewPool[O any](ctx context.Context) *Pool[O] {
	base, stop := context.WithCancel(ctx)
	return &Pool[O]{base: base, stop: stop, jobs: map[string]*job[O]{}}
}

// Launch starts job id once, running call with the pool's context; a
// second launch of the same id is a no-op.
func (p *Pool[O]) Launch(id string, fresh bool, call func(context.Context) O) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.jobs[id]; ok {
		return
	}
	j := &job[O]{done: make(chan struct{}), fresh: fresh}
	p.jobs[id] = j
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(j.done)
		j.outcome = call(p.base)
	}()
}

// Known says whether this process launched the job.
func (p *Pool[O]) Known(id string) bool {
	_, ok := p.job(id)
	return ok
}

// Fresh says whether this process started the job itself in run_supervisors.
func (p *Pool[O]) Fresh(id string) bool {
	j, ok := p.job(id)
	return ok && j.fresh
}

func (p *Pool[O]) job(id string) (*job[O], bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j, ok := p.jobs[id]
	return j, ok
}

// Result returns a finished job's outcome without waiting.
func (p *Pool[O]) Result(id string) (O, bool) { return p.await(nil, id, false) }

// Wait blocks until the job finishes or ctx ends.
func (p *Pool[O]) Wait(ctx context.Context, id string) (O, bool) {
	return p.await(ctx.Done(), id, true)
}

// await is a job's outcome once it has finished: at once, or (block) when
// it finishes, unless stop closes first.
func (p *Pool[O]) await(stop <-chan struct{}, id string, block bool) (O, bool) {
	var none O
	j, ok := p.job(id)
	if !ok {
		return none, false
	}
	if !block {
		select {
		case <-j.done:
			return j.outcome, true
		default:
			return none, false
		}
	}
	select {
	case <-j.done:
		return j.outcome, true
	case <-stop:
		return none, false
	}
}

// Forget drops a landed job so a long run does not accumulate them.
func (p *Pool[O]) Forget(id string) {
	p.mu.Lock()
	delete(p.jobs, id)
	p.mu.Unlock()
}

// Close cancels jobs still running and waits for them to return. Their
// results are not lost: the state still lists them, so a resume re-runs them.
func (p *Pool[O]) Close() {
	p.stop()
	p.wg.Wait()
}
