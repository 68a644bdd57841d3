package runstate

import "time"

// Phases of a run.
const (
	PhaseExecute = "execute"
	PhasePolish  = "polish"
	PhaseDone    = "done"
)

// Milestone statuses.
const (
	MilestonePending = "pending"
	MilestoneActive  = "active"
	MilestoneDone    = "done"
)

// State is everything the workflow knows of a run. It is checkpointed after
// every node, so every field must survive JSON; append-only lists are tagged
// so the checkpointer stores only their new elements.
type State struct {
	RunID string `json:"run_id"`
	Remit string `json:"remit"`
	Phase string `json:"phase"`
	// Demo: a run of lemmings demo, whose scripted model server ends with
	// it (its forks too): no screen points it at resume.
	Demo bool `json:"demo,omitempty"`

	// Plan came from --plan: ScopeAgent uses it instead of asking the model.
	Plan *Plan `json:"plan,omitempty"`

	// ProjectContext is the repository overview every local prompt starts
	// with (the shared prefix), so the model's prompt cache is reused across
	// roles; built once by the ScopeAgent (again only on a re-plan). Files a
	// task adds show in the done list and the task's own views.
	ProjectContext string `json:"project_context,omitempty"`

	// Quick: the remit is one task and goes straight to the Implementor
	// (quick.go); PipelineReason says why the run has the shape it has.
	Quick          bool   `json:"quick,omitempty"`
	PipelineReason string `json:"pipeline_reason,omitempty"`
	// Happened are the facts the last node reports to the hooks around it
	// (Happened* constants); the hooks clear them, so a checkpoint never
	// holds any.
	Happened []string `json:"happened,omitempty"`

	Milestones       []Milestone `json:"milestones"`
	CurrentMilestone int         `json:"current_milestone"`

	DoneList     []DoneEntry   `json:"done_list" graph:"append"`
	CarryForward []PlannedTask `json:"carry_forward"`
	CurrentTask  *Task         `json:"current_task,omitempty"`
	NextTaskID   int           `json:"next_task_id"`

	Implementation *ImplResult `json:"implementation,omitempty"`
	QA             *QAResult   `json:"qa,omitempty"`
	// PlannerDecision is the TaskPlanner's last routing decision.
	PlannerDecision string `json:"planner_decision"`

	EscalationContext string `json:"escalation_context,omitempty"`

	TasksCompleted       int `json:"tasks_completed"`
	TasksFailed          int `json:"tasks_failed"`
	TasksSinceLastReview int `json:"tasks_since_last_review"`
	ReviewInterval       int `json:"review_interval"`
	// ConsecutiveFailures opens the circuit breaker: that many tasks failed in
	// a row means the model cannot do this work, and the run stops.
	ConsecutiveFailures int `json:"consecutive_failures"`
	// PlannerFailures counts planning rounds in a row without a usable answer.
	PlannerFailures int `json:"planner_failures"`

	// ReviewReason is why the Assessor runs next: "interval", "milestone", "failure".
	ReviewReason string      `json:"review_reason,omitempty"`
	Assessment   *Assessment `json:"assessment,omitempty"`
	ScopeRounds  int         `json:"scope_rounds"`

	// Supervisors (docs/supervisors.md).
	PendingDirectives  []Directive                `json:"pending_directives"`
	DirectiveLog       []DirectiveFate            `json:"directive_log" graph:"append"`
	NextDirectiveID    int                        `json:"next_directive_id"`
	SupervisorUrgency  float64                    `json:"supervisor_urgency"`
	SupervisorRunLog   []SupervisorRun            `json:"supervisor_run_log" graph:"append"`
	Supervisors        map[string]SupervisorTrack `json:"supervisors"`
	SupervisorJobs     []SupervisorJob            `json:"supervisor_jobs"`
	SupervisorSpendUSD float64                    `json:"supervisor_spend_usd"`
	// PendingTriggers are events that due supervisors react to: milestone_complete,
	// scope_replan, task_abort; "event@supervisor" keeps an event for one
	// supervisor whose job was still in flight when the others reacted.
	PendingTriggers []string `json:"pending_triggers"`

	PolishTasks int `json:"polish_tasks"`

	// LastKnowledge lists the documents the last planning prompt carried.
	LastKnowledge []string `json:"last_knowledge,omitempty"`
	// KnowledgeUses counts completed tasks during which a provisional doc was
	// injected without trouble; at the configured count it becomes established.
	KnowledgeUses map[string]int `json:"knowledge_uses"`

	// Escalations are the calls for cloud help on failing tasks (architect,
	// cloud review) and the reviews disputed, with what became of them.
	Escalations []Escalation `json:"escalations,omitempty"`

	Failures []Failure `json:"failures" graph:"append"`
	Warnings []string  `json:"warnings" graph:"append"`

	// Approve is the run's approval mode: "", "milestones" or "tasks".
	Approve string `json:"approve,omitempty"`
	// Approval is set by `lemmings resume --approve/--reject`.
	Approval *Approval `json:"approval,omitempty"`

	Usage      map[string]UsageTotals `json:"usage"`
	StartedAt  time.Time              `json:"started_at"`
	BaseCommit string                 `json:"base_commit"`
	Branch     string                 `json:"branch"`
	ReportPath string                 `json:"report_path,omitempty"`
	// Outcome is how the Report node settled the run (OutcomeDone, OutcomeFailed,
	// OutcomeStopped); StandingOf turns it into the run's status.
	Outcome Outcome `json:"outcome,omitempty"`
	// StopReason says why the run stopped before its work was done;
	// StopKind and StopKey say what stopped it (SetStop writes all three).
	StopReason string   `json:"stop_reason,omitempty"`
	StopKind   StopKind `json:"stop_kind,omitempty"`
	StopKey    string   `json:"stop_key,omitempty"`
	// Evidence says what shows a done run did its work (nodes/evidence.go).
	Evidence string `json:"evidence,omitempty"`
	// Overruled lists the claims of done that lacked evidence.
	Overruled []string `json:"overruled" graph:"append"`

	// Tells are the messages the user told the run (lemmings tell), each
	// filed as a directive the planner must address (steer.go).
	Tells []ToldMessage `json:"tells,omitempty" graph:"append"`
	// Undone are the tasks the user took back (lemmings undo, fork
	// --reject-task): their commits reverted, the tasks back in the plan.
	Undone []UndoneTask `json:"undone,omitempty" graph:"append"`
}

