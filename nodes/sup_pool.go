package nodes

import (
	"context"
	"sync"

	"github.com/lemmings-dev/lemmings/llm"
)

// supervisorOutcome is what a finished supervisor job hands back.
type supervisorOutcome struct {
	Job       SupervisorJob
	CodeStyle *codeStyleReply
	Design    *designReply
	Intern    *internaliserReply
	Response  llm.Response
	Err       error
}

// SupervisorPool runs supervisor jobs on the cloud model, in parallel with
// each other and with the local loop. Results wait here until the workflow
// lands them between tasks; a job unknown to the pool (after a restart) is
// launched again from the state's record of it.
type SupervisorPool struct {
	model Model
	base  context.Context
	stop  context.CancelFunc

	mu   sync.Mutex
	jobs map[string]*poolJob
	wg   sync.WaitGroup
}

type poolJob struct {
	done    chan struct{}
	outcome supervisorOutcome
	// fresh: started by run_supervisors in this process, not relaunched from
	// a record an earlier process left.
	fresh bool
}

// NewSupervisorPool makes a pool whose jobs live as long as ctx (the run, not
// the node that launched them).
func NewSupervisorPool(ctx context.Context, model Model) *SupervisorPool {
	base, stop := context.WithCancel(ctx)
	return &SupervisorPool{model: model, base: base, stop: stop, jobs: map[string]*poolJob{}}
}

// launch starts a job once; a second launch of the same id is a no-op.
func (p *SupervisorPool) launch(job SupervisorJob, req llm.Request, fresh bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.jobs[job.ID]; ok {
		return
	}
	pj := &poolJob{done: make(chan struct{}), fresh: fresh}
	p.jobs[job.ID] = pj
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(pj.done)
		pj.outcome = runSupervisorCall(p.base, p.model, job, req)
	}()
}

func runSupervisorCall(ctx context.Context, m Model, job SupervisorJob, req llm.Request) supervisorOutcome {
	out := supervisorOutcome{Job: job}
	switch job.Supervisor {
	case SupCodeStyle:
		r, resp, err := llm.Structured[codeStyleReply](ctx, m, req)
		out.CodeStyle, out.Response, out.Err = &r, resp, err
	case SupDesign:
		r, resp, err := llm.Structured[designReply](ctx, m, req)
		out.Design, out.Response, out.Err = &r, resp, err
	default:
		r, resp, err := llm.Structured[internaliserReply](ctx, m, req)
		out.Intern, out.Response, out.Err = &r, resp, err
	}
	return out
}

// known says whether this process launched the job.
func (p *SupervisorPool) known(id string) bool {
	_, ok := p.job(id)
	return ok
}

// fresh says whether this process started the job itself in run_supervisors.
func (p *SupervisorPool) fresh(id string) bool {
	pj, ok := p.job(id)
	return ok && pj.fresh
}

// job returns the job of id this process launched.
func (p *SupervisorPool) job(id string) (*poolJob, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pj, ok := p.jobs[id]
	return pj, ok
}

// result returns a finished job's outcome without waiting.
func (p *SupervisorPool) result(id string) (supervisorOutcome, bool) { return p.await(nil, id, false) }

// wait blocks until the job finishes or ctx ends.
func (p *SupervisorPool) wait(ctx context.Context, id string) (supervisorOutcome, bool) {
	return p.await(ctx.Done(), id, true)
}

// await is a job's outcome once it has finished: at once, or (block) when
// it finishes, unless stop closes first.
func (p *SupervisorPool) await(stop <-chan struct{}, id string, block bool) (supervisorOutcome, bool) {
	pj, ok := p.job(id)
	if !ok {
		return supervisorOutcome{}, false
	}
	if !block {
		select {
		case <-pj.done:
			return pj.outcome, true
		default:
			return supervisorOutcome{}, false
		}
	}
	select {
	case <-pj.done:
		return pj.outcome, true
	case <-stop:
		return supervisorOutcome{}, false
	}
}

// forget drops a landed job so a long run does not accumulate them.
func (p *SupervisorPool) forget(id string) {
	p.mu.Lock()
	delete(p.jobs, id)
	p.mu.Unlock()
}

// Close cancels jobs still running and waits for them to return. Their
// results are not lost: the state still lists them, so a resume re-runs them.
func (p *SupervisorPool) Close() {
	p.stop()
	p.wg.Wait()
}
