package events

import (
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
)

// The workflow's course: plans, tasks, commits, supervisors, knowledge, the
// run's progress and its end.

// Event names of the workflow's course.
const (
	KindWarning              = "warning"
	KindPipeline             = "pipeline"
	KindPipelineKeptQuick    = "pipeline_kept_quick"
	KindPipelineEscalated    = "pipeline_escalated"
	KindPlaced               = "placed"
	KindMilestones           = "milestones"
	KindMilestonesRejected   = "milestones_rejected"
	KindTaskPlanned          = "task_planned"
	KindTaskFailed           = "task_failed"
	KindTaskSplit            = "task_split"
	KindCommit               = "commit"
	KindClaimOverruled       = "claim_overruled"
	KindEvidence             = "evidence"
	KindAssessment           = "assessment"
	KindPolishStart          = "polish_start"
	KindDirectivePreempt     = "directive_preempt"
	KindCarryForwardChurn    = "carry_forward_churn"
	KindPlanFitted           = "plan_fitted"
	KindPlanSentBack         = "plan_sent_back"
	KindKnowledgePromoted    = "knowledge_promoted"
	KindKnowledgeProblems    = "knowledge_problems"
	KindKnowledgeOmitted     = "knowledge_omitted"
	KindKnowledgeReviewed    = "knowledge_reviewed"
	KindEscalation           = "escalation"
	KindReviewDisputed       = "review_disputed"
	KindSupervisorStart      = "supervisor_start"
	KindSupervisorRelaunch   = "supervisor_relaunch"
	KindSupervisorDone       = "supervisor_done"
	KindSupervisorConverging = "supervisor_converging"
	KindReport               = "report"
	KindProgress             = "progress"
	KindTrace                = "trace"
	KindWorldReset           = "world_reset"
	KindTold                 = "told"
	KindTaskUndone           = "task_undone"
	KindForked               = "forked"
)

// Warning: something went wrong that the run works around.
type Warning struct {
	Message string `json:"message"`
	// Startup marks a warning the run's start printed on stderr before its
	// log was open: a live view does not say it again.
	Startup bool `json:"startup,omitempty"`
}

// Pipeline: the run's shape (quick or full) and why.
type Pipeline struct {
	Quick bool   `json:"quick"`
	Why   string `json:"why"`
}

// PipelineChange: a quick run's failing task kept the quick path
// (pipeline_kept_quick) or the run became a full one (pipeline_escalated).
type PipelineChange struct {
	Name     string `json:"-"`
	Attempts int    `json:"attempts"`
	Task     string `json:"task"`
	Why      string `json:"why"`
}

// Placed: lemmings found where the remit's change goes before any plan:
// the files to change, the tests that pin the behaviour (shown, not
// changed), the test files the remit asks tests in, and what placed it.
type Placed struct {
	Change []string `json:"change"`
	How    string   `json:"how"`
	Show   []string `json:"show"`
	Tests  []string `json:"tests,omitempty"`
}

// Milestones: the ScopeAgent planned (or re-planned) the milestones.
type Milestones struct {
	Count  int  `json:"count"`
	Replan bool `json:"replan"`
}

// MilestonesRejected: the operator rejected the milestones on resume; the
// planner hands the reason back to the ScopeAgent.
type MilestonesRejected struct {
	Reason string `json:"reason"`
}

// TaskPlanned: a task began.
type TaskPlanned struct {
	Directive string `json:"directive"`
	Milestone string `json:"milestone"`
	Task      string `json:"task"`
	Title     string `json:"title"`
}

// TaskFailed: a task was abandoned.
type TaskFailed struct {
	Attempts int    `json:"attempts"`
	Reason   string `json:"reason"`
	Task     string `json:"task"`
}

// TaskSplit: a failing task was split into smaller ones.
type TaskSplit struct {
	Into []string `json:"into"`
	Task string   `json:"task"`
}

