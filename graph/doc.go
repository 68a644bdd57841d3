// Package graph is a typed state-graph runtime with durable checkpoints.
//
// A graph is a set of nodes, Go functions from a state S (any struct) to a new
// S, joined by static edges, conditional edges whose destinations are declared,
// and parallel branches whose results are joined field by field:
//
//	g := graph.New[State]().
//		AddNode("plan", plan).
//		AddNode("act", act, graph.WithRetry(graph.RetryPolicy{MaxAttempts: 3}), graph.WithSideEffects()).
//		AddEdge(graph.Start, "plan").
//		AddEdge("plan", "act").
//		AddConditionalEdges("act", next, "plan", graph.End)
//	app, err := g.Compile(graph.WithCheckpointer(store))
//	final, err := app.Run(ctx, "run-1", State{})
//
// Compile checks the graph (unknown, unreachable and dead-end nodes, a missing
// entry) and the state type: every field a checkpoint stores must survive
// encoding/json, so unexported, func, chan and interface fields are refused
// by name unless tagged `json:"-"`. Struct tags choose how parallel branches
// join a field: `graph:"append"` (slices: base plus each branch's new
// elements, in node order) and `graph:"merge"` (maps: union of the keys each
// branch set or deleted); any other field may be written by one branch per
// step. WithMerge replaces these rules with a function.
//
// After every step the runtime commits a checkpoint before the next step
// begins: the nodes that ran, the nodes to run next, the time, metadata, and
// the fields that changed. Append fields store only their new elements; a full
// snapshot is written once the deltas since the last one outweigh it, so the
// bytes written per step follow what the step changed, not the size of the
// state, and loading reads a bounded amount. Resume continues a run from its
// last checkpoint after a crash, a pause (Interrupt, WithInterruptBefore,
// WithInterruptAfter), a halt (WithStopCheck), a cancellation or a failure;
// nodes that finished are never run again, including the finished branches of
// a parallel step. A finished run cannot be resumed (ErrRunFinished), and two
// writers never advance one run (ErrRunLocked).
//
// Time travel and dynamic shapes: Fork opens any stored step of a run as a
// new run (optionally with WithUpdate and AsNode, LangGraph's update_state
// with as_node) and Replay runs it; AddSend fans a node out to a number of
// tasks decided at run time, each with its own input, checkpointed so that a
// crash reruns only the unfinished tasks; AddSubgraph runs a compiled graph
// as a node, its steps checkpointed under the parent's run and an interrupt
// inside pausing the parent. WithDurability chooses per call when checkpoints
// reach the store: sync (each step before the next), async (off the hot
// path, flushed at side effects, pauses and the end) or exit (at the end).
//
// NewFileCheckpointer stores runs durably in a directory of append-only,
// checksummed segment files; NewMemoryCheckpointer keeps them in memory. Both
// implement Checkpointer. Events (run, node, retry, interrupt, error,
// checkpoint and custom events from Emit) go to any number of Sinks; a
// JSONLSink writes an audit log.
//
// docs/graph.md in the repository describes the store format, the sync policy
// and what a power loss can cost, and how to prune.
package graph
