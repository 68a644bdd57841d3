package supervisors

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/runstate"
)

// AddDirectives files new directives from a supervisor: ids assigned, the
// cleanup cap enforced (at most maxCleanup pending: the oldest is dropped).
func AddDirectives(s *runstate.State, source string, ds []runstate.Directive, maxCleanup int, now time.Time) []string {
	var ids []string
	for _, d := range ds {
		d.Source = source
		d.Type = oneOf(d.Type, runstate.DirCleanup, runstate.DirFunctional, runstate.DirCleanup)
		d.Priority = oneOf(d.Priority, runstate.PrioNormal, runstate.PrioCritical, runstate.PrioNormal, runstate.PrioLow)
		if strings.TrimSpace(d.Description) == "" || isDuplicate(s.PendingDirectives, d) {
			continue
		}
		s.NextDirectiveID++
		d.ID = fmt.Sprintf("d%d", s.NextDirectiveID)
		d.CreatedAtTask = s.TasksCompleted
		s.PendingDirectives = append(s.PendingDirectives, d)
		ids = append(ids, d.ID)
	}
	if maxCleanup > 0 {
		for countPendingCleanup(s) > maxCleanup {
			i := slices.IndexFunc(s.PendingDirectives, func(d runstate.Directive) bool { return d.Type == runstate.DirCleanup && d.TaskID == "" })
			if i < 0 {
				break
			}
			s.LogFate(s.PendingDirectives[i], runstate.FateCapped, fmt.Sprintf("more than %d cleanup directives pending; oldest dropped", maxCleanup), now)
			s.PendingDirectives = slices.Delete(s.PendingDirectives, i, i+1)
		}
	}
	return ids
}

// oneOf is v normalised when it is one of allowed, else def.
func oneOf(v, def string, allowed ...string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if slices.Contains(allowed, v) {
		return v
	}
	return def
}

func isDuplicate(pending []runstate.Directive, d runstate.Directive) bool {
	for _, p := range pending {
		if strings.EqualFold(strings.TrimSpace(p.Description), strings.TrimSpace(d.Description)) {
			return true
		}
	}
	return false
}

func countPendingCleanup(s *runstate.State) int {
	n := 0
	for _, d := range s.PendingDirectives {
		if d.Type == runstate.DirCleanup && d.TaskID == "" {
			n++
		}
	}
	return n
}

// AgeDirectives drops cleanup directives nobody picked up within maxAge
// completed tasks (docs/supervisors.md "Directives").
func AgeDirectives(s *runstate.State, maxAge int, now time.Time) {
	if maxAge <= 0 {
		return
	}
	kept := s.PendingDirectives[:0:0]
	for _, d := range s.PendingDirectives {
		if d.Type == runstate.DirCleanup && d.TaskID == "" && s.TasksCompleted-d.CreatedAtTask > maxAge {
			s.LogFate(d, runstate.FateAgedOut, fmt.Sprintf("not picked up within %d completed tasks", maxAge), now)
			continue
		}
		kept = append(kept, d)
	}
	s.PendingDirectives = kept
}
