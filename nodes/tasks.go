package nodes

// A task's way through the workflow, shared by every node group that moves
// it: the carry-forward list the planner keeps, the task taken from it, its
// next attempt, its reset, its end (abandoned, or the run stopped), and the
// escalations settled with it.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// taskWork is what moving a task needs: the work tree it resets, and the
// clock its records are stamped by. The roles that move tasks embed it.
type taskWork struct {
	Work *workspace.Worktree
	now  func() time.Time
}

func tasksOf(d *Deps) taskWork { return taskWork{Work: d.Work, now: d.now} }

func (d taskWork) milestoneDone(s *runstate.State) {
	s.PlannerDecision = DecisionMilestoneDone
	s.ReviewReason = "milestone"
	happen(s, runstate.HappenedMilestoneDone)
}

// updateCarryForward takes the planner's new plan, noting churn: a plan that
// keeps changing under the planner is a signal for the supervisors. Weak
// models drop tasks by accident, so an empty answer keeps the old plan, and
// directive and operator tasks the answer left out are kept at the end.
func (d taskWork) updateCarryForward(ctx context.Context, s *runstate.State, next []taskSpec) {
	var plan []runstate.PlannedTask
	for _, t := range next {
		if strings.TrimSpace(t.Title) != "" && !containsPlanned(plan, t.Title) {
			plan = append(plan, t.planned())
		}
	}
	if len(plan) == 0 {
		return
	}
	changed := 0
	for k := range plan {
		t := &plan[k]
		if i := indexPlanned(s.CarryForward, t.Title); i >= 0 {
			old := s.CarryForward[i] // what the plan already knew about the task stays
			t.DirectiveID, t.Operator, t.SplitFrom, t.Feedback = old.DirectiveID, old.Operator, old.SplitFrom, old.Feedback
			t.Placed = old.Placed && slices.Equal(t.TargetFiles, old.TargetFiles)
			t.Tests = old.Tests // the remit's words asked for them, whatever the planner wrote
			if old.Operator {
				t.AcceptanceCriteria = old.AcceptanceCriteria
			}
		} else {
			changed++
		}
	}
	for _, t := range s.CarryForward {
		if (t.DirectiveID != "" || t.Operator || t.SplitFrom != "" || t.Feedback != "") && !containsPlanned(plan, t.Title) {
			plan = append(plan, t)
		}
	}
	if len(s.CarryForward) > 0 && changed*2 > len(s.CarryForward) {
		happen(s, runstate.HappenedPlanChurn)
		events.Emit(ctx, events.CarryForwardChurn{Changed: changed, Was: len(s.CarryForward)})
	}
	s.CarryForward = plan
}

func indexPlanned(ts []runstate.PlannedTask, title string) int {
	for i, t := range ts {
		if strings.EqualFold(t.Title, title) {
			return i
		}
	}
	return -1
}

func containsPlanned(ts []runstate.PlannedTask, title string) bool {
	return indexPlanned(ts, title) >= 0
}

func dropPlanned(ts []runstate.PlannedTask, title string) []runstate.PlannedTask {
	out := ts[:0:0]
	for _, t := range ts {
		if !strings.EqualFold(t.Title, title) {
			out = append(out, t)
		}
	}
	return out
}

func hasPolishWork(s *runstate.State) bool {
	for _, t := range s.CarryForward {
		if t.DirectiveID != "" {
			return true
		}
	}
	return false
}

// newTask gives a planned task an id in the current milestone.
func (d taskWork) newTask(s *runstate.State, p runstate.PlannedTask) *runstate.Task {
	s.NextTaskID++
	t := &runstate.Task{
		ID:                 fmt.Sprintf("t%d", s.NextTaskID),
		Title:              p.Title,
		Instructions:       p.Instructions,
		AcceptanceCriteria: p.AcceptanceCriteria,
		TargetFiles:        p.TargetFiles,
		DirectiveID:        p.DirectiveID,
		Operator:           p.Operator,
		Placed:             p.Placed,
		Tests:              p.Tests,
		SplitFrom:          p.SplitFrom,
		Feedback:           p.Feedback,
		Polish:             s.Phase == runstate.PhasePolish,
	}
	if m := s.ActiveMilestone(); m != nil {
		t.Milestone = m.ID
	}
	if t.DirectiveID != "" {
		markDirectiveTask(s, t.DirectiveID, t.ID)
	}
	return t
}

