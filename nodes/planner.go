package nodes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/runstate"
)

// plannerData feeds the task_planner template.
type plannerData struct {
	MilestoneID string
	Polish      bool
	Feedback    string
	TaskTitle   string
	Attempt     int
	MaxAttempts int
	Approval    string
	// Task limits (tasks.*) and whether the failing task may be split.
	MaxFiles int
	MaxChars int
	CanSplit bool
}

// maxPlannerFailures: planning rounds in a row without a usable answer before
// the run stops rather than spin.
const maxPlannerFailures = 3

// planning is what carrying out a plan uses, past the model's call: the
// checks (and through them the task moves), the retrieval for related code,
// and the wall clock.
type planning struct {
	checks
	Search          Searcher
	WallDeadline    time.Time
	wallTimeLeft    func(s *runstate.State, now time.Time) (time.Duration, bool)
	wallTimeReached func() string
}

func planningOf(d *Deps) planning {
	return planning{checks: checksOf(d), Search: d.Search, WallDeadline: d.WallDeadline,
		wallTimeLeft: d.wallTimeLeft, wallTimeReached: d.wallTimeReached}
}

// TaskPlanner decides the next step: a task to implement (new, or the failed
// one re-planned with QA's feedback), a skip, an abort, or the end of the
// milestone. It also lands finished supervisor work and accounts for every
// directive.
func (d *Deps) TaskPlanner(ctx context.Context, in runstate.State) (runstate.State, error) {
	s, err := d.plan(ctx, in)
	if err != nil {
		return s, err
	}
	if s.Approve == "tasks" && s.PlannerDecision == DecisionImplement && s.CurrentTask != nil {
		s.Approval = nil
		t := s.CurrentTask
		return s, graph.Interrupt(fmt.Sprintf("approve task %s (attempt %d): %s", t.ID, t.Attempt, t.Title))
	}
	return s, nil
}

func (d *Deps) plan(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	now := d.now()
	s.PlannerDecision = ""

	// Finished supervisor work has landed and directives have aged
	// (supervisorHook, before this node).
	steeringOf(d).applyReviews(ctx, &s) // knowledge decisions left by lemmings serve
	steeringOf(d).applyUndos(ctx, &s)   // tasks the user took back (lemmings undo) while the run ran

	if st := planningOf(d).stopReason(&s, now); !st.IsZero() {
		return s, tasksOf(d).stop(ctx, &s, st)
	}
	if a := s.Approval; a != nil && a.Kind == "milestones" {
		s.Approval = nil
		if !a.Approved {
			s.EscalationContext = strings.TrimSpace(s.EscalationContext + "\nOperator rejected the milestones: " + a.Reason)
			s.PlannerDecision = DecisionRescope
			// Why this step runs at all: it hands the rejection back.
			events.Emit(ctx, events.MilestonesRejected{Reason: a.Reason})
			return s, nil
		}
	}
	polish := s.Phase == runstate.PhasePolish
	shown := orderedDirectives(s.PendingDirectives, polish)
	// Polish is bounded: no new cleanup task once limits.polish_tasks is reached.
	if polish && s.CurrentTask == nil && ((len(shown) == 0 && !hasPolishWork(&s)) || s.PolishTasks >= d.Settings.PolishTasks) {
		s.PlannerDecision = DecisionPolishDone
		return s, nil
	}

	// A quick run plans nothing: the remit is its one task.
	if s.Quick && !polish && len(shown) == 0 {
		return quickOf(d).planQuick(ctx, s)
	}

	// An operator plan fixes the tasks: the model is only consulted for
	// directives and failed attempts.
	if s.Plan != nil && len(shown) == 0 && s.CurrentTask == nil && !polish {
		return tasksOf(d).takeNext(ctx, s)
	}

	// A task that keeps failing gets the cloud architect's instructions first.
	s, escalated, err := d.architectRound(ctx, s)
	if err != nil || escalated {
		return s, err
	}
	data := plannerData{Polish: polish, MaxAttempts: d.Settings.MaxRetries + 1,
		MaxFiles: d.Settings.Tasks.MaxTargetFiles, MaxChars: d.Settings.Tasks.MaxInstructionChars, CanSplit: planningOf(d).canSplit(&s)}
	if m := s.ActiveMilestone(); m != nil {
		data.MilestoneID = m.ID
	}
	if t := s.CurrentTask; t != nil {
		data.Feedback, data.TaskTitle, data.Attempt = t.Feedback, t.Title, t.Attempt
	}
	if a := s.Approval; a != nil && a.Kind == "task" && !a.Approved {
		data.Approval = a.Reason
	}
	milestone := milestoneSection(&s)
	if related := planningOf(d).relatedCode(ctx, &s); related != "" {
		milestone.Body += "\n\nRelated code (retrieval):\n" + related
	}
	sections := []llm.Section{ // after the shared prefix: project context and knowledge
		milestone,
		directivesSection(shown),
		completedSection(&s),
	}
	c := call{Label: runstate.NodePlanner, Role: d.Settings.plannerRole(&s), Data: data, Sections: sections}
	reply, _, err := ask[plannerReply](ctx, d, &s, c)
	if err != nil {
		if !llm.ModelFault(err) {
			return s, err
		}
		return planningOf(d).plannerFailed(ctx, s, err)
	}
	s.PlannerFailures = 0
	reply = d.enforcePlanLimits(ctx, &s, c, reply)
	return planningOf(d).applyPlan(ctx, s, reply, shown, now)
}

