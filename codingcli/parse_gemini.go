package codingcli

import (
	"encoding/json"
	"strings"
)

// Gemini CLI's `-p … --output-format stream-json` prints one event per line
// (packages/core/src/output/types.ts, JsonStreamEventType): init, message
// (the user's prompt, then the assistant's text in deltas), tool_use,
// tool_result, error (severity warning or error) and a closing result with
// status and stats (tokens summed over the models the run used).
type geminiLine struct {
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolName   string          `json:"tool_name"`
	Parameters json.RawMessage `json:"parameters"`
	Severity   string          `json:"severity"`
	Message    string          `json:"message"`
	Status     string          `json:"status"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"stats"`
}

func newGeminiParser() parser {
	// The assistant's text arrives in deltas: it is one message until a tool
	// call or the result closes it.
	var text strings.Builder
	lastError := ""
	flush := func() []Event {
		if strings.TrimSpace(text.String()) == "" {
			text.Reset()
			return nil
		}
		ev := Event{Kind: EventMessage, Text: text.String()}
		text.Reset()
		return []Event{ev}
	}
	return func(line []byte) ([]Event, bool) {
		var l geminiLine
		if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
			return nil, false
		}
		switch l.Type {
		case "message":
			if l.Role == "assistant" && text.Len() < maxText {
				text.WriteString(l.Content)
			}
		case "tool_use":
			return append(flush(), Event{Kind: EventToolCall, Tool: l.ToolName, Text: compactJSON(l.Parameters)}), true
		case "error":
			if l.Severity == "error" {
				lastError = l.Message
				return []Event{{Kind: EventError, Text: l.Message}}, true
			}
			return []Event{{Kind: EventWarning, Text: l.Message}}, true
		case "result":
			evs := flush()
			res := Event{Kind: EventResult}
			if len(evs) > 0 {
				res.Text = evs[0].Text
			}
			if l.Stats != nil {
				res.Usage = Usage{InputTokens: l.Stats.InputTokens, OutputTokens: l.Stats.OutputTokens}
			}
			if l.Status == "error" {
				msg := lastError
				if l.Error != nil && l.Error.Message != "" {
					msg = l.Error.Message
				}
				if msg == "" {
					msg = "gemini reported an error"
				}
				if msg != lastError {
					evs = append(evs, Event{Kind: EventError, Text: msg})
				}
			}
			return append(evs, res), true
		}
		return nil, true
	}
}
