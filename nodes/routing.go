package nodes

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

func routeAfterScope(s WorkflowState, set Settings) string {
	if len(s.Milestones) == 0 {
		return NodeReport
	}
	if len(dueSupervisors(s, set)) > 0 { // a re-plan is a Design trigger
		return NodeSupervisors
	}
	return NodePlanner
}

func routeAfterPlanner(s WorkflowState, set Settings) string {
	switch s.PlannerDecision {
	case DecisionImplement:
		return NodeImplementor
	case DecisionSkip:
		return NodeComplete
	case DecisionAbort:
		return NodeFailed
	case DecisionMilestoneDone:
		return toAssessor(s, set)
	case DecisionPolishDone:
		return NodePolish
	case DecisionRescope:
		return NodeScope
	default: // DecisionStop and anything unexpected end the run with a report
		return NodeReport
	}
}

// routeAfterImplementor sends a finished attempt to QA; an attempt that ended
// blocked, looping or exhausted goes back to the planner (or fails the task
// when its retries are spent).
func routeAfterImplementor(s WorkflowState, maxRetries int) string {
	if s.Implementation != nil && s.Implementation.Status == "finished" {
		return NodeQA
	}
	if s.CurrentTask != nil && s.CurrentTask.Retries > maxRetries {
		return NodeFailed
	}
	return NodePlanner
}

func routeAfterQA(s WorkflowState, maxRetries int) string {
	if s.QA != nil && s.QA.Passed {
		return NodeComplete
	}
	if s.CurrentTask != nil && s.CurrentTask.Retries > maxRetries {
		return NodeFailed
	}
	return NodePlanner
}

func routeAfterComplete(s WorkflowState, set Settings) string {
	if s.Phase == PhasePolish {
		return NodePlanner
	}
	if len(dueSupervisors(s, set)) > 0 {
		return NodeSupervisors // supervisors first, so the Assessor sees their findings
	}
	if reviewDue(s) {
		return NodeAssessor
	}
	return NodePlanner
}

// routeAfterFailed: a task abort is a Design trigger and +1.0 urgency, so the
// supervisors usually run before the Assessor looks at the failure.
func routeAfterFailed(s WorkflowState, set Settings) string {
	return toAssessor(s, set)
}

// toAssessor goes to the Assessor through the supervisors when they are due.
func toAssessor(s WorkflowState, set Settings) string {
	if len(dueSupervisors(s, set)) > 0 {
		return NodeSupervisors
	}
	return NodeAssessor
}

func routeAfterSupervisors(s WorkflowState) string {
	if reviewDue(s) {
		return NodeAssessor
	}
	return NodePlanner
}

func routeAfterAssessor(s WorkflowState, set Settings) string {
	if s.Phase == PhasePolish {
		return NodePolish
	}
	if s.Assessment == nil {
		return NodePlanner
	}
	switch s.Assessment.Verdict {
	case "all_done":
		return NodePolish
	case "major_divergence":
		if s.ScopeRounds < set.MaxScopeRounds {
			return NodeScope
		}
		return NodePlanner
	default:
		return NodePlanner
	}
}

func routeAfterPolish(s WorkflowState) string {
	if s.Phase == PhasePolish {
		return NodePlanner
	}
	return NodeReport
}

// reviewDue says whether the Assessor must run after this task.
func reviewDue(s WorkflowState) bool {
	return s.ReviewReason != ""
}
