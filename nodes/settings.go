package nodes

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Settings are the workflow's knobs, filled from config by the runner. Tests
// build them directly with DefaultSettings and change what they need.
type Settings struct {
	// The Implementor's knobs (MaxActions, EditProtocol, Samples, CLI…).
	implementor.Knobs

	MaxTasks       int
	MaxRetries     int
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

	Supervisors supervisors.Settings

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
	TokenBudgets map[string]int

	// Pipeline sizes the run to the work: the quick path (quick.go) or the
	// full pipeline.
	Pipeline PipelineSettings
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

// maxScopeRounds is how often a major divergence may send the run back to
// the ScopeAgent (no config key).
const maxScopeRounds = 2

// DefaultSettings are the settings of config's defaults (config.Default):
// one table, which the runner and the tests both read, so a default changed
// in config is the default of the workflow too.
func DefaultSettings() Settings { return SettingsFrom(config.Default()) }

// SettingsFrom maps a configuration onto the workflow's settings; the knobs
// config has no key for (MaxScopeRounds, WholeFileLines, the syntax checks)
// are the workflow's own. The runner adds what it learns at start (the
// reply budget, a coding CLI).
func SettingsFrom(c *config.Config) Settings {
	def := config.Default()
	l := c.Limits
	s := Settings{
		Knobs: implementor.Knobs{
			MaxActions:      l.MaxActions,
			GateOutputBytes: l.GateOutputBytes,
			EditProtocol:    cmp.Or(c.Roles[config.RolePrimary].EditProtocol, def.Roles[config.RolePrimary].EditProtocol),
			WholeFileLines:  implementor.WholeFileLinesDefault,
			Samples:         cmp.Or(c.Implementor.Samples, def.Implementor.Samples),
			Draws:           cmp.Or(c.Implementor.Draws, def.Implementor.Draws),
			Direct:          cmp.Or(c.Implementor.Direct, def.Implementor.Direct) == config.DirectAuto,
			FixRounds:       l.FixRounds,
			SyntaxChecks:    workspace.DefaultSyntaxChecks(),
		},
		MaxTasks: l.MaxTasks, MaxRetries: l.MaxRetries, MaxWallTime: l.MaxWallTime,
		ReviewInterval: l.ReviewInterval, PolishTasks: l.PolishTasks, MaxScopeRounds: maxScopeRounds,
		MaxConsecutiveFailures: cmp.Or(l.MaxConsecutiveFailures, def.Limits.MaxConsecutiveFailures),
		DirectiveMaxAge:        l.DirectiveMaxAge, MaxCleanupDirectives: l.MaxCleanupDirectives,
		Supervisors:     supervisorsFrom(c),
		Tasks:           TaskLimits{MaxTargetFiles: c.Tasks.MaxTargetFiles, MaxInstructionChars: c.Tasks.MaxInstructionChars, SplitAfter: c.Tasks.SplitAfter},
		QA:              QASettings{RequireQuotes: c.QA.RequireQuotes, Disputed: c.QA.Disputed},
		ArchitectAfter:  c.Escalation.ArchitectAfter,
		PlannerRole:     RolePrimary,
		KnowledgeDir:    c.Knowledge.Dir,
		KnowledgeBudget: c.Knowledge.BudgetTokens,
		PromoteAfter:    c.Knowledge.PromoteAfter,
		TokenBudgets:    maps.Clone(l.TokenBudgets),
		Pipeline:        PipelineSettings{Mode: c.Pipeline.Mode, QuickAttempts: c.Pipeline.QuickAttempts, Summaries: c.Pipeline.Summaries},
	}
	return s
}

// Budget is the token budget of a prompt label (8000 when none is set).
func (s Settings) Budget(label string) int {
	if b := s.TokenBudgets[label]; b > 0 {
		return b
	}
	return 8000
}

// supervisorsFrom maps a configuration's supervisors section onto their
// settings; an offline run has none.
func supervisorsFrom(c *config.Config) supervisors.Settings {
	sup := c.Supervisors
	return supervisors.Settings{
		Enabled:              sup.Enabled && !c.Offline,
		Blocking:             sup.Mode == "blocking",
		BudgetUSD:            sup.BudgetUSD,
		InputTokens:          sup.InputTokens,
		UrgencyThreshold:     sup.UrgencyThreshold,
		WeightQAFailure:      sup.UrgencyWeights.QAFailure,
		WeightTaskAbort:      sup.UrgencyWeights.TaskAbort,
		WeightChurn:          sup.UrgencyWeights.Churn,
		WeightMinorDrift:     sup.UrgencyWeights.MinorDrift,
		CodeStyle:            supervisors.Kind{Enabled: sup.CodeStyle.Enabled, Interval: sup.CodeStyle.Interval},
		Design:               supervisors.Kind{Enabled: sup.Design.Enabled},
		Internaliser:         supervisors.Kind{Enabled: sup.Internaliser.Enabled, Interval: sup.Internaliser.Interval},
		ConvergenceThreshold: sup.Convergence.Threshold,
		MaxInterval:          sup.Convergence.MaxInterval,
		Deny:                 slices.Clone(sup.Deny),
	}
}
