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
// supervisor job in the background, the report after the run); and the
// attributes every such span has, with short texts given redacted.
func (r *Run) parent(ctx context.Context, short ...attribute.KeyValue) (context.Context, []attribute.KeyValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	base := append([]attribute.KeyValue{str(AttrRunID, r.runID)}, r.task...)
	for _, kv := range short {
		base = append(base, str(string(kv.Key), r.redactShort(kv.Value.AsString())))
	}
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
		str(AttrGenAIOperation, "chat"),
		str(AttrGenAIProvider, c.Provider),
		str(AttrGenAIRequestModel, c.Model),
		attribute.Bool(AttrGenAIStream, c.Stream),
		str(AttrRole, c.Role),
		str(AttrLabel, c.Label),
	)
	if host, port := hostPort(c.BaseURL); host != "" {
		attrs = append(attrs, str(AttrServerAddress, host))
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
		attrs = append(attrs, str(AttrGenAIOutputType, "json"))
	}
	resp := c.Response
	if resp.Model != "" {
		attrs = append(attrs, str(AttrGenAIResponseModel, resp.Model))
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
		attrs = append(attrs, attribute.StringSlice(AttrGenAIFinishReasons, []string{valid(finish)}))
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
	_, span := r.tracer.Start(pctx, valid("chat "+c.Model), trace.WithTimestamp(c.Start),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if c.Err != nil {
		kind := "_OTHER"
		var le *llm.Error
		if errors.As(c.Err, &le) && le.Kind != "" {
			kind = string(le.Kind)
		}
		span.SetAttributes(str(AttrErrorType, kind))
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
	pctx, attrs := r.parent(ctx, str(AttrCommand, res.Command))
	attrs = append(attrs, str(AttrGate, res.Name), attribute.Bool(AttrPassed, res.Passed), attribute.Int(AttrExitCode, res.ExitCode))
	if res.TimedOut {
		attrs = append(attrs, attribute.Bool(AttrTimedOut, true))
	}
	_, span := r.tracer.Start(pctx, valid("gate "+res.Name), trace.WithTimestamp(g.Start), trace.WithAttributes(attrs...))
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
	subject, _, _ := strings.Cut(c.Message, "\n")
	pctx, attrs := r.parent(ctx, str(AttrMessage, subject))
	attrs = append(attrs, str(AttrVCSRefName, c.Branch))
	if c.SHA != "" {
		attrs = append(attrs, str(AttrVCSRevision, c.SHA))
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