// startTask makes p the current task, starting at the work tree's HEAD.
func (d taskWork) startTask(ctx context.Context, s runstate.State, p runstate.PlannedTask) (runstate.State, error) {
	t := d.newTask(&s, p)
	head, err := d.Work.Head(ctx)
	if err != nil {
		return s, fmt.Errorf("start task %s: %w", t.ID, err)
	}
	t.StartCommit, t.AttemptBase = head, head
	t.KnowledgeInjected = slices.Clone(s.LastKnowledge)
	if len(t.AcceptanceCriteria) == 0 {
		t.AcceptanceCriteria = []string{"The change does what the task title says: " + t.Title}
	}
	s.CurrentTask = t
	s.Implementation, s.QA = nil, nil
	s.PlannerDecision = DecisionImplement
	events.Emit(ctx, events.TaskPlanned{Task: t.ID, Title: t.Title, Milestone: t.Milestone, Directive: t.DirectiveID})
	return d.prepareAttempt(s), nil
}

// prepareAttempt counts the attempt and sets where it starts: a retry builds on
// the previous attempt's work-in-progress commit.
func (d taskWork) prepareAttempt(s runstate.State) runstate.State {
	t := s.CurrentTask
	t.Attempt++
	if s.Implementation != nil && s.Implementation.Commit != "" {
		t.AttemptBase = s.Implementation.Commit
	}
	s.Implementation, s.QA = nil, nil
	return s
}

// resetTo returns the work tree to the task's start. A task skipped or
// aborted before it started has no start and nothing to undo.
func (d taskWork) resetTo(ctx context.Context, t *runstate.Task) error {
	if t.StartCommit == "" {
		return nil
	}
	return d.Work.ResetHard(ctx, t.StartCommit)
}

// abandon ends the current task as failed: the work tree returns to the
// task's start, the failure is recorded with its reason, its directive is
// settled and the knowledge it was given loses its clean-use count.
func (d taskWork) abandon(ctx context.Context, s *runstate.State, reason string) error {
	t := s.CurrentTask
	if err := d.resetTo(ctx, t); err != nil {
		return err
	}
	now := d.now()
	attempted := ""
	if s.Implementation != nil {
		attempted = s.Implementation.Commit
	}
	s.Failures = append(s.Failures, runstate.Failure{TaskID: t.ID, Milestone: t.Milestone, Title: t.Title, Reason: textutil.ClipTrimmed(reason, 1500), Attempts: t.Attempt, At: now, Attempted: attempted})
	s.TasksFailed++
	if t.DirectiveID != "" {
		settleDirective(s, t.DirectiveID, t.ID, runstate.FateFailed, "task "+t.ID+" failed: "+textutil.ClipTrimmed(reason, 200), now)
	}
	if t.Polish {
		s.PolishTasks++
	}
	forgetKnowledgeUse(s, t)
	settleEscalations(s, t.ID, false)
	events.Emit(ctx, events.TaskFailed{Task: t.ID, Attempts: t.Attempt, Reason: textutil.ClipTrimmed(reason, 300)})
	s.CurrentTask, s.Implementation, s.QA = nil, nil, nil
	return nil
}

// stop ends the run with reason. A task in progress is abandoned as
// mark_failed would abandon it, so a stopped run never leaves half a task
// on the branch.
func (d taskWork) stop(ctx context.Context, s *runstate.State, st runstate.Stop) error {
	s.SetStop(st)
	reason := st.Reason
	s.PlannerDecision = DecisionStop
	if s.CurrentTask == nil {
		return nil
	}
	if err := d.abandon(ctx, s, "unfinished when the run stopped: "+reason); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	return nil
}

// settleEscalations records whether the architect's help led to a completed task.
func settleEscalations(s *runstate.State, taskID string, completed bool) {
	for i := range s.Escalations {
		e := &s.Escalations[i]
		if e.TaskID != taskID || e.Outcome != runstate.EscPending {
			continue
		}
		e.Outcome = runstate.EscNotHelped
		if completed {
			e.Outcome = runstate.EscHelped
		}
	}
}

func keepDirectiveTasks(ts []runstate.PlannedTask) []runstate.PlannedTask {
	var out []runstate.PlannedTask
	for _, t := range ts {
		if t.DirectiveID != "" {
			out = append(out, t)
		}
	}
	return out
}

// takeNext starts the next task of the carry-forward list, or, with none
// left, settles the milestone as done.
func (d taskWork) takeNext(ctx context.Context, s runstate.State) (runstate.State, error) {
	if len(s.CarryForward) == 0 {
		d.milestoneDone(&s)
		return s, nil
	}
	next := s.CarryForward[0]
	s.CarryForward = s.CarryForward[1:]
	return d.startTask(ctx, s, next)
}
