package tracing

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
)

// Custom events that are spans of their own (model calls, gates, commits)
// or too frequent to be worth an event (progress after every step).
var ownSpans = map[string]bool{"llm_call": true, "gate": true, "commit": true, "progress": true}

// Handle turns the graph's events into the run's node spans, and the run's
// other events into events on them. It implements graph.Sink.
func (r *Run) Handle(ev graph.Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	switch ev.Kind {
	case graph.EventNodeStart:
		attrs := append([]attribute.KeyValue{str(AttrRunID, r.runID), str(AttrNode, ev.Node),
			attribute.Int(AttrStep, ev.Step), attribute.Int(AttrAttempt, max(ev.Attempt, 1))}, r.task...)
		_, span := r.tracer.Start(r.spanCtx, valid(ev.Node), trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
		r.nodes[nodeKey{ev.Node, ev.Step}] = span
	case graph.EventNodeEnd:
		k := nodeKey{ev.Node, ev.Step}
		span, ok := r.nodes[k]
		if !ok {
			return // a parallel branch recorded before a crash: it did not run here
		}
		delete(r.nodes, k)
		if len(ev.Changed) > 0 {
			span.SetAttributes(attribute.StringSlice(AttrChanged, ev.Changed))
		}
		if ev.Error != "" {
			span.SetStatus(codes.Error, clip(llm.Redact(ev.Error), maxTextAttr))
		}
		span.End(trace.WithTimestamp(ev.Time))
	case graph.EventCustom:
		if ownSpans[ev.Name] {
			return
		}
		var attrs []attribute.KeyValue
		if len(ev.Data) > 0 {
			attrs = append(attrs, str(AttrEventData, clip(string(llm.RedactJSON(ev.Data)), maxEventData)))
		}
		if ev.Error != "" {
			attrs = append(attrs, str("error", clip(llm.Redact(ev.Error), maxTextAttr)))
		}
		r.spanOf(ev.Node, ev.Step).AddEvent(valid(ev.Name), trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	case graph.EventRetry, graph.EventInterrupt, graph.EventError:
		var attrs []attribute.KeyValue
		if ev.Reason != "" {
			attrs = append(attrs, str("reason", clip(llm.Redact(ev.Reason), maxTextAttr)))
		}
		if ev.Error != "" {
			attrs = append(attrs, str("error", clip(llm.Redact(ev.Error), maxTextAttr)))
		}
		if ev.Node != "" {
			attrs = append(attrs, str(AttrNode, ev.Node))
		}
		r.span.AddEvent(ev.Kind, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	case graph.EventRunEnd:
		r.ended = true
		r.endOpenNodes(ev.Time, "the run ended before the step did")
		r.span.SetAttributes(str(AttrRunStatus, string(ev.Status)))
		if ev.Reason != "" {
			r.span.SetAttributes(str(AttrReason, clip(llm.Redact(ev.Reason), maxTextAttr)))
		}
		switch {
		case ev.Status == graph.StatusFailed:
			r.span.SetStatus(codes.Error, clip(llm.Redact(ev.Error), maxTextAttr))
		case ev.Status == graph.StatusDone && ev.Error == "":
			r.span.SetStatus(codes.Ok, "")
		}
		r.span.End(trace.WithTimestamp(ev.Time))
	}
}

// spanOf is the open span of a node step, or the run span. Called with mu held.
func (r *Run) spanOf(node string, step int) trace.Span {
	if span, ok := r.nodes[nodeKey{node, step}]; ok {
		return span
	}
	return r.span
}

// endOpenNodes ends the node spans a stop cut short. Called with mu held.
func (r *Run) endOpenNodes(at time.Time, why string) {
	for k, span := range r.nodes {
		span.SetStatus(codes.Error, why)
		span.End(trace.WithTimestamp(at))
		delete(r.nodes, k)
	}
}
