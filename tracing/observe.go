package tracing

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

// parent is the context a span of work done under ctx starts from: the span
// of the node ctx belongs to while it is open, else the run span (a
// supervisor job in the background, the report after the run).
func (r *Run) parent(ctx context.Context) (context.Context, []attribute.KeyValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	base := append([]attribute.KeyValue{attribute.String(AttrRunID, r.runID)}, r.task...)
	if node, step, ok := graph.NodeOf(ctx); ok {
		if span, open := r.nodes[nodeKey{node, step}]; open {
			return trace.ContextWithSpan(r.spanCtx, span), base
		}
	}
	return r.spanCtx, base
}

// ObserveCall records one model call as a GenAI inference span ("chat
// <model>", kind client). Prompts and replies are recorded, redacted, only
// when the run logs prompts. It implements llm.CallObserver.
func (r *Run) ObserveCall(ctx context.Context, c llm.CallRecord) {
	if r == nil {
		return
	}
	pctx, attrs := r.parent(ctx)
	attrs = append(attrs,
		attribute.String(AttrGenAIOperation, "chat"),
		attribute.String(AttrGenAIProvider, c.Provider),
		attribute.String(AttrGenAIRequestModel, c.Model),
		attribute.Bool(AttrGenAIStream, c.Stream),
		attribute.String(AttrRole, c.Role),
		attribute.String(AttrLabel, c.Label),
	)
	if host, port := hostPort(c.BaseURL); host != "" {
		attrs = append(attrs, attribute.String(AttrServerAddress, host))
		if port > 0 {
			attrs = append(attrs, attribute.Int(AttrServerPort, port))
		}
	}
	if c.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int(AttrGenAIMaxTokens, c.MaxTokens))
	}
	if c.Temperature != nil {
		attrs = append(attrs, attribute.Float64(AttrGenAITemperature, *c.Temperature))
	}
	if len(c.Request.Schema) > 0 {
		attrs = append(attrs, attribute.String(AttrGenAIOutputType, "json"))
	}
	resp := c.Response
	if resp.Model != "" {
		attrs = append(attrs, attribute.String(AttrGenAIResponseModel, resp.Model))
	}
	if c.Err == nil || resp.Usage.PromptTokens+resp.Usage.CompletionTokens > 0 {
		attrs = append(attrs, attribute.Int(AttrGenAIInputTokens, resp.Usage.PromptTokens),
			attribute.Int(AttrGenAIOutputTokens, resp.Usage.CompletionTokens))
	}
	finish := resp.DoneReason
	if c.Err != nil {
		finish = "error"
	}
	if finish != "" {
		attrs = append(attrs, attribute.StringSlice(AttrGenAIFinishReasons, []string{finish}))
	}
	if resp.Attempts > 1 {
		attrs = append(attrs, attribute.Int(AttrCalls, resp.Attempts))
	}
	if resp.NumCtx > 0 {
		attrs = append(attrs, attribute.Int(AttrNumCtx, resp.NumCtx))
	}
	if resp.Usage.CostUSD > 0 {
		attrs = append(attrs, attribute.Float64(AttrCostUSD, resp.Usage.CostUSD))
	}
	if r.prompts {
		attrs = append(attrs, promptAttrs(c)...)
	}
	_, span := r.tracer.Start(pctx, "chat "+c.Model, trace.WithTimestamp(c.Start),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if c.Err != nil {
		kind := "_OTHER"
		var le *llm.Error
		if errors.As(c.Err, &le) && le.Kind != "" {
			kind = string(le.Kind)
		}
		span.SetAttributes(attribute.String(AttrErrorType, kind))
		span.SetStatus(codes.Error, clip(llm.Redact(c.Err.Error()), maxTextAttr))
	}
	span.End(trace.WithTimestamp(c.End))
}

// ObserveGate records one gate run ("gate <name>"); a gate that did not pass
// is an error span. It implements workspace.Observer.
func (r *Run) ObserveGate(ctx context.Context, g workspace.GateRecord) {
	if r == nil {
		return
	}
	res := g.Result
	pctx, attrs := r.parent(ctx)
	attrs = append(attrs, attribute.String(AttrGate, res.Name), attribute.String(AttrCommand, clip(llm.Redact(res.Command), maxTextAttr)),
		attribute.Bool(AttrPassed, res.Passed), attribute.Int(AttrExitCode, res.ExitCode))
	if res.TimedOut {
		attrs = append(attrs, attribute.Bool(AttrTimedOut, true))
	}
	_, span := r.tracer.Start(pctx, "gate "+res.Name, trace.WithTimestamp(g.Start), trace.WithAttributes(attrs...))
	if !res.Passed {
		how := "exit code " + strconv.Itoa(res.ExitCode)
		switch {
		case res.TimedOut:
			how = "timed out"
		case res.Canceled:
			how = "cancelled"
		}
		span.SetStatus(codes.Error, how)
	}
	span.End(trace.WithTimestamp(g.Start.Add(res.Duration)))
}

// ObserveCommit records one commit ("git commit") with the new revision; a
// commit with nothing to commit is recorded as such, not as an error. It
// implements workspace.Observer.
func (r *Run) ObserveCommit(ctx context.Context, c workspace.CommitRecord) {
	if r == nil {
		return
	}
	pctx, attrs := r.parent(ctx)
	subject, _, _ := strings.Cut(c.Message, "\n")
	attrs = append(attrs, attribute.String(AttrVCSRefName, c.Branch), attribute.String(AttrMessage, clip(llm.Redact(subject), maxTextAttr)))
	if c.SHA != "" {
		attrs = append(attrs, attribute.String(AttrVCSRevision, c.SHA))
	}
	_, span := r.tracer.Start(pctx, "git commit", trace.WithTimestamp(c.Start), trace.WithAttributes(attrs...))
	switch {
	case errors.Is(c.Err, workspace.ErrNothingToCommit):
		span.SetAttributes(attribute.Bool("lemmings.commit.empty", true))
	case c.Err != nil:
		span.SetStatus(codes.Error, clip(llm.Redact(c.Err.Error()), maxTextAttr))
	}
	span.End(trace.WithTimestamp(c.End))
}

// hostPort splits a server URL for server.address and server.port.
func hostPort(raw string) (string, int) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		switch u.Scheme {
		case "https":
			port = 443
		case "http":
			port = 80
		}
	}
	return u.Hostname(), port
}