// plannerFailed absorbs an unusable planning answer: the round is retried, a
// task in progress counts a failed attempt, and too many in a row stop the run.
// Its own error (a git failure starting the next task) fails the step, so the
// task taken off the plan is not lost: the step runs again on resume.
func (d planning) plannerFailed(ctx context.Context, s runstate.State, err error) (runstate.State, error) {
	s.PlannerFailures++
	events.Emit(ctx, events.Warning{Message: "planner answer unusable: " + err.Error()})
	if s.PlannerFailures >= maxPlannerFailures {
		if serr := d.stop(ctx, &s, runstate.FailureStop(fmt.Sprintf("the planner gave no usable answer %d times in a row (last: %v)", s.PlannerFailures, err))); serr != nil {
			events.Emit(ctx, events.Warning{Message: serr.Error()})
		}
		return s, nil
	}
	if t := s.CurrentTask; t != nil {
		t.Retries++
		if t.Retries > d.Settings.MaxRetries {
			t.Feedback = "planner could not re-plan the task: " + err.Error()
			s.PlannerDecision = DecisionAbort
			return s, nil
		}
		s.PlannerDecision = DecisionImplement // retry the task as planned
		return d.prepareAttempt(s), nil
	}
	// Nothing in progress: take the next planned task if there is one.
	if len(s.CarryForward) > 0 {
		next := s.CarryForward[0]
		s.CarryForward = s.CarryForward[1:]
		return d.startTask(ctx, s, next)
	}
	s.PlannerDecision = DecisionStop
	s.SetStop(runstate.FailureStop("the planner gave no usable answer and no task is planned: " + err.Error()))
	return s, nil
}

// applyPlan carries out the planner's answer: the plan and the directives'
// fates first, then a critical directive, which pre-empts everything, or else
// the planner's decision.
func (d planning) applyPlan(ctx context.Context, s runstate.State, r plannerReply, shown []runstate.Directive, now time.Time) (runstate.State, error) {
	chosen := chosenTask(&s, r, shown)
	if (s.Plan == nil || s.Phase == runstate.PhasePolish) && s.CurrentTask == nil {
		d.updateCarryForward(ctx, &s, r.CarryForward)
	}
	if critical := applyDirectiveAnswers(&s, shown, r.Directives, chosen, now); critical != nil {
		return d.preempt(ctx, s, chosen, *critical)
	}
	if r.Decision == DecisionSplit {
		if d.canSplit(&s) {
			return d.splitTask(ctx, s, r)
		}
		r.Decision = DecisionImplement // a split not offered is a re-plan
	}
	return d.decide(ctx, s, r, chosen)
}

