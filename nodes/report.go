package nodes

import (
	"context"

	"github.com/lemmings-dev/lemmings/runstate"
)

// Report ends the run: it settles the outcome (done only with evidence, see
// evidence.go). What the run did is written by the hooks around it
// (Deps.Hooks): report.md, which package runview renders.
func (d *Deps) Report(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	s.Phase = runstate.PhaseDone
	if err := checksOf(d).settleOutcome(ctx, &s); err != nil {
		return s, err
	}
	return s, nil
}
