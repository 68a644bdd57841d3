package nodes

import (
	"context"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Polish is the bounded phase after the remit is functionally complete: it
// works off cleanup directives only (no new supervisor runs) for at most
// limits.polish_tasks tasks, then hands over to the report.
func (d *Deps) Polish(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	if s.Phase == runstate.PhaseExecute {
		// Supervisors still thinking in the background have had their last
		// say (supervisorHook, before this node), so their cleanup
		// directives are not lost.
		s.Phase = runstate.PhasePolish
		events.Emit(ctx, events.PolishStart{CleanupDirectives: len(orderedDirectives(s.PendingDirectives, true))})
	}
	work := len(orderedDirectives(s.PendingDirectives, true)) > 0 || hasPolishWork(&s)
	if !work || s.PolishTasks >= d.Settings.PolishTasks || s.StopReason != "" {
		s.Phase = runstate.PhaseDone
		s.CarryForward = nil
	}
	return s, nil
}
