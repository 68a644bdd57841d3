package tracing

import (
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// Attribute names. The gen_ai.* ones follow the OpenTelemetry GenAI semantic
// conventions for inference spans (status Development; the names are those
// after v1.36, gen_ai.provider.name replacing gen_ai.system); lemmings.* are
// lemmings' own.
const (
	AttrGenAIOperation       = "gen_ai.operation.name"
	AttrGenAIProvider        = "gen_ai.provider.name"
	AttrGenAIRequestModel    = "gen_ai.request.model"
	AttrGenAIResponseModel   = "gen_ai.response.model"
	AttrGenAIMaxTokens       = "gen_ai.request.max_tokens"
	AttrGenAITemperature     = "gen_ai.request.temperature"
	AttrGenAIStream          = "gen_ai.request.stream"
	AttrGenAIOutputType      = "gen_ai.output.type"
	AttrGenAIInputTokens     = "gen_ai.usage.input_tokens"
	AttrGenAIOutputTokens    = "gen_ai.usage.output_tokens"
	AttrGenAIFinishReasons   = "gen_ai.response.finish_reasons"
	AttrGenAIInputMessages   = "gen_ai.input.messages"
	AttrGenAIOutputMessages  = "gen_ai.output.messages"
	AttrGenAIToolDefinitions = "gen_ai.tool.definitions"

	AttrServerAddress = "server.address"
	AttrServerPort    = "server.port"
	AttrErrorType     = "error.type"
	AttrExitCode      = "process.exit.code"
	AttrVCSRevision   = "vcs.ref.head.revision"
	AttrVCSRefName    = "vcs.ref.head.name"

	AttrRunID     = "lemmings.run.id"
	AttrRemit     = "lemmings.remit"
	AttrResumed   = "lemmings.resumed"
	AttrRunStatus = "lemmings.run.status"
	AttrReason    = "lemmings.run.reason"
	AttrTaskID    = "lemmings.task.id"
	AttrTaskTitle = "lemmings.task.title"
	AttrNode      = "lemmings.node"
	AttrStep      = "lemmings.step"
	AttrAttempt   = "lemmings.attempt"
	AttrChanged   = "lemmings.changed"
	AttrRole      = "lemmings.role"
	AttrLabel     = "lemmings.label"
	AttrCalls     = "lemmings.requests"
	AttrNumCtx    = "lemmings.num_ctx"
	AttrCostUSD   = "lemmings.cost_usd"
	AttrGate      = "lemmings.gate.name"
	AttrCommand   = "lemmings.gate.command"
	AttrPassed    = "lemmings.gate.passed"
	AttrTimedOut  = "lemmings.gate.timed_out"
	AttrMessage   = "lemmings.commit.message"
	AttrEventData = "lemmings.event.data"
)

// Longest texts kept on a span: titles and messages, and an event's data.
const (
	maxTextAttr  = 1000
	maxEventData = 2000
)

// valid makes s valid UTF-8: one invalid byte in any string of a span makes
// the OTLP exporter drop the whole batch the span is in.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// str is a string attribute made valid UTF-8.
func str(k, v string) attribute.KeyValue { return attribute.String(k, valid(v)) }

// clip shortens s to at most n bytes, at a rune boundary, marking the cut;
// the result is valid UTF-8.
func clip(s string, n int) string {
	s = valid(s)
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
