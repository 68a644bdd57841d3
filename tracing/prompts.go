package tracing

import (
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"

	"github.com/lemmings-dev/lemmings/llm"
)

// The message shapes of gen_ai.input.messages and gen_ai.output.messages:
// a role and its parts.
type genaiMessage struct {
	Role         string      `json:"role"`
	Parts        []genaiPart `json:"parts"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

type genaiPart struct {
	Type      string          `json:"type"` // text | tool_call | tool_call_response
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

// promptAttrs records what was sent and what came back, every text redacted
// (a local model sees the prompt unredacted; a trace backend never does):
// by the router when it has done so for its prompt log, else here.
func promptAttrs(c llm.CallRecord) []attribute.KeyValue {
	red := c.Redacted
	if red == nil {
		red = &llm.RedactedCall{Messages: make([]llm.Message, len(c.Request.Messages)), Reply: llm.Redact(c.Response.Content)}
		for i, m := range c.Request.Messages {
			red.Messages[i] = redactMessage(m)
		}
		red.ToolCalls = redactMessage(llm.Message{ToolCalls: c.Response.ToolCalls}).ToolCalls
	}
	in := make([]genaiMessage, 0, len(red.Messages))
	for _, m := range red.Messages {
		in = append(in, messageOf(m))
	}
	attrs := []attribute.KeyValue{str(AttrGenAIInputMessages, jsonText(in))}
	if c.Err == nil {
		out := messageOf(llm.Message{Role: "assistant", Content: red.Reply, ToolCalls: red.ToolCalls})
		out.FinishReason = c.Response.DoneReason
		attrs = append(attrs, str(AttrGenAIOutputMessages, jsonText([]genaiMessage{out})))
	}
	if len(c.Request.Tools) > 0 {
		type def struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
		}
		defs := make([]def, 0, len(c.Request.Tools))
		for _, t := range c.Request.Tools {
			defs = append(defs, def{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
		attrs = append(attrs, str(AttrGenAIToolDefinitions, jsonText(defs)))
	}
	return attrs
}

// redactMessage removes secrets from a message's text and tool calls.
func redactMessage(m llm.Message) llm.Message {
	m.Content = llm.Redact(m.Content)
	if len(m.ToolCalls) > 0 {
		calls := make([]llm.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			if len(tc.Arguments) > 0 {
				tc.Arguments = llm.RedactJSON(tc.Arguments)
			}
			calls[i] = tc
		}
		m.ToolCalls = calls
	}
	return m
}

// messageOf shapes a redacted message as GenAI parts.
func messageOf(m llm.Message) genaiMessage {
	g := genaiMessage{Role: m.Role}
	switch {
	case m.Role == "tool":
		g.Parts = append(g.Parts, genaiPart{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
	case m.Content != "":
		g.Parts = append(g.Parts, genaiPart{Type: "text", Content: m.Content})
	}
	for _, tc := range m.ToolCalls {
		g.Parts = append(g.Parts, genaiPart{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	if g.Parts == nil {
		g.Parts = []genaiPart{}
	}
	return g
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return valid(string(b)) // a tool call's raw arguments are copied as they are
}
