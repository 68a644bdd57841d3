package nodes

import (
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Planner decisions (WorkflowState.PlannerDecision).
const (
	DecisionImplement     = "implement"
	DecisionSkip          = "skip"
	DecisionAbort         = "abort"
	DecisionMilestoneDone = "milestone_done"
	DecisionPolishDone    = "polish_done"
	DecisionRescope       = "rescope"
	DecisionStop          = "stop"
)

// Routers are pure functions of the state so they can be tested alone; the
// nodes put every fact a router needs into the state first.

func routeAfterScope(s runstate.State, set Settings) string {
	if len(s.Milestones) == 0 {
		return runstate.NodeReport
	}
	if len(supervisors.DueNow(s, set.Supervisors)) > 0 { // a re-plan is a Design trigger
		return runstate.NodeSupervisors
	}
	return runstate.NodePlanner
}

func routeAfterPlanner(s runstate.State, set Settings) string {
	switch s.PlannerDecision {
	case DecisionImplement:
		return runstate.NodeImplementor
	case DecisionSkip:
		return runstate.NodeComplete
	case DecisionAbort:
		return runstate.NodeFailed
	case DecisionMilestoneDone:
		return toAssessor(s, set)
	case DecisionPolishDone:
		return runstate.NodePolish
	case DecisionRescope:
		return runstate.NodeScope
	default: // DecisionStop and anything unexpected end the run with a report
		return runstate.NodeReport
	}
}

// routeAfterImplementor sends a finished attempt to QA; an attempt that ended
// blocked, looping or exhausted goes back to the planner (or fails the task
// when its retries are spent).
func routeAfterImplementor(s runstate.State, maxRetries int) string {
	if s.Implementation != nil && s.Implementation.Status == "finished" {
		return runstate.NodeQA
	}
	if s.CurrentTask != nil && s.CurrentTask.Retries > maxRetries {
		return runstate.NodeFailed
	}
	return runstate.NodePlanner
}

func routeAfterQA(s runstate.State, maxRetries int) string {
	if s.QA != nil && s.QA.Passed {
		return runstate.NodeComplete
	}
	if s.CurrentTask != nil && s.CurrentTask.Retries > maxRetries {
		return runstate.NodeFailed
	}
	return runstate.NodePlanner
}

func routeAfterComplete(s runstate.State, set Settings) string {
	if s.Phase == runstate.PhasePolish {
		return runstate.NodePlanner
	}
	if len(supervisors.DueNow(s, set.Supervisors)) > 0 {
		return runstate.NodeSupervisors // supervisors first, so the Assessor sees their findings
	}
	if reviewDue(s) {
		return runstate.NodeAssessor
	}
	return runstate.NodePlanner
}

// routeAfterFailed: a task abort is a Design trigger and +1.0 urgency, so the
// supervisors usually run before the Assessor looks at the failure.
func routeAfterFailed(s runstate.State, set Settings) string {
	return toAssessor(s, set)
}

// toAssessor goes to the Assessor through the supervisors when they are due.
func toAssessor(s runstate.State, set Settings) string {
	if len(supervisors.DueNow(s, set.Supervisors)) > 0 {
		return runstate.NodeSupervisors
	}
	return runstate.NodeAssessor
}

func routeAfterSupervisors(s runstate.State) string {
	if reviewDue(s) {
		return runstate.NodeAssessor
	}
	return runstate.NodePlanner
}

func routeAfterAssessor(s runstate.State, set Settings) string {
	if s.Phase == runstate.PhasePolish {
		return runstate.NodePolish
	}
	if s.Assessment == nil {
		return runstate.NodePlanner
	}
	switch s.Assessment.Verdict {
	case "all_done":
		return runstate.NodePolish
	case "major_divergence":
		if s.ScopeRounds < set.MaxScopeRounds {
			return runstate.NodeScope
		}
		return runstate.NodePlanner
	default:
		return runstate.NodePlanner
	}
}

func routeAfterPolish(s runstate.State) string {
	if s.Phase == runstate.PhasePolish {
		return runstate.NodePlanner
	}
	return runstate.NodeReport
}

// reviewDue says whether the Assessor must run after this task.
func reviewDue(s runstate.State) bool {
	return s.ReviewReason != ""
}
