package graph

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrRunNotFound: the checkpointer holds no run with that id.
	ErrRunNotFound = errors.New("graph: run not found")
	// ErrRunExists: Run was called with the id of a run already stored; use Resume.
	ErrRunExists = errors.New("graph: run already exists")
	// ErrRunFinished: the run reached End and cannot be resumed.
	ErrRunFinished = errors.New("graph: run already finished")
	// ErrRunLocked: another process or goroutine is advancing the run.
	ErrRunLocked = errors.New("graph: run is locked by another writer")
	// ErrPaused: the run stopped at an interrupt and is stored as paused.
	ErrPaused = errors.New("graph: run paused")
	// ErrHalted: the stop check asked the run to stop, or its context was
	// cancelled with a cause that wraps ErrHalted; it is stored as halted.
	ErrHalted = errors.New("graph: run halted")
	// ErrNoCheckpointer: the operation needs a checkpointer (WithCheckpointer).
	ErrNoCheckpointer = errors.New("graph: no checkpointer configured")
	// ErrInvalidRunID: run ids are 1–128 characters of [A-Za-z0-9._-], not starting with '.' or '-'.
	ErrInvalidRunID = errors.New("graph: invalid run id")
	// ErrStepNotFound: the run has no retained checkpoint of that step.
	ErrStepNotFound = errors.New("graph: checkpoint not found")
	// ErrCorrupt: stored checkpoint data failed its checks; the error names the file.
	ErrCorrupt = errors.New("graph: corrupt checkpoint data")
)

// NodeError is a node's failure: its error after retries, a timeout, or a panic.
type NodeError struct {
	Node    string
	Step    int // the step the node was computing
	Attempt int // attempts made (1 when no retry policy)
	Err     error
	Stack   string // goroutine stack when the node panicked, else empty
}

func (e *NodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %q (step %d", e.Node, e.Step)
	if e.Attempt > 1 {
		fmt.Fprintf(&b, ", attempt %d", e.Attempt)
	}
	fmt.Fprintf(&b, "): %v", e.Err)
	if e.Stack != "" {
		b.WriteString("\n")
		b.WriteString(e.Stack)
	}
	return b.String()
}

func (e *NodeError) Unwrap() error { return e.Err }

// RecursionError: the run made more steps in one Run/Resume call than the limit allows.
type RecursionError struct {
	Limit int
	Last  []string // the nodes of the last steps, oldest first; parallel nodes joined by "+"
}

func (e *RecursionError) Error() string {
	return fmt.Sprintf("graph: recursion limit of %d steps reached; last steps: %s (raise it with WithRecursionLimit or add an exit to the loop)",
		e.Limit, strings.Join(e.Last, " → "))
}

// RouteError: a router returned a destination that was not declared for it.
type RouteError struct {
	Node        string
	Destination string
	Declared    []string
}

func (e *RouteError) Error() string {
	return fmt.Sprintf("graph: router of node %q returned %q, which is not among its declared destinations %v",
		e.Node, e.Destination, e.Declared)
}

// InterruptError is returned by Interrupt; a node returns it to pause the run.
type InterruptError struct{ Reason string }

func (e *InterruptError) Error() string { return "graph: interrupt: " + e.Reason }

// Interrupt returns the error a node returns to pause the run after this step:
// the state the node returned is committed, the run is stored as paused with
// reason, and Resume continues with the next nodes.
func Interrupt(reason string) error { return &InterruptError{Reason: reason} }

// MergeError: parallel branches wrote the same field in one step and the field
// has no reducer that combines their writes.
type MergeError struct {
	Field string
	Nodes []string
	Why   string
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("graph: field %s written by %s in one step: %s", e.Field, strings.Join(e.Nodes, ", "), e.Why)
}

// DamagedRunsError lists the runs a listing could not read (ListRuns,
// Checkpointer.Runs): the other runs are listed beside it, so one damaged
// run never hides the rest.
type DamagedRunsError struct {
	Runs map[string]error // run id → why it could not be read
}

func (e *DamagedRunsError) Error() string {
	ids := make([]string, 0, len(e.Runs))
	for id := range e.Runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("run %s: %v", id, e.Runs[id])
	}
	return "graph: damaged runs: " + strings.Join(parts, "; ")
}

// Unwrap returns each run's error (so errors.Is(err, ErrCorrupt) works).
func (e *DamagedRunsError) Unwrap() []error {
	out := make([]error, 0, len(e.Runs))
	for _, err := range e.Runs {
		out = append(out, err)
	}
	return out
}

func (e *DamagedRunsError) add(id string, err error) {
	if e.Runs == nil {
		e.Runs = map[string]error{}
	}
	e.Runs[id] = err
}