// Commit: a task's work was committed.
type Commit struct {
	Files []string `json:"files"`
	SHA   string   `json:"sha"`
	Task  string   `json:"task"`
}

// ClaimOverruled: a claim of done lacked evidence.
type ClaimOverruled struct {
	Claim string `json:"claim"`
	Who   string `json:"who"`
	Why   string `json:"why"`
}

// Evidence: what shows a done run did its work.
type Evidence struct {
	Evidence string `json:"evidence"`
}

// Assessment: the Assessor's verdict.
type Assessment struct {
	Notes   string `json:"notes"`
	Reason  string `json:"reason"`
	Verdict string `json:"verdict"`
}

// PolishStart: the polish phase began.
type PolishStart struct {
	CleanupDirectives int `json:"cleanup_directives"`
}

// DirectivePreempt: a critical directive's task went before the plan.
type DirectivePreempt struct {
	Directive string `json:"directive"`
}

// CarryForwardChurn: the planner rewrote the planned tasks.
type CarryForwardChurn struct {
	Changed int `json:"changed"`
	Was     int `json:"was"`
}

// PlanFitted: a plan was cut to the limits; Tasks for a planning round,
// Milestones for the ScopeAgent's plan.
type PlanFitted struct {
	Label      string `json:"label"`
	Milestones *int   `json:"milestones,omitempty"`
	Tasks      *int   `json:"tasks,omitempty"`
}

// PlanSentBack: a plan that broke the limits was sent back once.
type PlanSentBack struct {
	Label   string   `json:"label"`
	Reasons []string `json:"reasons"`
}

// KnowledgePromoted: provisional documents became established.
type KnowledgePromoted struct {
	Docs []string `json:"docs"`
}

// KnowledgeProblems: the knowledge store has problems (the first named).
type KnowledgeProblems struct {
	Count int    `json:"count"`
	First string `json:"first"`
}

// Omission is a knowledge document left out of a prompt, and why.
type Omission struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// KnowledgeOmitted: documents left out of a prompt.
type KnowledgeOmitted struct {
	Omitted []Omission `json:"omitted"`
}

// KnowledgeReviewed: a person's decision on a document (lemmings serve).
type KnowledgeReviewed struct {
	Decision string `json:"decision"`
	Doc      string `json:"doc"`
	Reason   string `json:"reason"`
}

// Escalation: a call for cloud help; Passed for a cloud review, Attempt for
// the architect.
type Escalation struct {
	Attempt int     `json:"attempt,omitempty"`
	CostUSD float64 `json:"cost_usd"`
	EscKind string  `json:"kind"` // runstate.EscArchitect, EscCloudReview
	Passed  *bool   `json:"passed,omitempty"`
	Task    string  `json:"task"`
}

// ReviewDisputed: the review failed a diff it had failed before.
type ReviewDisputed struct {
	Attempt int    `json:"attempt"`
	Policy  string `json:"policy"`
	Task    string `json:"task"`
}

// SupervisorStart: a supervisor job was launched.
type SupervisorStart struct {
	Bootstrap  bool   `json:"bootstrap"`
	Job        string `json:"job"`
	Supervisor string `json:"supervisor"`
	Trigger    string `json:"trigger"`
}

// SupervisorRelaunch: a listed job this process did not know runs again.
type SupervisorRelaunch struct {
	Job string `json:"job"`
}

// SupervisorDone: a supervisor job's result landed.
type SupervisorDone struct {
	CostUSD    float64  `json:"cost_usd"`
	Directives []string `json:"directives"`
	Docs       []string `json:"docs"`
	Job        string   `json:"job"`
	Summary    string   `json:"summary"`
	Supervisor string   `json:"supervisor"`
}

// SupervisorConverging: a supervisor finds little new; it runs less often.
type SupervisorConverging struct {
	Interval   int     `json:"interval"`
	NewShare   float64 `json:"new_share"`
	Supervisor string  `json:"supervisor"`
}

