package graph

import (
	"context"
	"maps"
	"time"
)

// RetryPolicy says how often and when a failing node is tried again.
// The zero value means one attempt and no retry.
type RetryPolicy struct {
	MaxAttempts    int           // total attempts, first included; ≤ 1 means no retry
	InitialBackoff time.Duration // wait before the second attempt (default 100ms)
	MaxBackoff     time.Duration // cap of the doubling wait (default 30s)
	Jitter         float64       // 0..1: each wait is scaled by a random factor in [1-Jitter, 1]
	// Retryable says whether err is worth another attempt; nil retries every
	// error except panics, interrupts and cancellation of the run's context.
	Retryable func(error) bool
}

// NodeOption configures one node (AddNode).
type NodeOption func(*nodeConfig)

type nodeConfig struct {
	timeout     time.Duration
	retry       RetryPolicy
	sideEffects bool
}

// WithTimeout bounds one attempt of the node: its context is cancelled after d
// and a result returned after that is discarded as a timeout error. Nodes must
// honour ctx; the runtime waits for the node to return.
func WithTimeout(d time.Duration) NodeOption { return func(c *nodeConfig) { c.timeout = d } }

// WithRetry sets the node's retry policy.
func WithRetry(p RetryPolicy) NodeOption { return func(c *nodeConfig) { c.retry = p } }

// WithSideEffects marks a node that acts on the world (commits, sends mail): the
// checkpoint store is synced durably (fsync) before it runs and right after its
// step is committed, so neither a power loss nor a crash can make it run twice
// for a step already recorded.
func WithSideEffects() NodeOption { return func(c *nodeConfig) { c.sideEffects = true } }

// CompileOption configures Compile.
type CompileOption func(*compileConfig)

type compileConfig struct {
	checkpointer    Checkpointer
	recursionLimit  int
	interruptBefore []string
	interruptAfter  []string
	sinks           []Sink
	metadata        any // func(context.Context, S) map[string]string
	merge           any // func(S, []string, []S) (S, error)
	stopCheck       func(runID string) bool
	redact          func([]byte) []byte
	snapshotBytes   int
	durability      Durability
}

// DefaultRecursionLimit is the number of steps one Run or Resume call may take.
const DefaultRecursionLimit = 10000

// WithCheckpointer stores a checkpoint after every step in cp.
func WithCheckpointer(cp Checkpointer) CompileOption {
	return func(c *compileConfig) { c.checkpointer = cp }
}

// WithRecursionLimit caps the steps of one Run or Resume call (default 10,000).
func WithRecursionLimit(n int) CompileOption { return func(c *compileConfig) { c.recursionLimit = n } }

// WithInterruptBefore pauses the run before any of the named nodes runs.
func WithInterruptBefore(nodes ...string) CompileOption {
	return func(c *compileConfig) { c.interruptBefore = append(c.interruptBefore, nodes...) }
}

// WithInterruptAfter pauses the run after a step in which any of the named nodes ran.
func WithInterruptAfter(nodes ...string) CompileOption {
	return func(c *compileConfig) { c.interruptAfter = append(c.interruptAfter, nodes...) }
}

// WithSinks delivers the run's events to each sink, in order.
func WithSinks(sinks ...Sink) CompileOption {
	return func(c *compileConfig) { c.sinks = append(c.sinks, sinks...) }
}

// WithMetadata computes the metadata stored with each checkpoint from the
// committed state (lemmings stores the git HEAD of its work tree). S must be
// the graph's state type; Compile checks it.
func WithMetadata[S any](fn func(ctx context.Context, s S) map[string]string) CompileOption {
	return func(c *compileConfig) { c.metadata = fn }
}

// WithCheckedMetadata is WithMetadata for a function that can fail (one
// that pushes the step's work somewhere before the checkpoint names it).
// When it returns an error, the step's checkpoint is not stored and the run
// fails with that error, resumable from the checkpoint before. It replaces
// WithMetadata.
func WithCheckedMetadata[S any](fn func(ctx context.Context, s S) (map[string]string, error)) CompileOption {
	return func(c *compileConfig) { c.metadata = fn }
}

