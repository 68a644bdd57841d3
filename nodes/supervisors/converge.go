package supervisors

import (
	"context"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Converge compares a run's findings with the previous run's: when few are
// new, the supervisor is converging and its interval doubles
// (docs/supervisors.md, "Convergence").
func Converge(ctx context.Context, s *runstate.State, sup Settings, name string, findings []string) {
	track := s.Supervisors[name]
	norm := make([]string, 0, len(findings))
	for _, f := range findings {
		if f = strings.ToLower(strings.TrimSpace(f)); f != "" {
			norm = append(norm, f)
		}
	}
	if track.Runs > 1 && track.LastFindings != nil {
		newCount := 0
		for _, f := range norm {
			if !slices.Contains(track.LastFindings, f) {
				newCount++
			}
		}
		share := 0.0
		if len(norm) > 0 {
			share = float64(newCount) / float64(len(norm))
		}
		base := sup.Of(name).Interval
		if share < sup.ConvergenceThreshold && base > 0 {
			cur := max(track.Interval, base)
			track.Interval = min(cur*2, max(sup.MaxInterval, base))
			track.Converging = true
			events.Emit(ctx, events.SupervisorConverging{Supervisor: name, Interval: track.Interval, NewShare: share})
		} else {
			track.Interval, track.Converging = 0, false
		}
	}
	track.LastFindings = norm
	if s.Supervisors == nil {
		s.Supervisors = map[string]runstate.SupervisorTrack{}
	}
	s.Supervisors[name] = track
}
