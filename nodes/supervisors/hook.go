package supervisors

import (
	"context"

	"github.com/lemmings-dev/lemmings/runstate"
)

// Before is the supervisors' work before a node, attached around the nodes
// instead of called from inside them:
//
//   - before the planner: finished supervisor jobs land (between tasks), and
//     cleanup directives age;
//   - before the polish phase starts: background jobs get their last say.
//
// When they run is routing's business (DueNow), not the nodes'.
func (d *Runner) Before(ctx context.Context, node string, s *runstate.State) error {
	switch node {
	case runstate.NodePlanner:
		if err := d.LandFinished(ctx, s); err != nil {
			return err
		}
		AgeDirectives(s, d.DirectiveMaxAge, d.now())
	case runstate.NodePolish:
		if s.Phase == runstate.PhaseExecute {
			return d.Await(ctx, s)
		}
	}
	return nil
}

// Facts turns the facts a node reported into the supervisors' urgency,
// trigger events and task counters (after any node).
func Facts(s *runstate.State, w Settings) {
	for _, f := range s.Happened {
		switch f {
		case runstate.HappenedQAFailed:
			AddUrgency(s, w.WeightQAFailure)
		case runstate.HappenedTaskAborted:
			AddUrgency(s, w.WeightTaskAbort)
			AddTrigger(s, TriggerTaskAbort)
		case runstate.HappenedPlanChurn:
			AddUrgency(s, w.WeightChurn)
		case runstate.HappenedMinorDrift:
			AddUrgency(s, w.WeightMinorDrift)
		case runstate.HappenedMilestoneDone:
			AddTrigger(s, TriggerMilestoneComplete)
		case runstate.HappenedScopeReplan:
			AddTrigger(s, TriggerScopeReplan)
		case runstate.HappenedTaskCompleted:
			CountTask(s)
		}
	}
}
