package nodes

// The Implementor's clock: what remains of limits.max_wall_time, read by
// every node that sizes its work to it.

import (
	"fmt"
	"time"

	"github.com/lemmings-dev/lemmings/runstate"
)

// wallTimeLeft is what remains of limits.max_wall_time; limited is false
// when the run has no limit (or has not started).
func (d *Deps) wallTimeLeft(s *runstate.State, now time.Time) (left time.Duration, limited bool) {
	if !d.WallDeadline.IsZero() {
		return d.WallDeadline.Sub(now), true
	}
	if d.Settings.MaxWallTime <= 0 || s.StartedAt.IsZero() {
		return 0, false
	}
	return d.Settings.MaxWallTime - now.Sub(s.StartedAt), true
}

func (d *Deps) wallTimeReached() string {
	return fmt.Sprintf("reached the wall-time limit of %s (limits.max_wall_time)", d.Settings.MaxWallTime)
}