// Report: report.md was written, and how the run stands.
type Report struct {
	Next      string             `json:"next"`
	Outcome   runstate.Outcome   `json:"outcome"`
	Path      string             `json:"path"`
	Reason    string             `json:"reason"`
	Resumable bool               `json:"resumable"`
	Status    runstate.RunStatus `json:"status"`
}

// Standing is how the run stands, as the report says.
func (r Report) Standing() runstate.Standing {
	return runstate.Standing{Status: r.Status, Reason: r.Reason, Next: r.Next, Resumable: r.Resumable}
}

// Progress: the run's counts after a node (runview.Progress).
type Progress struct {
	CostUSD    float64 `json:"cost_usd"`
	Done       int     `json:"done"`
	Failed     int     `json:"failed"`
	Milestone  int     `json:"milestone"`
	Milestones int     `json:"milestones"`
	Phase      string  `json:"phase"`
	Planned    int     `json:"planned"`
}

// Trace: where the run's trace goes.
type Trace struct {
	Endpoint    string `json:"endpoint"`
	TraceID     string `json:"trace_id"`
	Traceparent string `json:"traceparent"`
}

// WorldReset: the work tree was put back where the last checkpoint left it.
type WorldReset struct {
	From string `json:"from"`
	// Rescue is the branch that keeps the cut-off step's edits, if any.
	Rescue string `json:"rescue,omitempty"`
	Step   int    `json:"step"`
	To     string `json:"to"`
	Why    string `json:"why,omitempty"`
}

// RunEnd is the data of the run_end event (graph.EventRunEnd, not custom):
// the graph's stored status beside the run's standing in the event's
// Status and Reason.
type RunEnd struct {
	// By names the command that set the run's standing from outside it
	// ("undo", "fork"); empty when the run's own process ended it.
	By        string       `json:"by,omitempty"`
	Next      string       `json:"next"`
	Resumable bool         `json:"resumable"`
	Stored    graph.Status `json:"stored"`
}

// Kind implements Payload.
func (Warning) Kind() string { return KindWarning }

// Kind implements Payload.
func (Pipeline) Kind() string { return KindPipeline }

// Kind implements Payload.
func (p PipelineChange) Kind() string { return p.Name }

// Kind implements Payload.
func (Placed) Kind() string { return KindPlaced }

// Kind implements Payload.
func (Milestones) Kind() string { return KindMilestones }

// Kind implements Payload.
func (MilestonesRejected) Kind() string { return KindMilestonesRejected }

// Kind implements Payload.
func (TaskPlanned) Kind() string { return KindTaskPlanned }

// Kind implements Payload.
func (TaskFailed) Kind() string { return KindTaskFailed }

// Kind implements Payload.
func (TaskSplit) Kind() string { return KindTaskSplit }

// Kind implements Payload.
func (Commit) Kind() string { return KindCommit }

// Kind implements Payload.
func (ClaimOverruled) Kind() string { return KindClaimOverruled }

// Kind implements Payload.
func (Evidence) Kind() string { return KindEvidence }

// Kind implements Payload.
func (Assessment) Kind() string { return KindAssessment }

// Kind implements Payload.
func (PolishStart) Kind() string { return KindPolishStart }

// Kind implements Payload.
func (DirectivePreempt) Kind() string { return KindDirectivePreempt }

// Kind implements Payload.
func (CarryForwardChurn) Kind() string { return KindCarryForwardChurn }

// Kind implements Payload.
func (PlanFitted) Kind() string { return KindPlanFitted }

// Kind implements Payload.
func (PlanSentBack) Kind() string { return KindPlanSentBack }

// Kind implements Payload.
func (KnowledgePromoted) Kind() string { return KindKnowledgePromoted }

// Kind implements Payload.
func (KnowledgeProblems) Kind() string { return KindKnowledgeProblems }

// Kind implements Payload.
func (KnowledgeOmitted) Kind() string { return KindKnowledgeOmitted }

// Kind implements Payload.
func (KnowledgeReviewed) Kind() string { return KindKnowledgeReviewed }

