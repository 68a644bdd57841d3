package codingcli

import (
	"encoding/json"
	"strings"
)

// Codex CLI's `codex exec --json` prints one thread event per line
// (codex-rs/exec/src/exec_events.rs): thread.started, turn.started,
// item.started / item.updated / item.completed around each item (agent
// message, reasoning, command execution, file change, MCP tool call, web
// search, todo list, error), turn.completed with the turn's usage, and
// turn.failed or a top-level error. Top-level errors before turn.failed are
// its retries ("Reconnecting... 1/5"); an item of type error is a warning
// it went on from.
type codexLine struct {
	Type    string     `json:"type"`
	Message string     `json:"message"`
	Item    *codexItem `json:"item"`
	Usage   *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type codexItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Text    string `json:"text"`
	Message string `json:"message"`
	Command string `json:"command"`
	Changes []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Query     string          `json:"query"`
}

func newCodexParser() parser {
	seen := map[string]bool{} // tool items already reported (started, then completed)
	return func(line []byte) ([]Event, bool) {
		var l codexLine
		if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
			return nil, false
		}
		switch l.Type {
		case "item.started", "item.updated", "item.completed":
			if l.Item == nil {
				return nil, false
			}
			it := l.Item
			switch it.Type {
			case "agent_message":
				if l.Type == "item.completed" && it.Text != "" {
					return []Event{{Kind: EventMessage, Text: it.Text}}, true
				}
			case "error":
				return []Event{{Kind: EventWarning, Text: it.Message}}, true
			case "command_execution", "file_change", "mcp_tool_call", "web_search":
				if it.ID != "" && seen[it.ID] {
					return nil, true
				}
				seen[it.ID] = true
				return []Event{codexToolCall(it)}, true
			}
			return nil, true
		case "turn.completed":
			if l.Usage == nil {
				return nil, true
			}
			return []Event{{Kind: EventUsage, Usage: Usage{InputTokens: l.Usage.InputTokens, OutputTokens: l.Usage.OutputTokens}}}, true
		case "turn.failed":
			msg := "turn failed"
			if l.Error != nil && l.Error.Message != "" {
				msg = l.Error.Message
			}
			return []Event{{Kind: EventError, Text: msg}}, true
		case "error":
			return []Event{{Kind: EventWarning, Text: l.Message}}, true
		}
		return nil, true
	}
}

// codexToolCall names a tool item the way the other CLIs name their tools.
func codexToolCall(it *codexItem) Event {
	ev := Event{Kind: EventToolCall, Tool: it.Type}
	switch it.Type {
	case "command_execution":
		ev.Tool, ev.Text = "shell", truncate(it.Command, 400)
	case "file_change":
		var parts []string
		for _, c := range it.Changes {
			parts = append(parts, c.Kind+" "+c.Path)
		}
		ev.Text = truncate(strings.Join(parts, ", "), 400)
	case "mcp_tool_call":
		ev.Tool, ev.Text = it.Server+"."+it.Tool, compactJSON(it.Arguments)
	case "web_search":
		ev.Text = truncate(it.Query, 400)
	}
	return ev
}
