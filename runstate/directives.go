package runstate

import (
	"slices"
	"time"
)

// OpenDirectives are the pending directives no task addresses yet, in the
// order the planner sees them (the board shows them so).
func (s *State) OpenDirectives() []Directive {
	return OrderedDirectives(s.PendingDirectives, false)
}

// OrderedDirectives returns the directives not yet turned into tasks, in the
// order the planner must see them: critical, functional, then cleanup, each by
// priority, oldest first.
func OrderedDirectives(pending []Directive, cleanupOnly bool) []Directive {
	var out []Directive
	for _, d := range pending {
		// The user's directives are shown in polish too: they were told for now.
		if d.TaskID != "" || (cleanupOnly && d.Type != DirCleanup && d.Source != SourceUser) {
			continue
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(a, b Directive) int { return directiveRank(a) - directiveRank(b) })
	return out
}

func directiveRank(d Directive) int {
	if d.Priority == PrioCritical {
		return 0
	}
	r := 1
	if d.Type == DirCleanup {
		r = 4
	}
	switch d.Priority {
	case PrioNormal:
		return r
	case PrioLow:
		return r + 1
	}
	return r + 2
}

// LogFate records how directive d went (fate, with a note) in the
// directive log.
func (s *State) LogFate(d Directive, fate, note string, now time.Time) {
	s.DirectiveLog = append(s.DirectiveLog, DirectiveFate{
		DirectiveID: d.ID, Source: d.Source, Description: d.Description,
		Fate: fate, Note: note, TaskID: d.TaskID, At: now,
	})
}
