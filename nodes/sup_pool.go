package nodes

import (
	"context"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
)

// The supervisors' words and decisions live in package supervisors; the
// workflow names them here.
const (
	SupCodeStyle    = supervisors.CodeStyle
	SupDesign       = supervisors.Design
	SupInternaliser = supervisors.Internaliser

	TriggerInterval          = supervisors.TriggerInterval
	TriggerMilestoneComplete = supervisors.TriggerMilestoneComplete
	TriggerScopeReplan       = supervisors.TriggerScopeReplan
	TriggerTaskAbort         = supervisors.TriggerTaskAbort
	TriggerUrgency           = supervisors.TriggerUrgency
)

// DueSupervisor is a supervisor that should run now and why.
type DueSupervisor = supervisors.Due

// supervisorOutcome is what a finished supervisor job hands back.
type supervisorOutcome = supervisors.Outcome

// SupervisorPool runs supervisor jobs on the cloud model, in parallel with
// each other and with the local loop (supervisors.Pool); each job is one
// structured call of its supervisor's reply.
type SupervisorPool struct {
	*supervisors.Pool[supervisorOutcome]
	model Model
}

// NewSupervisorPool makes a pool whose jobs live as long as ctx (the run, not
// the node that launched them) and call model.
func NewSupervisorPool(ctx context.Context, model Model) *SupervisorPool {
	return &SupervisorPool{Pool: supervisors.NewPool[supervisorOutcome](ctx), model: model}
}

// launch starts a job once; a second launch of the same id is a no-op.
func (p *SupervisorPool) launch(job SupervisorJob, req llm.Request, fresh bool) {
	p.Launch(job.ID, fresh, func(ctx context.Context) supervisorOutcome { return supervisors.Call(ctx, p.model, job, req) })
}
