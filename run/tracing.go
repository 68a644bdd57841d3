package run

import (
	"context"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/tracing"
)

// startTracing starts this process's part of the run's trace when tracing is
// on (traceparent: the run's root span recorded by an earlier part, "" for a
// new run) and returns ctx attached to it; with tracing off, ctx as it is
// and a nil *tracing.Run, whose methods do nothing.
func startTracing(ctx context.Context, o Options, runID, remit, traceparent string) (context.Context, *tracing.Run, error) {
	cfg := o.Config
	if cfg == nil {
		cfg = config.Default()
	}
	tr, err := tracing.Start(ctx, tracing.Config{Enabled: cfg.Tracing.Enabled, Endpoint: cfg.Tracing.Endpoint,
		Offline: cfg.Offline, Prompts: cfg.Tracing.Prompts && cfg.Log.Prompts}, tracing.RunInfo{RunID: runID, Remit: remit, Traceparent: traceparent}, o.Warn)
	if err != nil || tr == nil {
		return ctx, nil, err
	}
	return tr.Attach(ctx), tr, nil
}

// withTraceMetadata adds the run's trace context to what each checkpoint
// records, so a resume (or another worker) continues the trace, and tells
// the trace which task the next steps work on.
func withTraceMetadata(tr *tracing.Run, meta func(context.Context, runstate.State) (map[string]string, error)) func(context.Context, runstate.State) (map[string]string, error) {
	if tr == nil {
		return meta
	}
	return func(ctx context.Context, s runstate.State) (map[string]string, error) {
		m, err := meta(ctx, s)
		if err != nil {
			return m, err
		}
		m[tracing.MetaTraceparent] = tr.Traceparent()
		if t := s.CurrentTask; t != nil {
			tr.SetTask(t.ID, t.Title)
		} else {
			tr.SetTask("", "")
		}
		return m, nil
	}
}

// noteTrace records in the run's event log which trace this part of the run
// went to, so a user can find it in the backend.
func (e *runEnv) noteTrace(runID string, tr *tracing.Run, o Options) {
	if tr == nil {
		return
	}
	e.note(runID, events.Trace{TraceID: tr.TraceID(), Traceparent: tr.Traceparent(), Endpoint: tr.Endpoint()}, o.Sinks)
}