// chosenTask is the task the planner's answer names, if any, with what the
// plan knew about it: its directive, and an operator's fixed acceptance
// criteria.
func chosenTask(s *runstate.State, r plannerReply, shown []runstate.Directive) *runstate.PlannedTask {
	if r.Task == nil || strings.TrimSpace(r.Task.Title) == "" {
		return nil
	}
	t := r.Task.planned()
	for _, p := range s.CarryForward {
		if strings.EqualFold(p.Title, t.Title) {
			t.DirectiveID, t.Operator, t.Feedback = p.DirectiveID, p.Operator, p.Feedback
			if p.Operator || len(t.AcceptanceCriteria) == 0 {
				t.AcceptanceCriteria = p.AcceptanceCriteria
			}
			break
		}
	}
	for _, sd := range shown { // the planner may name a directive in its task title or text
		if t.DirectiveID == "" && strings.Contains(t.Title+" "+t.Instructions, sd.ID) {
			t.DirectiveID = sd.ID
			break
		}
	}
	return &t
}

// preempt starts a critical directive's task: the planner's choice and a task
// in progress go back to the head of the plan.
func (d taskWork) preempt(ctx context.Context, s runstate.State, chosen *runstate.PlannedTask, critical runstate.PlannedTask) (runstate.State, error) {
	if chosen != nil && chosen.DirectiveID != critical.DirectiveID && s.CurrentTask == nil {
		s.CarryForward = append([]runstate.PlannedTask{*chosen}, dropPlanned(s.CarryForward, chosen.Title)...)
	}
	if t := s.CurrentTask; t != nil {
		// The interrupted task restarts later from its plan; its work in
		// progress must not leak into the critical task's commit.
		if err := d.resetTo(ctx, t); err != nil {
			return s, err
		}
		s.CarryForward = append([]runstate.PlannedTask{{Title: t.Title, Instructions: t.Instructions, AcceptanceCriteria: t.AcceptanceCriteria,
			TargetFiles: t.TargetFiles, DirectiveID: t.DirectiveID, Operator: t.Operator, Placed: t.Placed, Tests: t.Tests}}, s.CarryForward...)
		s.CurrentTask, s.Implementation, s.QA = nil, nil, nil
	}
	events.Emit(ctx, events.DirectivePreempt{Directive: critical.DirectiveID})
	return d.startTask(ctx, s, critical)
}

