package runstate

import (
	"fmt"
	"strings"
)

// MilestoneOverview lists the milestones, one a line, the current one marked:
// what the Assessor and the supervisors are shown of the plan.
func (s *State) MilestoneOverview() string {
	var b strings.Builder
	for i, m := range s.Milestones {
		current := ""
		if i == s.CurrentMilestone {
			current = " (current)"
		}
		fmt.Fprintf(&b, "- %s [%s] %s%s\n", m.ID, m.Status, m.Goal, current)
	}
	return strings.TrimSpace(b.String())
}
