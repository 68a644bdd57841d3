package codingcli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Claude Code's `-p --output-format stream-json --verbose` and Qwen Code's
// `--output-format stream-json` print the same kind of NDJSON (Qwen Code
// copied the shape): a system/init line, one assistant line per message (per
// content block in Claude Code, several lines then share a message id and
// usage), user lines carrying tool results, and a closing result line with
// the run's totals. Lines of other types (stream_event, rate limits, hooks)
// are read and ignored.
type claudeLine struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message *struct {
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
		Usage   *claudeUsage    `json:"usage"`
	} `json:"message"`
	// result lines
	IsError      bool         `json:"is_error"`
	Result       *string      `json:"result"`
	TotalCostUSD float64      `json:"total_cost_usd"`
	Usage        *claudeUsage `json:"usage"`
	// Qwen Code's error result: {"message": …}; Claude Code puts a bare
	// string ("authentication_failed") on some lines.
	Error  json.RawMessage `json:"error"`
	Errors []string        `json:"errors"`
	// system api_retry lines (Claude Code)
	Attempt     int `json:"attempt"`
	MaxRetries  int `json:"max_retries"`
	ErrorStatus int `json:"error_status"`
}

type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

type claudeBlock struct {
	Type string          `json:"type"`
	Text string          `json:"text"`
	Name string          `json:"name"`
	ID   string          `json:"id"`
	In   json.RawMessage `json:"input"`
}

// usage converts the wire counts. Anthropic's input_tokens leaves out the
// cached tokens (they are billed apart), so Claude's input is the sum of the
// three; Qwen Code reports OpenAI's prompt_tokens, which already includes the
// cached part.
func (u *claudeUsage) usage(cacheSeparate bool) Usage {
	if u == nil {
		return Usage{}
	}
	in := u.InputTokens
	if cacheSeparate {
		in += u.CacheCreationInputTokens + u.CacheReadInputTokens
	}
	return Usage{InputTokens: in, OutputTokens: u.OutputTokens}
}

func newClaudeParser() parser { return newClaudeLikeParser(true) }
func newQwenParser() parser   { return newClaudeLikeParser(false) }

func newClaudeLikeParser(cacheSeparate bool) parser {
	counted := map[string]bool{} // message ids whose usage is counted
	return func(line []byte) ([]Event, bool) {
		var l claudeLine
		if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
			return nil, false
		}
		switch l.Type {
		case "system":
			if l.Subtype == "api_retry" {
				return []Event{{Kind: EventWarning, Text: fmt.Sprintf("API retry %d/%d after status %d", l.Attempt, l.MaxRetries, l.ErrorStatus)}}, true
			}
		case "assistant":
			if l.Message == nil {
				return nil, false
			}
			var blocks []claudeBlock
			if err := json.Unmarshal(l.Message.Content, &blocks); err != nil {
				return nil, false
			}
			var evs []Event
			var text []string
			for _, b := range blocks {
				switch b.Type {
				case "text":
					if strings.TrimSpace(b.Text) != "" {
						text = append(text, b.Text)
					}
				case "tool_use", "server_tool_use":
					evs = append(evs, Event{Kind: EventToolCall, Tool: b.Name, Text: compactJSON(b.In)})
				}
			}
			if len(text) > 0 {
				evs = append([]Event{{Kind: EventMessage, Text: strings.Join(text, "\n")}}, evs...)
			}
			u := l.Message.Usage.usage(cacheSeparate)
			if u != (Usage{}) && (l.Message.ID == "" || !counted[l.Message.ID]) {
				counted[l.Message.ID] = true
				evs = append(evs, Event{Kind: EventUsage, Usage: u})
			}
			return evs, true
		case "result":
			u := l.Usage.usage(cacheSeparate)
			u.CostUSD = l.TotalCostUSD
			res := Event{Kind: EventResult, Usage: u}
			if l.Result != nil {
				res.Text = *l.Result
			}
			if !l.IsError {
				return []Event{res}, true
			}
			msg := ""
			switch {
			case errorMessage(l.Error) != "":
				msg = errorMessage(l.Error)
			case len(l.Errors) > 0:
				msg = strings.Join(l.Errors, "; ")
			case res.Text != "":
				msg = res.Text
			default:
				msg = l.Subtype
			}
			if strings.HasPrefix(l.Subtype, "error") && !strings.Contains(msg, l.Subtype) {
				msg = l.Subtype + ": " + msg
			}
			return []Event{{Kind: EventError, Text: msg}, res}, true
		}
		return nil, true
	}
}

// compactJSON renders a tool's arguments on one line, cut to a length a
// progress line or an event log can hold.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return ""
	}
	return truncate(b.String(), 400)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// errorMessage reads {"message": …} or a bare string.
func errorMessage(raw json.RawMessage) string {
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}
