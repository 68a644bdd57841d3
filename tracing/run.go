package tracing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

// MetaTraceparent is the checkpoint metadata key that keeps the W3C
// traceparent of a run's root span: whoever advances the run next (a resume
// here, or a worker elsewhere) reads it and continues the same trace.
const MetaTraceparent = "traceparent"

// ServiceName is the service.name of lemmings' spans unless OTEL_SERVICE_NAME
// or OTEL_RESOURCE_ATTRIBUTES say otherwise.
const ServiceName = "lemmings"

// How long the end of a run waits for its last spans to leave, and how long
// the exporter keeps retrying one batch: a backend that is down costs a run
// seconds, never its result.
const (
	flushTimeout  = 5 * time.Second
	retryDuration = 10 * time.Second
)

// RunInfo names the run a trace is for.
type RunInfo struct {
	RunID string
	Remit string
	// Traceparent is the root span of a run started before (MetaTraceparent
	// of its last checkpoint): this process's spans join that trace under
	// it. Empty: the run starts a new trace.
	Traceparent string
}

// Run is one process's part of a run's trace. Its methods are safe for
// concurrent use; a nil *Run does nothing.
type Run struct {
	prompts     bool
	warn        io.Writer
	endpoint    string
	origin      string
	runID       string
	tp          *sdktrace.TracerProvider
	exp         *exporter
	client      *otlpClient
	tracer      trace.Tracer
	root        trace.SpanContext // the run's root span, kept across resumes
	traceparent string            // root as a W3C traceparent: every checkpoint records it
	span        trace.Span        // this process's run span
	spanCtx     context.Context

	mu        sync.Mutex
	nodes     map[nodeKey]trace.Span
	task      []attribute.KeyValue
	taskID    string
	taskTitle string
	redacted  map[string]string // short texts that recur (titles, gate commands), redacted
	ended     bool
}

type nodeKey struct {
	node string
	step int
}

