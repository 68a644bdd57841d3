package nodes

// The directive queue the planner works from: the supervisors file
// directives (supervisors.AddDirectives); the planner is shown them in order, answers
// for each, and the tasks made for them settle them when they end.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
)

// ignoredRoundsBeforeForcing is how many planning rounds a directive may go
// unaddressed before the orchestrator makes it a task: a weak planner must not
// be able to drop a directive by silence.
const ignoredRoundsBeforeForcing = 2

// orderedDirectives returns the directives not yet turned into tasks in the
// order the planner must see them (runstate.OrderedDirectives).
func orderedDirectives(pending []runstate.Directive, cleanupOnly bool) []runstate.Directive {
	return runstate.OrderedDirectives(pending, cleanupOnly)
}

// DirectiveAnswer is the planner's account of one directive.
type DirectiveAnswer struct {
	ID   string `json:"id"`
	Fate string `json:"fate" jsonschema:"enum=task,enum=handled,enum=escalated"`
	Note string `json:"note"`
}

// applyDirectiveAnswers records the planner's fate for each directive it was
// shown and places the resulting tasks by priority: critical first (it
// interrupts carry-forward), normal functional prepended, the rest appended.
// Directives the planner ignored stay pending; ignored too often, they become
// tasks anyway. It returns the task that must run now because of a critical
// directive, if any.
func applyDirectiveAnswers(s *runstate.State, shown []runstate.Directive, answers []DirectiveAnswer, chosen *runstate.PlannedTask, now time.Time) *runstate.PlannedTask {
	byID := map[string]DirectiveAnswer{}
	for _, a := range answers {
		byID[a.ID] = a
	}
	var critical *runstate.PlannedTask
	var front []runstate.PlannedTask // normal functional tasks, in the order shown
	for _, d := range shown {
		a, ok := byID[d.ID]
		fate := a.Fate
		if !ok || (fate != runstate.FateTask && fate != runstate.FateHandled && fate != runstate.FateEscalated) {
			if n := bumpIgnored(s, d.ID); n < ignoredRoundsBeforeForcing && d.Priority != runstate.PrioCritical {
				continue
			}
			fate, a.Note = runstate.FateForced, "planner did not address it; the orchestrator made it a task"
		}
		switch fate {
		case runstate.FateHandled, runstate.FateEscalated:
			if fate == runstate.FateEscalated {
				s.EscalationContext = strings.TrimSpace(s.EscalationContext + "\nDirective " + d.ID + " (" + d.Source + ") escalated: " + d.Description + " — " + a.Note)
			}
			s.LogFate(d, fate, a.Note, now)
			removeDirective(s, d.ID)
		default: // task or forced
			task := runstate.PlannedTask{
				Title:        textutil.ClipTrimmed(d.Description, 120),
				Instructions: directiveInstructions(d),
				TargetFiles:  d.Files,
				DirectiveID:  d.ID,
			}
			if chosen != nil && chosen.DirectiveID == d.ID {
				task = *chosen
			}
			markDirectiveTask(s, d.ID, "planned")
			s.LogFate(d, fate, a.Note, now)
			switch {
			case d.Priority == runstate.PrioCritical && critical == nil:
				critical = &task
			case chosen != nil && chosen.DirectiveID == d.ID:
				// the planner already made it the current task
			case d.Priority == runstate.PrioCritical, d.Type == runstate.DirFunctional && d.Priority != runstate.PrioLow:
				// a second critical directive goes first in line, before normal functional work
				front = append(front, task)
			default:
				s.CarryForward = append(s.CarryForward, task)
			}
		}
	}
	if len(front) > 0 {
		s.CarryForward = append(front, s.CarryForward...)
	}
	return critical
}

func directiveInstructions(d runstate.Directive) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Address supervisor directive %s (%s, %s priority, from %s): %s", d.ID, d.Type, d.Priority, d.Source, d.Description)
	if d.Rationale != "" {
		fmt.Fprintf(&b, "\nWhy: %s", d.Rationale)
	}
	if len(d.Files) > 0 {
		fmt.Fprintf(&b, "\nFiles: %s", strings.Join(d.Files, ", "))
	}
	return b.String()
}

func bumpIgnored(s *runstate.State, id string) int {
	for i := range s.PendingDirectives {
		if s.PendingDirectives[i].ID == id {
			s.PendingDirectives[i].IgnoredRounds++
			return s.PendingDirectives[i].IgnoredRounds
		}
	}
	return 0
}

// markDirectiveTask notes that a task now carries the directive.
func markDirectiveTask(s *runstate.State, id, taskID string) {
	for i := range s.PendingDirectives {
		if s.PendingDirectives[i].ID == id {
			s.PendingDirectives[i].TaskID = taskID
		}
	}
}

// settleDirective closes a directive when its task completes or fails.
func settleDirective(s *runstate.State, id, taskID, fate, note string, now time.Time) {
	for _, d := range s.PendingDirectives {
		if d.ID == id {
			d.TaskID = taskID
			s.LogFate(d, fate, note, now)
			removeDirective(s, id)
			return
		}
	}
}

func removeDirective(s *runstate.State, id string) {
	s.PendingDirectives = slices.DeleteFunc(s.PendingDirectives, func(d runstate.Directive) bool { return d.ID == id })
}

func normaliseChoice(v, def string, allowed ...string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if slices.Contains(allowed, v) {
		return v
	}
	return def
}
