package runstate

// Node names of the workflow graph (the graph's Event.Node and a checkpoint's
// next nodes say them). nodes/prompts names the templates of the nodes that
// ask a model with the same words; a test in nodes checks they agree.
const (
	NodeScope       = "scope_agent"
	NodePlanner     = "task_planner"
	NodeImplementor = "implementor"
	NodeQA          = "qa"
	NodeComplete    = "mark_complete"
	NodeFailed      = "mark_failed"
	NodeSupervisors = "run_supervisors"
	NodeAssessor    = "assessor"
	NodePolish      = "polish"
	NodeReport      = "report"
)

// Facts a node reports to the hooks around it (State.Happened): what
// happened, not what anyone should make of it.
const (
	HappenedTaskCompleted = "task_completed"  // a task of the remit (not polish) was committed
	HappenedTaskAborted   = "task_aborted"    // a task was given up (mark_failed)
	HappenedQAFailed      = "qa_failed"       // QA sent an attempt back
	HappenedPlanChurn     = "plan_churn"      // the planner rewrote most of its plan
	HappenedMilestoneDone = "milestone_done"  // the planner says the milestone is done
	HappenedScopeReplan   = "scope_replanned" // the ScopeAgent planned the remit again
	HappenedMinorDrift    = "minor_drift"     // the Assessor saw the work drift a little
)

// ImplStatus is how one Implementor attempt ended (ImplResult.Status).
type ImplStatus string

// Implementation statuses.
const (
	ImplFinished  ImplStatus = "finished"
	ImplBlocked   ImplStatus = "blocked"
	ImplQuestion  ImplStatus = "question"
	ImplExhausted ImplStatus = "exhausted"
	ImplLoop      ImplStatus = "loop"
	ImplError     ImplStatus = "error"
	ImplRejected  ImplStatus = "rejected"
)

// Escalation kinds (Escalation.Kind).
const (
	EscArchitect      = "architect"
	EscCloudReview    = "cloud_review"
	EscReviewDisputed = "review_disputed"
)

// Escalation outcomes (Escalation.Outcome).
const (
	EscPending    = "pending"
	EscHelped     = "helped"
	EscNotHelped  = "did_not_help"
	EscPassed     = "passed"
	EscFailed     = "failed"
	EscCommitted  = "committed"
	EscCallFailed = "error"
)

// The done list's QA column beyond passed, skipped and failed.
const (
	// QADisputed is work committed with its review disputed.
	QADisputed = "review disputed"
	// QASplit marks a task replaced by smaller ones.
	QASplit = "split"
)

// Directive types, priorities and fates.
const (
	DirFunctional = "functional"
	DirCleanup    = "cleanup"

	PrioCritical = "critical"
	PrioNormal   = "normal"
	PrioLow      = "low"

	FateTask      = "task"
	FateHandled   = "handled"
	FateEscalated = "escalated"
	FateCompleted = "completed"
	FateFailed    = "failed"
	FateAgedOut   = "aged_out"
	FateCapped    = "capped"
	// FateForced: the planner ignored a directive too many rounds, so the
	// orchestrator turned it into a task itself.
	FateForced = "forced_task"
)

// Approval kinds (Approval.Kind): what a paused run waits for.
const (
	ApproveMilestones = "milestones"
	ApproveTask       = "task"
)
