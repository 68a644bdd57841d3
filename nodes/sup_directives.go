package nodes

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// addDirectives files new directives from a supervisor: ids assigned, the
// cleanup cap enforced (at most maxCleanup pending: the oldest is dropped).
func addDirectives(s *WorkflowState, source string, ds []Directive, maxCleanup int, now time.Time) []string {
	var ids []string
	for _, d := range ds {
		d.Source = source
		d.Type = normaliseChoice(d.Type, DirCleanup, DirFunctional, DirCleanup)
		d.Priority = normaliseChoice(d.Priority, PrioNormal, PrioCritical, PrioNormal, PrioLow)
		if strings.TrimSpace(d.Description) == "" || isDuplicateDirective(s.PendingDirectives, d) {
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
			i := slices.IndexFunc(s.PendingDirectives, func(d Directive) bool { return d.Type == DirCleanup && d.TaskID == "" })
			if i < 0 {
				break
			}
			logFate(s, s.PendingDirectives[i], FateCapped, fmt.Sprintf("more than %d cleanup directives pending; oldest dropped", maxCleanup), now)
			s.PendingDirectives = slices.Delete(s.PendingDirectives, i, i+1)
		}
	}
	return ids
}

func isDuplicateDirective(pending []Directive, d Directive) bool {
	for _, p := range pending {
		if strings.EqualFold(strings.TrimSpace(p.Description), strings.TrimSpace(d.Description)) {
			return true
		}
	}
	return false
}

func countPendingCleanup(s *WorkflowState) int {
	n := 0
	for _, d := range s.PendingDirectives {
		if d.Type == DirCleanup && d.TaskID == "" {
			n++
		}
	}
	return n
}

// ageDirectives drops cleanup directives nobody picked up within maxAge
// completed tasks (docs/supervisors.md "Directives").
func ageDirectives(s *WorkflowState, maxAge int, now time.Time) {
	if maxAge <= 0 {
		return
	}
	kept := s.PendingDirectives[:0:0]
	for _, d := range s.PendingDirectives {
		if d.Type == DirCleanup && d.TaskID == "" && s.TasksCompleted-d.CreatedAtTask > maxAge {
			logFate(s, d, FateAgedOut, fmt.Sprintf("not picked up within %d completed tasks", maxAge), now)
			continue
		}
		kept = append(kept, d)
	}
	s.PendingDirectives = kept
}
