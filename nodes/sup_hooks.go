package nodes

import (
	"context"

	"github.com/lemmings-dev/lemmings/nodes/supervisors"
)

// supervisorHook is everything the supervisors need from the run, attached
// around the nodes instead of called from inside them:
//
//   - before the planner: finished supervisor jobs land (between tasks), and
//     cleanup directives age;
//   - before the polish phase starts: background jobs get their last say;
//   - after any node: the facts it reported become urgency (QA failure, task
//     abort, churn, minor drift), trigger events (milestone complete, scope
//     re-plan, task abort) and the supervisors' task counters.
//
// When they run is routing's business (supervisors.DueNow), not the nodes'.
func (d *Deps) supervisorHook() Hook {
	return Hook{
		Name: "supervisors",
		Before: func(ctx context.Context, node string, s *WorkflowState) error {
			switch node {
			case NodePlanner:
				if err := d.landSupervisorResults(ctx, s); err != nil {
					return err
				}
				supervisors.AgeDirectives(s, d.Settings.DirectiveMaxAge, d.now())
			case NodePolish:
				if s.Phase == PhaseExecute {
					return d.awaitSupervisors(ctx, s)
				}
			}
			return nil
		},
		After: func(_ context.Context, _ string, s *WorkflowState) error {
			d.superviseFacts(s)
			return nil
		},
	}
}

// superviseFacts turns the facts a node reported into the supervisors'
// urgency, trigger events and task counters.
func (d *Deps) superviseFacts(s *WorkflowState) {
	w := d.Settings.Supervisors
	for _, f := range s.Happened {
		switch f {
		case HappenedQAFailed:
			supervisors.AddUrgency(s, w.WeightQAFailure)
		case HappenedTaskAborted:
			supervisors.AddUrgency(s, w.WeightTaskAbort)
			supervisors.AddTrigger(s, TriggerTaskAbort)
		case HappenedPlanChurn:
			supervisors.AddUrgency(s, w.WeightChurn)
		case HappenedMinorDrift:
			supervisors.AddUrgency(s, w.WeightMinorDrift)
		case HappenedMilestoneDone:
			supervisors.AddTrigger(s, TriggerMilestoneComplete)
		case HappenedScopeReplan:
			supervisors.AddTrigger(s, TriggerScopeReplan)
		case HappenedTaskCompleted:
			supervisors.CountTask(s)
		}
	}
}
