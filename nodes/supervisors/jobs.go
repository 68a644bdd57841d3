package supervisors

import (
	"context"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Role is the model role the supervisors' calls are routed to.
const Role = "supervisor"

// Jobs runs supervisor jobs on the cloud model, in parallel with each other
// and with the local loop (Pool); each job is one structured call of its
// supervisor's reply.
type Jobs struct {
	*Pool[Outcome]
	model llm.Chatter
}

// NewJobs makes a pool whose jobs live as long as ctx (the run, not the node
// that launched them) and call model.
func NewJobs(ctx context.Context, model llm.Chatter) *Jobs {
	return &Jobs{Pool: NewPool[Outcome](ctx), model: model}
}

// launch starts a job once; a second launch of the same id is a no-op.
func (p *Jobs) launch(job runstate.SupervisorJob, req llm.Request, fresh bool) {
	p.Launch(job.ID, fresh, func(ctx context.Context) Outcome { return Call(ctx, p.model, job, req) })
}
