// Package tracing sends a run to an OpenTelemetry backend as a trace: a span
// for the run (one per process that advances it), one per node step, one per
// model call with the GenAI semantic conventions (gen_ai.*), one per gate and
// one per git commit, every one carrying the run id and, inside a task, the
// task.
//
// It attaches from outside the workflow: Run.Sink consumes the graph's events
// (run and node spans), and Run.Attach puts the run into a context whose model
// calls (llm.WithCallObserver) and gates and commits
// (workspace.WithObserver) it observes; graph.NodeOf places each of those
// under the node that made it. With tracing off none of this exists, so a run
// pays nothing for it.
//
// Spans leave through OTLP over HTTP (protobuf) to the endpoint of
// Config.Endpoint or the standard OTEL_EXPORTER_OTLP_* variables. The W3C
// traceparent of a run's root span is kept with its checkpoints
// (MetaTraceparent), so a resume, in this process or on another machine,
// continues the same trace.
package tracing