// Kind implements Payload.
func (Escalation) Kind() string { return KindEscalation }

// Kind implements Payload.
func (ReviewDisputed) Kind() string { return KindReviewDisputed }

// Kind implements Payload.
func (SupervisorStart) Kind() string { return KindSupervisorStart }

// Kind implements Payload.
func (SupervisorRelaunch) Kind() string { return KindSupervisorRelaunch }

// Kind implements Payload.
func (SupervisorDone) Kind() string { return KindSupervisorDone }

// Kind implements Payload.
func (SupervisorConverging) Kind() string { return KindSupervisorConverging }

// Kind implements Payload.
func (Report) Kind() string { return KindReport }

// Kind implements Payload.
func (Progress) Kind() string { return KindProgress }

// Kind implements Payload.
func (Trace) Kind() string { return KindTrace }

// Kind implements Payload.
func (WorldReset) Kind() string { return KindWorldReset }

// Kind implements Payload.
func (Told) Kind() string { return KindTold }

// Kind implements Payload.
func (TaskUndone) Kind() string { return KindTaskUndone }

// Kind implements Payload.
func (Forked) Kind() string { return KindForked }

func init() {
	register(
		func() Payload { return &Warning{} },
		func() Payload { return &Pipeline{} },
		func() Payload { return &PipelineChange{Name: KindPipelineKeptQuick} },
		func() Payload { return &PipelineChange{Name: KindPipelineEscalated} },
		func() Payload { return &Placed{} },
		func() Payload { return &Milestones{} },
		func() Payload { return &MilestonesRejected{} },
		func() Payload { return &TaskPlanned{} },
		func() Payload { return &TaskFailed{} },
		func() Payload { return &TaskSplit{} },
		func() Payload { return &Commit{} },
		func() Payload { return &ClaimOverruled{} },
		func() Payload { return &Evidence{} },
		func() Payload { return &Assessment{} },
		func() Payload { return &PolishStart{} },
		func() Payload { return &DirectivePreempt{} },
		func() Payload { return &CarryForwardChurn{} },
		func() Payload { return &PlanFitted{} },
		func() Payload { return &PlanSentBack{} },
		func() Payload { return &KnowledgePromoted{} },
		func() Payload { return &KnowledgeProblems{} },
		func() Payload { return &KnowledgeOmitted{} },
		func() Payload { return &KnowledgeReviewed{} },
		func() Payload { return &Escalation{} },
		func() Payload { return &ReviewDisputed{} },
		func() Payload { return &SupervisorStart{} },
		func() Payload { return &SupervisorRelaunch{} },
		func() Payload { return &SupervisorDone{} },
		func() Payload { return &SupervisorConverging{} },
		func() Payload { return &Report{} },
		func() Payload { return &Progress{} },
		func() Payload { return &Trace{} },
		func() Payload { return &WorldReset{} },
		func() Payload { return &Told{} },
		func() Payload { return &TaskUndone{} },
		func() Payload { return &Forked{} },
	)
}

// Told: the run took in a message the user told it (lemmings tell), filed
// as directive Directive.
type Told struct {
	Directive string `json:"directive"`
	ID        string `json:"id"`
	Message   string `json:"message"`
	Priority  string `json:"priority"`
}

// TaskUndone: the run took back a task the user asked it to (lemmings undo
// of a running run): Commit reverted by Revert.
type TaskUndone struct {
	Commit string `json:"commit"`
	Reason string `json:"reason"`
	Revert string `json:"revert"`
	Task   string `json:"task"`
}

// Forked: the run was made by lemmings fork from step Step of Parent (its
// first checkpoint), taking back RejectTask with Reason, with a new remit
// when Remit.
type Forked struct {
	Parent     string `json:"parent"`
	Reason     string `json:"reason,omitempty"`
	RejectTask string `json:"reject_task,omitempty"`
	Remit      bool   `json:"remit,omitempty"`
	Step       int    `json:"step"`
}
