package nodes

// The run's state and its words live in package runstate, which readers of a
// run import without the workflow; nodes names them here so its own files
// read as before.

import "github.com/lemmings-dev/lemmings/runstate"

// The state and what it holds.
type (
	WorkflowState = runstate.State
	Task          = runstate.Task
	ImplResult    = runstate.ImplResult
	ImplStatus    = runstate.ImplStatus
	GateOutcome   = runstate.GateOutcome
	UsageTotals   = runstate.UsageTotals
)

// Node names of the workflow graph.
const (
	NodeImplementor = runstate.NodeImplementor
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
