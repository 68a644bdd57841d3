package nodes

// The run's state and its words live in package runstate, which readers of a
// run import without the workflow; nodes names them here so its own files
// read as before.

import "github.com/lemmings-dev/lemmings/runstate"

// The state and what it holds.
type (
	WorkflowState   = runstate.State
	Plan            = runstate.Plan
	PlanMilestone   = runstate.PlanMilestone
	Milestone       = runstate.Milestone
	PlannedTask     = runstate.PlannedTask
	Task            = runstate.Task
	ImplResult      = runstate.ImplResult
	ImplStatus      = runstate.ImplStatus
	QAResult        = runstate.QAResult
	GateOutcome     = runstate.GateOutcome
	CriterionResult = runstate.CriterionResult
	Escalation      = runstate.Escalation
	DoneEntry       = runstate.DoneEntry
	Failure         = runstate.Failure
	Assessment      = runstate.Assessment
	Directive       = runstate.Directive
	DirectiveFate   = runstate.DirectiveFate
	SupervisorTrack = runstate.SupervisorTrack
	SupervisorRun   = runstate.SupervisorRun
	SupervisorJob   = runstate.SupervisorJob
	Approval        = runstate.Approval
	UsageTotals     = runstate.UsageTotals
	RunStatus       = runstate.RunStatus
	Standing        = runstate.Standing
	Stored          = runstate.Stored
	Outcome         = runstate.Outcome
	Stop            = runstate.Stop
)

// StandingOf says how a run stands (runstate.StandingOf).
func StandingOf(st Stored, s *WorkflowState) Standing { return runstate.StandingOf(st, s) }

// MilestoneShown is a milestone's status as a run's views show it
// (runstate.MilestoneShown).
func MilestoneShown(milestone string, st Standing) string {
	return runstate.MilestoneShown(milestone, st)
}

// Phases, milestone statuses, run statuses and outcomes.
const (
	PhaseExecute = runstate.PhaseExecute
	PhasePolish  = runstate.PhasePolish
	PhaseDone    = runstate.PhaseDone

	MilestonePending = runstate.MilestonePending
	MilestoneActive  = runstate.MilestoneActive
	MilestoneDone    = runstate.MilestoneDone

	RunRunning     = runstate.RunRunning
	RunDone        = runstate.RunDone
	RunFailed      = runstate.RunFailed
	RunStopped     = runstate.RunStopped
	RunPaused      = runstate.RunPaused
	RunInterrupted = runstate.RunInterrupted
	RunCrashed     = runstate.RunCrashed

	OutcomeDone    = runstate.OutcomeDone
	OutcomeFailed  = runstate.OutcomeFailed
	OutcomeStopped = runstate.OutcomeStopped
)

// Node names of the workflow graph.
const (
	NodeScope       = runstate.NodeScope
	NodePlanner     = runstate.NodePlanner
	NodeImplementor = runstate.NodeImplementor
	NodeQA          = runstate.NodeQA
	NodeComplete    = runstate.NodeComplete
	NodeFailed      = runstate.NodeFailed
	NodeSupervisors = runstate.NodeSupervisors
	NodeAssessor    = runstate.NodeAssessor
	NodePolish      = runstate.NodePolish
	NodeReport      = runstate.NodeReport
)

// Implementation statuses.
const (
	ImplFinished  = runstate.ImplFinished
	ImplBlocked   = runstate.ImplBlocked
	ImplQuestion  = runstate.ImplQuestion
	ImplExhausted = runstate.ImplExhausted
	ImplLoop      = runstate.ImplLoop
	ImplError     = runstate.ImplError
	ImplRejected  = runstate.ImplRejected
)

// Escalation kinds and outcomes, and the done list's QA words.
const (
	EscArchitect      = runstate.EscArchitect
	EscCloudReview    = runstate.EscCloudReview
	EscReviewDisputed = runstate.EscReviewDisputed

	EscPending    = runstate.EscPending
	EscHelped     = runstate.EscHelped
	EscNotHelped  = runstate.EscNotHelped
	EscPassed     = runstate.EscPassed
	EscFailed     = runstate.EscFailed
	EscCommitted  = runstate.EscCommitted
	EscCallFailed = runstate.EscCallFailed

	QADisputed = runstate.QADisputed
	QASplit    = runstate.QASplit
)

// Directive types, priorities and fates.
const (
	DirFunctional = runstate.DirFunctional
	DirCleanup    = runstate.DirCleanup

	PrioCritical = runstate.PrioCritical
	PrioNormal   = runstate.PrioNormal
	PrioLow      = runstate.PrioLow

	FateTask      = runstate.FateTask
	FateHandled   = runstate.FateHandled
	FateEscalated = runstate.FateEscalated
	FateCompleted = runstate.FateCompleted
	FateFailed    = runstate.FateFailed
	FateAgedOut   = runstate.FateAgedOut
	FateCapped    = runstate.FateCapped
	FateForced    = runstate.FateForced
)
