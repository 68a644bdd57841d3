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
type supervisorOutcome struct {
	Job       SupervisorJob
	CodeStyle *codeStyleReply
	Design    *designReply
	Intern    *internaliserReply
	Response  llm.Response
	Err       error
}

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
	p.Launch(job.ID, fresh, func(ctx context.Context) supervisorOutcome { return runSupervisorCall(ctx, p.model, job, req) })
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