// Start opens the exporter and starts this process's run span. It returns
// nil and no error when tracing is off, or when the run is offline and the
// endpoint is not on this machine (a warning then says so); an error only
// for an endpoint that is not a URL.
func Start(ctx context.Context, cfg Config, info RunInfo, warn io.Writer) (*Run, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if !cfg.Enabled || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	if warn == nil {
		warn = io.Discard
	}
	endpoint, origin, err := cfg.endpoint(getenv)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if cfg.Offline && !IsLoopback(endpoint) {
		fmt.Fprintf(warn, "warning: tracing off for this run: it is offline and the trace endpoint %s (from %s) is not on this machine; use a loopback endpoint (http://127.0.0.1:4318) or run online\n", endpoint, origin)
		return nil, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(k); p != "" {
			if strings.HasPrefix(p, "grpc") {
				fmt.Fprintf(warn, "warning: %s=%s: lemmings sends OTLP over HTTP only; point the endpoint at the receiver's HTTP port (usually 4318)\n", k, p)
			}
			break
		}
	}
	client, err := newOTLPClient(endpoint, getenv)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	otlp := otlptrace.NewUnstarted(client)
	res, err := resource.New(ctx, resource.WithAttributes(str("service.name", ServiceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		res = resource.Empty() // a malformed OTEL_RESOURCE_ATTRIBUTES loses the extra attributes only
	}
	exp := &exporter{next: otlp}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	r := &Run{prompts: cfg.Prompts, warn: warn, endpoint: endpoint, origin: origin, runID: info.RunID,
		tp: tp, exp: exp, client: client, tracer: tp.Tracer("github.com/lemmings-dev/lemmings/tracing"), nodes: map[nodeKey]trace.Span{},
		redacted: map[string]string{}}
	r.startRunSpan(ctx, info)
	return r, nil
}

// startRunSpan starts the process's run span: given the root of an earlier
// part of the run, a child of it in the run's trace; otherwise the run's
// root, under the caller's span if ctx carries one (an embedding program's
// request), else the root of a new trace.
func (r *Run) startRunSpan(ctx context.Context, info RunInfo) {
	parent := context.WithoutCancel(ctx)
	name := "lemmings run"
	attrs := []attribute.KeyValue{str(AttrRunID, info.RunID)}
	if info.Traceparent != "" {
		if sc := ParseTraceparent(info.Traceparent); sc.IsValid() {
			parent = trace.ContextWithRemoteSpanContext(parent, sc)
			name = "lemmings resume"
			r.root = sc
			attrs = append(attrs, attribute.Bool(AttrResumed, true))
		} else {
			fmt.Fprintf(r.warn, "warning: the run's recorded trace context %q is not a W3C traceparent: this part of the run starts a new trace\n", info.Traceparent)
		}
	}
	if info.Remit != "" {
		attrs = append(attrs, str(AttrRemit, clip(llm.Redact(info.Remit), maxTextAttr)))
	}
	r.spanCtx, r.span = r.tracer.Start(parent, name, trace.WithAttributes(attrs...))
	if !r.root.IsValid() {
		r.root = r.span.SpanContext()
	}
	r.traceparent = FormatTraceparent(r.root)
}

// Traceparent is the W3C traceparent of the run's root span: what
// MetaTraceparent keeps.
func (r *Run) Traceparent() string {
	if r == nil {
		return ""
	}
	return r.traceparent
}

// TraceID is the run's trace id in hex, as backends show it.
func (r *Run) TraceID() string {
	if r == nil {
		return ""
	}
	return r.root.TraceID().String()
}

// Endpoint is where the spans go.
func (r *Run) Endpoint() string {
	if r == nil {
		return ""
	}
	return r.endpoint
}

type runKey struct{}

// Attach returns a context that carries the run span and observes the model
// calls, gates and commits made under it.
func (r *Run) Attach(ctx context.Context) context.Context {
	if r == nil {
		return ctx
	}
	ctx = trace.ContextWithSpan(ctx, r.span)
	ctx = llm.WithCallObserver(ctx, r)
	ctx = workspace.WithObserver(ctx, r)
	return context.WithValue(ctx, runKey{}, r)
}

// FromContext returns the Run a context was attached to, or nil.
func FromContext(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// SetTask names the task the next steps work on (nil attributes when none):
// node, model, gate and commit spans started from now on carry it.
func (r *Run) SetTask(id, title string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == r.taskID && title == r.taskTitle {
		return // called after every step: redact a title once
	}
	r.taskID, r.taskTitle, r.task = id, title, nil
	if id != "" {
		r.task = []attribute.KeyValue{str(AttrTaskID, id), str(AttrTaskTitle, r.redactShort(title))}
	}
}

// Close ends the run span if the run did not, and waits (a few seconds at
// most) for the spans to leave. Spans that could not be delivered are
// reported as a warning and returned as the error; they never fail a run.
func (r *Run) Close(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if !r.ended {
		r.ended = true
		r.endOpenNodes(time.Now(), "the process stopped before the step ended")
		r.span.SetStatus(codes.Error, "the run stopped before it started")
		r.span.End()
	}
	r.mu.Unlock()
	if ctx.Err() != nil {
		ctx = context.WithoutCancel(ctx) // Ctrl-C stopped the run, not the flush of its trace
	}
	sctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	shut := r.tp.Shutdown(sctx)
	if errors.Is(shut, context.DeadlineExceeded) {
		// The flush ran out of time while the export retried: say what it
		// was up against (a collector that is down), not the deadline.
		if last := r.client.failure(); last != nil {
			shut = last
		}
		if r.exp.err() != nil {
			shut = nil // the exporter's error says it
		}
	}
	err := errors.Join(shut, r.exp.err())
	if err != nil {
		fmt.Fprintf(r.warn, "warning: the run's trace did not all reach %s (from %s): %v\n", r.endpoint, r.origin, err)
	}
	return err
}

// redactShort redacts a short text that recurs (a task title, a gate's
// command, a commit subject) once, and clips it. Called with mu held.
func (r *Run) redactShort(s string) string {
	if out, ok := r.redacted[s]; ok {
		return out
	}
	out := clip(llm.Redact(s), maxTextAttr)
	if len(r.redacted) >= 256 {
		clear(r.redacted) // a run with that many distinct texts starts over
	}
	r.redacted[s] = out
	return out
}

// ParseTraceparent reads a W3C traceparent; the span context is invalid when
// the text is not one.
func ParseTraceparent(s string) trace.SpanContext {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": strings.TrimSpace(s)})
	return trace.SpanContextFromContext(ctx)
}

// FormatTraceparent writes sc as a W3C traceparent ("" when invalid).
func FormatTraceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithRemoteSpanContext(context.Background(), sc), c)
	return c["traceparent"]
}

var _ graph.Sink = (*Run)(nil)