// decide carries out the planner's decision: implement (a new task or the
// failed one re-planned), skip, abort, or the milestone done.
func (d planning) decide(ctx context.Context, s runstate.State, r plannerReply, chosen *runstate.PlannedTask) (runstate.State, error) {
	switch r.Decision {
	case DecisionImplement:
		if s.CurrentTask != nil { // re-plan of a failed attempt
			if chosen != nil {
				s.CurrentTask.Instructions = chosen.Instructions
				if len(chosen.AcceptanceCriteria) > 0 && !s.CurrentTask.Operator {
					s.CurrentTask.AcceptanceCriteria = chosen.AcceptanceCriteria
				}
				if len(chosen.TargetFiles) > 0 {
					s.CurrentTask.TargetFiles = chosen.TargetFiles
				}
			}
			s.PlannerDecision = DecisionImplement
			return d.prepareAttempt(s), nil
		}
		if chosen == nil {
			if len(s.CarryForward) == 0 {
				return d.plannerFailed(ctx, s, fmt.Errorf("decision implement without a task"))
			}
			next := s.CarryForward[0]
			s.CarryForward = s.CarryForward[1:]
			chosen = &next
		} else {
			s.CarryForward = dropPlanned(s.CarryForward, chosen.Title)
		}
		return d.startTask(ctx, s, *chosen)
	case DecisionSkip:
		if s.CurrentTask == nil {
			next := chosen
			if next == nil && len(s.CarryForward) > 0 {
				head := s.CarryForward[0]
				next = &head
			}
			if next == nil {
				if out, overruled, err := d.overruleMilestoneClaim(ctx, s, r.Reasoning); overruled || err != nil {
					return out, err
				}
				d.milestoneDone(&s)
				return s, nil
			}
			s.CarryForward = dropPlanned(s.CarryForward, next.Title)
			s.CurrentTask = d.newTask(&s, *next)
		}
		s.CurrentTask.Feedback = r.Reasoning
		s.PlannerDecision = DecisionSkip
		return s, nil
	case DecisionAbort:
		if s.CurrentTask == nil {
			// Nothing to abort: drop the head of the plan, recorded as a failure.
			if len(s.CarryForward) == 0 {
				d.milestoneDone(&s)
				return s, nil
			}
			s.CurrentTask = d.newTask(&s, s.CarryForward[0])
			s.CarryForward = s.CarryForward[1:]
		}
		s.CurrentTask.Feedback = strings.TrimSpace("planner aborted the task: " + r.Reasoning)
		s.PlannerDecision = DecisionAbort
		return s, nil
	default: // milestone_done: a claim, checked against the work (evidence.go)
		if out, overruled, err := d.overruleMilestoneClaim(ctx, s, r.Reasoning); overruled || err != nil {
			return out, err
		}
		if s.Phase == runstate.PhasePolish {
			s.PlannerDecision = DecisionPolishDone
			return s, nil
		}
		d.milestoneDone(&s)
		return s, nil
	}
}

// stopReason enforces the run's limits before any new work is planned.
func (d planning) stopReason(s *runstate.State, now time.Time) runstate.Stop {
	set := d.Settings
	if s.StopReason != "" {
		return s.Stop()
	}
	if s.CurrentTask == nil && set.MaxTasks > 0 && s.TasksCompleted+s.TasksFailed >= set.MaxTasks {
		return runstate.LimitStop(runstate.KeyMaxTasks, fmt.Sprintf("reached the limit of %d tasks (limits.max_tasks)", set.MaxTasks))
	}
	if left, limited := d.wallTimeLeft(s, now); limited && left <= 0 && d.WallDeadline.IsZero() {
		// with a deadline, the cancelled context stops the run, resumable
		return runstate.LimitStop(runstate.KeyMaxWallTime, d.wallTimeReached())
	}
	if set.MaxConsecutiveFailures > 0 && s.ConsecutiveFailures >= set.MaxConsecutiveFailures {
		// The model failing is not a limit the user set: the run failed.
		return runstate.FailureStop(fmt.Sprintf("%d tasks failed in a row: the model cannot do this work as planned (limits.max_consecutive_failures)", s.ConsecutiveFailures))
	}
	return runstate.Stop{}
}

// relatedCode asks the index where the next piece of work probably lives, so
// the planner can name files without a tool loop of its own.
func (d planning) relatedCode(ctx context.Context, s *runstate.State) string {
	if d.Search == nil {
		return ""
	}
	var q []string
	if m := s.ActiveMilestone(); m != nil {
		q = append(q, m.Goal)
	}
	if t := s.CurrentTask; t != nil {
		q = append(q, t.Title)
	} else if len(s.CarryForward) > 0 {
		q = append(q, s.CarryForward[0].Title)
	}
	if len(q) == 0 {
		return ""
	}
	hits, err := d.Search.Search(ctx, strings.Join(q, " "), 5, rag.Filter{Kind: rag.KindCode})
	if err != nil || len(hits) == 0 {
		return ""
	}
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "- %s:%d-%d\n", h.Path, h.StartLine, h.EndLine)
	}
	return strings.TrimSpace(b.String())
}
