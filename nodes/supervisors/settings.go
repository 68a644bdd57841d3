// Package supervisors is what decides the cloud supervisors' work and runs
// it: which supervisor is due and why (triggers, urgency, intervals), the
// directives they file and how those age, and the job pool their calls run
// in, in parallel with the local loop, and the run_supervisors node that
// launches and lands them (Runner). It knows nothing of package nodes: the
// workflow builds a Runner of what the supervisors use (their jobs, the work
// tree, their settings, a compose, a deny-list and a clock function);
// routing asks DueNow, the supervisors' hook lands finished jobs
// (Runner.Before) and records the facts a node reported (Facts), and
// Runner.Run launches their calls (Call) in Jobs and lands what Unpack makes
// of each reply (docs/supervisors.md).
package supervisors

import "github.com/lemmings-dev/lemmings/nodes/prompts"

// Order is the order supervisors are considered and started in; their names
// are prompts', as they are also the knowledge writers they act as.
var Order = []string{prompts.CodeStyle, prompts.Design, prompts.Internaliser}

// Trigger events a supervisor reacts to (the table in docs/supervisors.md).
const (
	TriggerInterval          = "interval"
	TriggerMilestoneComplete = "milestone_complete"
	TriggerScopeReplan       = "scope_replan"
	TriggerTaskAbort         = "task_abort"
	TriggerUrgency           = "urgency"
)

// Settings configure the supervisors (docs/supervisors.md).
type Settings struct {
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

	CodeStyle    Kind
	Design       Kind
	Internaliser Kind

	// ConvergenceThreshold: a run whose share of new findings is below it
	// doubles that supervisor's interval, up to MaxInterval.
	ConvergenceThreshold float64
	MaxInterval          int

	// Deny lists globs of files never sent to the cloud.
	Deny []string
}

// Kind is one supervisor's switch and periodic interval (0 = no periodic
// trigger).
type Kind struct {
	Enabled  bool
	Interval int
}

// Of is the settings of the supervisor named name.
func (s Settings) Of(name string) Kind {
	switch name {
	case prompts.CodeStyle:
		return s.CodeStyle
	case prompts.Design:
		return s.Design
	default:
		return s.Internaliser
	}
}
