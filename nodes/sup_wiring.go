package nodes

import (
	"context"

	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

// supervisors wires the supervisors (package supervisors) to this run's
// collaborators: their node, run_supervisors, and their hook.
func (d *Deps) supervisors() *supervisors.Runner {
	return &supervisors.Runner{
		Jobs: d.Supervisors, Work: d.Work, Settings: d.Settings.Supervisors,
		KnowledgeDir: d.Settings.KnowledgeDir, MaxCleanupDirectives: d.Settings.MaxCleanupDirectives,
		DirectiveMaxAge: d.Settings.DirectiveMaxAge,
		Compose:         d.composePrompt, Denied: d.Settings.denied, Now: d.now,
	}
}

// supervisorHook is everything the supervisors need from the run, attached
// around the nodes instead of called from inside them: finished jobs land
// before the planner and before polish (supervisors.Runner.Before); after any
// node the facts it reported become urgency, triggers and task counters
// (supervisors.Facts).
func (d *Deps) supervisorHook() Hook {
	return Hook{
		Name: "supervisors",
		Before: func(ctx context.Context, node string, s *runstate.State) error {
			return d.supervisors().Before(ctx, node, s)
		},
		After: func(_ context.Context, _ string, s *runstate.State) error {
			supervisors.Facts(s, d.Settings.Supervisors)
			return nil
		},
	}
}