// ToldMessage is one message a user told a run (lemmings tell).
type ToldMessage struct {
	ID        string    `json:"id"` // the request's id, so a message is filed once
	Message   string    `json:"message"`
	Directive string    `json:"directive"` // the directive it was filed as
	Priority  string    `json:"priority"`
	At        time.Time `json:"at"` // when it was told
	// Delivered is when the run took it in (its next checkpoint).
	Delivered time.Time `json:"delivered"`
}

// UndoneTask records a task the user took back.
type UndoneTask struct {
	ID     string `json:"id,omitempty"` // the request's id, for an undo asked of a running run
	TaskID string `json:"task_id"`
	Title  string `json:"title"`
	Reason string `json:"reason"`
	// Commit is the task's commit; Revert the commit that reverted it ("" when
	// the task had no commit). Reset: the task was in progress, and the work
	// tree went back to its start.
	Commit string `json:"commit,omitempty"`
	Revert string `json:"revert,omitempty"`
	Reset  bool   `json:"reset,omitempty"`
	// By: undo (lemmings undo) or fork (lemmings fork --reject-task).
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// Plan is an operator-supplied plan (lemmings run --plan plan.yaml).
type Plan struct {
	Milestones []PlanMilestone `json:"milestones" yaml:"milestones"`
}

// PlanMilestone is one milestone of an operator plan.
type PlanMilestone struct {
	Goal   string        `json:"goal" yaml:"goal"`
	Themes []string      `json:"themes,omitempty" yaml:"themes"`
	Tasks  []PlannedTask `json:"tasks" yaml:"tasks"`
}

// Milestone is one stage of the remit as the ScopeAgent (or the plan) cut it.
type Milestone struct {
	ID     string   `json:"id"`
	Goal   string   `json:"goal"`
	Themes []string `json:"themes,omitempty"`
	Status string   `json:"status"`
	// Tasks are the milestone's initial tasks, moved to carry-forward when
	// the milestone starts.
	Tasks []PlannedTask `json:"tasks,omitempty"`
}

// PlannedTask is a task not yet started (carry-forward).
type PlannedTask struct {
	Title              string   `json:"title" yaml:"title"`
	Instructions       string   `json:"instructions,omitempty" yaml:"instructions"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty" yaml:"acceptance_criteria"`
	TargetFiles        []string `json:"target_files,omitempty" yaml:"target_files"`
	// DirectiveID links a task created to address a directive.
	DirectiveID string `json:"directive_id,omitempty" yaml:"-"`
	// Operator marks tasks from --plan, which the planner must not rewrite.
	Operator bool `json:"operator,omitempty" yaml:"-"`
	// SplitFrom names the failed task this one was split from.
	SplitFrom string `json:"split_from,omitempty" yaml:"-"`
	// Placed: lemmings found the task's files itself (an item of a list
	// remit), so its first attempt asks for the code at once, as a quick
	// task's does.
	Placed bool `json:"placed,omitempty" yaml:"-"`
	// Tests are the test files the remit asks tests to be written in ("each
	// with a test in textstats_test.go"): the direct attempt adds one there
	// once its code passes, since it otherwise changes only the code.
	Tests []string `json:"tests,omitempty" yaml:"-"`
	// Feedback goes with the task when it starts: why a user took back an
	// earlier attempt at it (UndoTask).
	Feedback string `json:"feedback,omitempty" yaml:"-"`
}

// Task is the task in progress.
type Task struct {
	ID                 string   `json:"id"`
	Milestone          string   `json:"milestone"`
	Title              string   `json:"title"`
	Instructions       string   `json:"instructions"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	TargetFiles        []string `json:"target_files,omitempty"`
	DirectiveID        string   `json:"directive_id,omitempty"`
	// StartCommit is HEAD when the task began: MarkFailed returns here.
	StartCommit string `json:"start_commit"`
	// AttemptBase is where the next implementor attempt starts: StartCommit,
	// or the work-in-progress commit of the previous attempt.
	AttemptBase string `json:"attempt_base"`
	Attempt     int    `json:"attempt"`
	// Retries counts failed attempts (QA failures, loops, blocked answers).
	Retries    int      `json:"retries"`
	Feedback   string   `json:"feedback,omitempty"`
	DiffHashes []string `json:"diff_hashes,omitempty"`
	// KnowledgeInjected lists provisional docs the planner saw for this task.
	KnowledgeInjected []string `json:"knowledge_injected,omitempty"`
	Polish            bool     `json:"polish,omitempty"`
	// Operator tasks come from --plan: their acceptance criteria are fixed.
	Operator bool `json:"operator,omitempty"`
	// Placed: lemmings found the task's files (PlannedTask.Placed).
	Placed bool `json:"placed,omitempty"`
	// Tests: the test files the remit asks tests in (PlannedTask.Tests).
	Tests []string `json:"tests,omitempty"`
	// StartTested: the test gates ran on the task's start tree; StartFailing
	// are the tests that failed there (QA's evidence, nodes/start_tests.go).
	StartTested  bool     `json:"start_tested,omitempty"`
	StartFailing []string `json:"start_failing,omitempty"`
	// StartPassed: every test gate passed on the start tree (no test there
	// shows what the task asks for).
	StartPassed bool `json:"start_passed,omitempty"`
	// Passing is the work-in-progress commit of the first attempt whose
	// gates passed and whose review did not (PassingAttempt its number):
	// when no later attempt does better, it is committed flagged rather
	// than thrown away (nodes/keep.go).
	Passing        string `json:"passing,omitempty"`
	PassingAttempt int    `json:"passing_attempt,omitempty"`
	// ReviewFailedHashes are diffs whose gates passed but whose review failed;
	// the same diff again is a disputed review, not a loop.
	ReviewFailedHashes []string `json:"review_failed_hashes,omitempty"`
	// Disputed: this attempt repeats a diff the review failed (see qa.disputed).
	Disputed bool `json:"disputed,omitempty"`
	// CloudReviewed: the task's dispute went to the cloud reviewer once.
	CloudReviewed bool `json:"cloud_reviewed,omitempty"`
	// Architect: the cloud architect wrote the instructions of a later attempt.
	Architect bool `json:"architect,omitempty"`
	// SplitFrom names the task this one was split from (it is not split again).
	SplitFrom string `json:"split_from,omitempty"`
}

// ImplResult is what one implementor attempt produced.
type ImplResult struct {
	Status   ImplStatus `json:"status"`
	Summary  string     `json:"summary"`
	Question string     `json:"question,omitempty"`
	Actions  int        `json:"actions"`
	Files    []string   `json:"files,omitempty"`
	Commit   string     `json:"commit,omitempty"` // work-in-progress commit of this attempt
	DiffHash string     `json:"diff_hash,omitempty"`
	Error    string     `json:"error,omitempty"`
	// FixRounds counts failing gates sent back to the model on finish.
	FixRounds int `json:"fix_rounds,omitempty"`
	// Malformed counts replies that were not usable actions or code.
	Malformed int `json:"malformed,omitempty"`
	// Gates passed inside the loop on the tree whose diff hash is
	// GatesDiffHash: QA reuses them when the attempt's DiffHash is the same.
	Gates         []GateOutcome `json:"gates,omitempty"`
	GatesDiffHash string        `json:"gates_diff_hash,omitempty"`
	// Evidence says what shows the change does what the task asks, when a
	// test the attempt added fails without the change and passes with it
	// (nodes/implementor/asked.go): QA's verdict on the task's words.
	Evidence string `json:"evidence,omitempty"`
}

// QAResult is the QA node's verdict on one attempt.
type QAResult struct {
	Passed   bool              `json:"passed"`
	Gates    []GateOutcome     `json:"gates"`
	Criteria []CriterionResult `json:"criteria,omitempty"`
	Feedback string            `json:"feedback,omitempty"`
	// Disputed: the gates passed, the review failed the same diff twice, and
	// the work was committed anyway (qa.disputed: commit, or no cloud review).
	Disputed bool `json:"disputed,omitempty"`
	// Reviewer is who gave the verdict: local, cloud for a disputed review,
	// or checks when the gates and lemmings' own checks covered every
	// criterion and no model was asked.
	Reviewer string `json:"reviewer,omitempty"`
}

// GateOutcome is one gate command's result, output tail kept for feedback.
type GateOutcome struct {
	Name     string        `json:"name"`
	Command  string        `json:"command"`
	Passed   bool          `json:"passed"`
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Duration time.Duration `json:"duration"`
	Output   string        `json:"output,omitempty"`
}

// CriterionResult is QA's judgement of one acceptance criterion.
type CriterionResult struct {
	Criterion string `json:"criterion"`
	Met       bool   `json:"met"`
	Evidence  string `json:"evidence"`
	// Quote is the line of the change the reviewer quoted as evidence.
	Quote string `json:"quote,omitempty"`
	// By is who decided: gates or reviewer.
	By string `json:"by,omitempty"`
}

// Escalation is one call for cloud help on a task, or a review disputed.
type Escalation struct {
	Kind             string  `json:"kind"` // architect | cloud_review | review_disputed
	TaskID           string  `json:"task_id"`
	Attempt          int     `json:"attempt"`
	PromptTokens     int     `json:"prompt_tokens,omitempty"`
	CompletionTokens int     `json:"completion_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	// Outcome: pending, then helped | did_not_help (architect), passed | failed
	// (cloud review), committed (review disputed), or error.
	Outcome string    `json:"outcome"`
	Note    string    `json:"note,omitempty"`
	At      time.Time `json:"at"`
}

// DoneEntry is one finished task in the done list.
type DoneEntry struct {
	TaskID      string    `json:"task_id"`
	Milestone   string    `json:"milestone"`
	Title       string    `json:"title"`
	Summary     string    `json:"summary"`
	QA          string    `json:"qa"` // passed | skipped | failed
	Files       []string  `json:"files,omitempty"`
	Commit      string    `json:"commit,omitempty"`
	Attempts    int       `json:"attempts"`
	DirectiveID string    `json:"directive_id,omitempty"`
	Polish      bool      `json:"polish,omitempty"`
	At          time.Time `json:"at"`
	// The task as it was planned, so an undone task goes back to the plan
	// whole.
	Instructions       string   `json:"instructions,omitempty"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	TargetFiles        []string `json:"target_files,omitempty"`
}

// Failure records why a task was abandoned.
type Failure struct {
	TaskID    string    `json:"task_id"`
	Milestone string    `json:"milestone"`
	Title     string    `json:"title"`
	Reason    string    `json:"reason"`
	Attempts  int       `json:"attempts"`
	At        time.Time `json:"at"`
	// Attempted is the last attempt's work, a `lemmings wip` commit off the
	// run branch (which was rolled back): what the model wrote, to look at
	// or to start from ("" when the attempt changed nothing).
	Attempted string `json:"attempted,omitempty"`
}

// Assessment is the Assessor's verdict.
type Assessment struct {
	Verdict string `json:"verdict"` // aligned | minor_drift | major_divergence | all_done
	Notes   string `json:"notes"`
	Reason  string `json:"reason"`
}

// Approval is a human decision injected on resume.
type Approval struct {
	Kind     string `json:"kind"` // milestones | task
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
}

// UsageTotals are tokens and cost per role label.
type UsageTotals struct {
	Calls            int           `json:"calls"`
	PromptTokens     int           `json:"prompt_tokens"`
	PromptCached     int           `json:"prompt_cached,omitempty"` // of PromptTokens, served by the server's cache
	CompletionTokens int           `json:"completion_tokens"`
	CostUSD          float64       `json:"cost_usd"`
	Elapsed          time.Duration `json:"elapsed"`
}

// ActiveMilestone returns the milestone being worked on, or nil.
func (s *State) ActiveMilestone() *Milestone {
	if s.CurrentMilestone < 0 || s.CurrentMilestone >= len(s.Milestones) {
		return nil
	}
	return &s.Milestones[s.CurrentMilestone]
}

// AddUsage folds one call's usage into the per-label totals.
func (s *State) AddUsage(label string, u UsageTotals) {
	if s.Usage == nil {
		s.Usage = map[string]UsageTotals{}
	}
	t := s.Usage[label]
	t.Calls += u.Calls
	t.PromptTokens += u.PromptTokens
	t.PromptCached += u.PromptCached
	t.CompletionTokens += u.CompletionTokens
	t.CostUSD += u.CostUSD
	t.Elapsed += u.Elapsed
	s.Usage[label] = t
}

// Clone copies the state's top-level slices and maps so a node can change them
// without touching the caller's copy (which a retry or the checkpointer may
// still read). Elements are copied by value; nodes replace nested slices
// rather than editing them in place.
func (s State) Clone() State {
	c := s
	c.Milestones = append([]Milestone(nil), s.Milestones...)
	c.DoneList = append([]DoneEntry(nil), s.DoneList...)
	c.CarryForward = append([]PlannedTask(nil), s.CarryForward...)
	c.PendingDirectives = append([]Directive(nil), s.PendingDirectives...)
	c.DirectiveLog = append([]DirectiveFate(nil), s.DirectiveLog...)
	c.SupervisorRunLog = append([]SupervisorRun(nil), s.SupervisorRunLog...)
	c.SupervisorJobs = append([]SupervisorJob(nil), s.SupervisorJobs...)
	c.PendingTriggers = append([]string(nil), s.PendingTriggers...)
	c.Happened = append([]string(nil), s.Happened...)
	c.Failures = append([]Failure(nil), s.Failures...)
	c.Escalations = append([]Escalation(nil), s.Escalations...)
	c.Warnings = append([]string(nil), s.Warnings...)
	c.Tells = append([]ToldMessage(nil), s.Tells...)
	c.Undone = append([]UndoneTask(nil), s.Undone...)
	c.Supervisors = cloneMap(s.Supervisors)
	c.KnowledgeUses = cloneMap(s.KnowledgeUses)
	c.Usage = cloneMap(s.Usage)
	if s.CurrentTask != nil {
		t := *s.CurrentTask
		c.CurrentTask = &t
	}
	if s.Implementation != nil {
		r := *s.Implementation
		c.Implementation = &r
	}
	if s.QA != nil {
		q := *s.QA
		c.QA = &q
	}
	if s.Assessment != nil {
		a := *s.Assessment
		c.Assessment = &a
	}
	if s.Approval != nil {
		a := *s.Approval
		c.Approval = &a
	}
	return c
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
