package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
)

// DecisionSplit replaces a task that keeps failing by 2-3 smaller ones. It is
// a planner answer, not a route: the first smaller task starts at once.
const DecisionSplit = "split"

// canSplit says whether the planner may split the current task: it failed
// tasks.split_after times, was not itself split from another (a split is
// bounded), and is not an operator's task (whose criteria are fixed).
func (d planning) canSplit(s *runstate.State) bool {
	t := s.CurrentTask
	n := d.Settings.Tasks.SplitAfter
	return t != nil && n > 0 && t.Retries >= n && t.SplitFrom == "" && !t.Operator
}

// splitTask rolls the failed task back to its start (its work is not kept:
// never half a task on the branch), records it in the done list as split,
// and starts the first smaller task; the others go first in the plan.
func (d planning) splitTask(ctx context.Context, s runstate.State, r plannerReply) (runstate.State, error) {
	t := s.CurrentTask
	var parts []runstate.PlannedTask
	for _, sp := range r.Subtasks {
		if strings.TrimSpace(sp.Title) == "" || strings.EqualFold(sp.Title, t.Title) || containsPlanned(parts, sp.Title) {
			continue
		}
		p := sp.planned()
		p.SplitFrom = t.ID
		parts = append(parts, p)
	}
	if len(parts) > 3 {
		parts = parts[:3]
	}
	if len(parts) < 2 {
		// Not a split: retry the task as planned.
		events.Emit(ctx, events.Warning{Message: fmt.Sprintf("planner split task %s into %d usable tasks (need 2-3): retrying it as planned", t.ID, len(parts))})
		s.PlannerDecision = DecisionImplement
		return d.prepareAttempt(s), nil
	}
	if err := d.resetTo(ctx, t); err != nil {
		return s, fmt.Errorf("split %s: %w", t.ID, err)
	}
	if t.DirectiveID != "" { // the last part finishes what the directive asked
		parts[len(parts)-1].DirectiveID = t.DirectiveID
	}
	var titles []string
	for _, p := range parts {
		titles = append(titles, p.Title)
	}
	s.DoneList = append(s.DoneList, runstate.DoneEntry{TaskID: t.ID, Milestone: t.Milestone, Title: t.Title, QA: runstate.QASplit,
		Summary:  textutil.ClipTrimmed(fmt.Sprintf("split after %d failed attempts (work rolled back) into: %s. %s", t.Retries, strings.Join(titles, "; "), r.Reasoning), 600),
		Attempts: t.Attempt, DirectiveID: t.DirectiveID, Polish: t.Polish, At: d.now()})
	forgetKnowledgeUse(&s, t)
	settleEscalations(&s, t.ID, false)
	events.Emit(ctx, events.TaskSplit{Task: t.ID, Into: titles})
	s.CurrentTask, s.Implementation, s.QA = nil, nil, nil
	for _, p := range parts[1:] {
		s.CarryForward = dropPlanned(s.CarryForward, p.Title)
	}
	s.CarryForward = append(append([]runstate.PlannedTask(nil), parts[1:]...), s.CarryForward...)
	return d.startTask(ctx, s, parts[0])
}
