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
// (a local model sees the prompt unredacted; a trace backend never does).
func promptAttrs(c llm.CallRecord) []attribute.KeyValue {
	in := make([]genaiMessage, 0, len(c.Request.Messages))
	for _, m := range c.Request.Messages {
		in = append(in, messageOf(m))
	}
	attrs := []attribute.KeyValue{attribute.String(AttrGenAIInputMessages, jsonText(in))}
	if c.Err == nil {
		out := messageOf(llm.Message{Role: "assistant", Content: c.Response.Content, ToolCalls: c.Response.ToolCalls})
		out.FinishReason = c.Response.DoneReason
		attrs = append(attrs, attribute.String(AttrGenAIOutputMessages, jsonText([]genaiMessage{out})))
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
		attrs = append(attrs, attribute.String(AttrGenAIToolDefinitions, jsonText(defs)))
	}
	return attrs
}

func messageOf(m llm.Message) genaiMessage {
	g := genaiMessage{Role: m.Role}
	switch {
	case m.Role == "tool":
		g.Parts = append(g.Parts, genaiPart{Type: "tool_call_response", ID: m.ToolCallID, Response: llm.Redact(m.Content)})
	case m.Content != "":
		g.Parts = append(g.Parts, genaiPart{Type: "text", Content: llm.Redact(m.Content)})
	}
	for _, tc := range m.ToolCalls {
		args := tc.Arguments
		if len(args) > 0 {
			args = llm.RedactJSON(args)
		}
		g.Parts = append(g.Parts, genaiPart{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: args})
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
	return string(b)
}
