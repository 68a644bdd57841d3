package nodes

import (
	"time"

	"github.com/lemmings-dev/lemmings/workspace"
)

// Settings are the workflow's knobs, filled from config by the runner. Tests
// build them directly with DefaultSettings and change what they need.
type Settings struct {
	MaxTasks       int
	MaxRetries     int
	MaxActions     int
	MaxWallTime    time.Duration
	ReviewInterval int
	PolishTasks    int
	// MaxScopeRounds bounds how often a major divergence may send the run back
	// to the ScopeAgent.
	MaxScopeRounds int
	// MaxConsecutiveFailures is the circuit breaker: that many failed tasks in
	// a row stop the run.
	MaxConsecutiveFailures int

	DirectiveMaxAge      int
	MaxCleanupDirectives int

	Supervisors SupervisorSettings

	Tasks TaskLimits
	QA    QASettings
	// ArchitectAfter failed attempts of one task, one cloud call writes edit
	// instructions for the next attempt (0: never).
	ArchitectAfter int
	// PlannerRole serves the ScopeAgent and TaskPlanner: RolePlanner when the
	// runner configured a planner model of its own, else RolePrimary.
	PlannerRole string
	// CloudPlanner: the planner role costs money and is paid from the
	// supervisor budget; once it is spent the primary plans.
	CloudPlanner bool

	KnowledgeDir    string
	KnowledgeBudget int
	PromoteAfter    int

	// TokenBudgets per label (scope_agent, task_planner, implementor, qa,
	// assessor, summarizer, supervisor).
	TokenBudgets    map[string]int
	GateOutputBytes int

	// EditProtocol is how the implementor's model writes code: EditText (the
	// action in JSON, the code as plain text in a second call) or EditJSON
	// (the code inside the JSON action).
	EditProtocol string
	// WholeFileLines: files up to this size are rewritten whole in the text
	// protocol; in larger ones the function, method or type that changes is
	// rewritten whole (Go, Python), or SEARCH/REPLACE blocks are asked for.
	WholeFileLines int
	// ReplyTokens is the primary role's reply budget (max_tokens; 0:
	// unknown): a file is asked for whole only when it fits.
	ReplyTokens int
	// Samples is how many candidates a code call may draw (implementor.samples):
	// the first that parses and adds no check problem is kept.
	Samples int
	// FixRounds is how often failing gates on finish go back to the model
	// inside the attempt (0: finish ends the attempt at once).
	FixRounds int
	// SyntaxChecks are run after each edit, by file extension
	// (workspace.DefaultSyntaxChecks); nil or empty: none.
	SyntaxChecks map[string]string
	// CLI, when set, has a coding CLI write the code (implementor.backend: cli).
	CLI *CLISettings
	// Pipeline sizes the run to the work: the quick path (quick.go) or the
	// full pipeline.
	Pipeline PipelineSettings
}

// Edit protocols of the implementor.
const (
	EditText = "text"
	EditJSON = "json"
)

// SupervisorSettings configure the supervisors (docs/supervisors.md).
type SupervisorSettings struct {
	Enabled bool
	// Blocking runs supervisors inside the graph step;
	// otherwise they run in the background and land at the next planning round.
	Blocking  bool
	BudgetUSD float64
	// InputTokens is the budget of a supervisor's compressed input.
	InputTokens int

	UrgencyThreshold float64
	WeightQAFailure  float64
	WeightTaskAbort  float64
	WeightChurn      float64
	WeightMinorDrift float64

	CodeStyle    SupervisorKind
	Design       SupervisorKind
	Internaliser SupervisorKind

	// ConvergenceThreshold: a run whose share of new findings is below it
	// doubles that supervisor's interval, up to MaxInterval.
	ConvergenceThreshold float64
	MaxInterval          int

	// Deny lists globs of files never sent to the cloud.
	Deny []string
}

// TaskLimits bound a planned task so a small local model can finish it.
type TaskLimits struct {
	MaxTargetFiles      int
	MaxInstructionChars int
	// SplitAfter failed attempts, the planner may split the task (0: never).
	SplitAfter int
}

// QASettings configure the review.
type QASettings struct {
	RequireQuotes bool
	// Disputed: escalate | commit | retry (see config qa.disputed).
	Disputed string
}

// Dispute policies (QASettings.Disputed).
const (
	DisputeEscalate = "escalate"
	DisputeCommit   = "commit"
	DisputeRetry    = "retry"
)

// SupervisorKind is one supervisor's switch and periodic interval (0 = no
// periodic trigger).
type SupervisorKind struct {
	Enabled  bool
	Interval int
}

// DefaultSettings mirrors config's defaults.
func DefaultSettings() Settings {
	return Settings{
		MaxTasks:               50,
		MaxRetries:             3,
		MaxActions:             25,
		MaxWallTime:            4 * time.Hour,
		ReviewInterval:         5,
		PolishTasks:            10,
		MaxScopeRounds:         2,
		MaxConsecutiveFailures: 3,
		DirectiveMaxAge:        15,
		MaxCleanupDirectives:   10,
		Supervisors: SupervisorSettings{
			Enabled:              true,
			BudgetUSD:            2,
			InputTokens:          5000,
			UrgencyThreshold:     1.0,
			WeightQAFailure:      0.3,
			WeightTaskAbort:      1.0,
			WeightChurn:          0.2,
			WeightMinorDrift:     0.5,
			CodeStyle:            SupervisorKind{Enabled: true, Interval: 5},
			Design:               SupervisorKind{Enabled: true},
			Internaliser:         SupervisorKind{Enabled: true, Interval: 3},
			ConvergenceThreshold: 0.2,
			MaxInterval:          40,
			Deny:                 []string{".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "*.p12", "*.pfx", "secrets/**", "credentials*"},
		},
		Tasks:           TaskLimits{MaxTargetFiles: 2, MaxInstructionChars: 600, SplitAfter: 2},
		QA:              QASettings{RequireQuotes: true, Disputed: DisputeEscalate},
		ArchitectAfter:  2,
		PlannerRole:     RolePrimary,
		KnowledgeDir:    "docs/knowledge",
		KnowledgeBudget: 2000,
		PromoteAfter:    3,
		TokenBudgets: map[string]int{
			"scope_agent": 12000, "task_planner": 12000, "implementor": 16000,
			"qa": 12000, "assessor": 8000, "summarizer": 4000, "supervisor": 5000,
			LabelShared: 5000,
		},
		GateOutputBytes: 16384,
		EditProtocol:    EditText,
		WholeFileLines:  wholeFileLinesDefault,
		Samples:         samplesDefault,
		FixRounds:       3,
		SyntaxChecks:    workspace.DefaultSyntaxChecks(),
		Pipeline:        PipelineSettings{Mode: PipelineAuto, QuickAttempts: 2, Summaries: SummariesAuto},
	}
}

// Budget is the token budget of a prompt label (8000 when none is set).
func (s Settings) Budget(label string) int {
	if b := s.TokenBudgets[label]; b > 0 {
		return b
	}
	return 8000
}
