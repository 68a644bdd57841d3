package llm

import (
	"encoding/json"

	"github.com/lemmings-dev/lemmings/internal/redact"
)

// Redact is the process's redaction (internal/redact): secrets in text are
// replaced by [REDACTED:<what>]. Text without a secret comes back unchanged.
func Redact(text string) string { return redact.String(text) }

// RedactJSON returns raw with secrets removed from every string in it (and
// short secrets under secret-like keys), still the same valid JSON. Raw that
// is not JSON (a model's cut-off tool arguments) comes back as a JSON string
// of its redacted text, so a document it is embedded in still encodes.
func RedactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if !json.Valid(raw) {
		b, _ := json.Marshal(redact.String(string(raw)))
		return b
	}
	return redact.Default().JSON(raw)
}

// redactMessages returns msgs with secrets removed from contents and tool
// call arguments (string values of the JSON, so it stays valid JSON).
func redactMessages(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		m.Content = Redact(m.Content)
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				tc.Arguments = RedactJSON(tc.Arguments)
				calls[j] = tc
			}
			m.ToolCalls = calls
		}
		out[i] = m
	}
	return out
}