// WithMerge replaces the per-field reducers for parallel steps: fn receives the
// step's input state and, in node order, the names and results of the nodes
// that ran, and returns the joined state.
func WithMerge[S any](fn func(base S, nodes []string, results []S) (S, error)) CompileOption {
	return func(c *compileConfig) { c.merge = fn }
}

// WithStopCheck is polled after each committed checkpoint; when it returns true
// the run stops before its next step, is stored as halted, and Run or Resume
// returns an error matching ErrHalted.
func WithStopCheck(fn func(runID string) bool) CompileOption {
	return func(c *compileConfig) { c.stopCheck = fn }
}

// WithRedact filters what checkpoints record, to keep secrets out of the
// store: fn receives each stored field of the state as JSON (and a status's
// reason and error as JSON strings) and returns it with secrets removed,
// still valid JSON of the same shape (a value fn cannot have made returns
// the field as it was). The run goes on with the filtered state, so a
// resumed run starts from exactly what the live one had.
func WithRedact(fn func(json []byte) []byte) CompileOption {
	return func(c *compileConfig) { c.redact = fn }
}

// WithDefaultDurability sets the durability of runs started without
// WithDurability, and of calls on stored runs that never chose one (default
// DurabilitySync).
func WithDefaultDurability(d Durability) CompileOption {
	return func(c *compileConfig) { c.durability = d }
}

// DefaultSnapshotBytes is the least number of delta bytes between two full snapshots.
const DefaultSnapshotBytes = 256 << 10

// WithSnapshotBytes tunes how often a full snapshot of the state is stored: once
// the deltas written since the last snapshot exceed both n bytes and the size of
// that snapshot. Storage per step then stays proportional to what changed, and
// loading a state reads at most about twice max(n, state size).
func WithSnapshotBytes(n int) CompileOption { return func(c *compileConfig) { c.snapshotBytes = n } }

// RunOption configures one call of Run, Resume, Fork or Replay.
type RunOption func(*runConfig)

type runConfig struct {
	update     any    // func(S) (S, error)
	asNode     string // the node the update is attributed to; "" for UpdateNode
	durability Durability
	// goTo, when set, are the next nodes of the update's checkpoint.
	goTo    []string
	hasGoTo bool
	// meta are metadata keys set on the update's checkpoint.
	meta map[string]string
}

// WithUpdate edits the stored state before the run continues (Resume, Fork);
// the edit is committed as its own checkpoint, attributed to node
// "__update__" unless AsNode names another.
func WithUpdate[S any](fn func(S) (S, error)) RunOption {
	return func(c *runConfig) { c.update = fn }
}

// AsNode attributes the checkpoint of WithUpdate to node, as if node had
// returned the edited state: the next nodes are node's successors, picked by
// its edges and routers on the edited state (LangGraph's as_node). Without
// it, the update keeps the next nodes the run had.
func AsNode(node string) RunOption {
	return func(c *runConfig) { c.asNode = node }
}

// Goto makes nodes the next step of the checkpoint WithUpdate writes, whatever
// the run had next or AsNode's routers would pick (LangGraph's Command goto):
// an edit from outside the run that must send it somewhere, such as back to a
// planner. No node (or only End) leaves the run done.
func Goto(nodes ...string) RunOption {
	return func(c *runConfig) { c.goTo, c.hasGoTo = append([]string(nil), nodes...), true }
}

// SetMetadata sets keys of the metadata stored with the checkpoint WithUpdate
// writes (they replace those of the step before; the runtime's own keys,
// MetaForkRun, MetaForkStep and MetaDurability, cannot be set): a caller that
// changed the world the metadata describes along with the state (a commit
// moved) records it with the edit. Later steps' WithMetadata values replace
// them as usual.
func SetMetadata(kv map[string]string) RunOption {
	return func(c *runConfig) {
		if c.meta == nil {
			c.meta = map[string]string{}
		}
		maps.Copy(c.meta, kv)
	}
}

// WithDurability sets when this call's checkpoints reach the store
// (DurabilitySync, DurabilityAsync, DurabilityExit). On Run it is the run's
// mode, which later calls keep (MetaDurability); on Resume or Replay it
// overrides the run's mode for that call.
func WithDurability(d Durability) RunOption {
	return func(c *runConfig) { c.durability = d }
}
