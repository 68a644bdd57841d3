package llm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The JSON-action fallback for models without native tool calling: the tools
// are described in the system prompt, and the model's reply is searched for
// {"tool": name, "arguments": {…}} (or <tool_call>…</tool_call>, or fenced
// JSON), which becomes Response.ToolCalls.

const toolPromptHead = `You can use the tools listed below. To use one, reply with only this JSON object and no other text:
{"tool": "<tool name>", "arguments": {<the tool's arguments>}}
To answer without using a tool, reply normally.

Tools:`

// withToolPrompt rewrites a request for a model without native tools: tool
// definitions go into the system message, earlier tool calls become JSON
// actions in assistant messages, and tool results become user messages.
func withToolPrompt(req Request) Request {
	var b strings.Builder
	b.WriteString(toolPromptHead)
	for _, t := range req.Tools {
		fmt.Fprintf(&b, "\n- %s: %s", t.Name, strings.TrimSpace(t.Description))
		if len(t.Parameters) > 0 {
			fmt.Fprintf(&b, "\n  arguments (JSON schema): %s", compactJSON(t.Parameters))
		}
	}
	toolText := b.String()
	names := map[string]string{}
	msgs := make([]Message, 0, len(req.Messages)+1)
	if len(req.Messages) == 0 || req.Messages[0].Role != "system" {
		msgs = append(msgs, Message{Role: "system", Content: toolText})
	}
	for i, m := range req.Messages {
		switch {
		case i == 0 && m.Role == "system":
			m.Content = strings.TrimRight(m.Content, "\n") + "\n\n" + toolText
		case len(m.ToolCalls) > 0:
			var parts []string
			if strings.TrimSpace(m.Content) != "" {
				parts = append(parts, m.Content)
			}
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
				args := tc.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				action, _ := json.Marshal(struct {
					Tool      string          `json:"tool"`
					Arguments json.RawMessage `json:"arguments"`
				}{tc.Name, compactJSON(args)})
				parts = append(parts, string(action))
			}
			m = Message{Role: m.Role, Content: strings.Join(parts, "\n")}
		case m.Role == "tool":
			name := names[m.ToolCallID]
			if name == "" {
				name = "the tool"
			}
			m = Message{Role: "user", Content: fmt.Sprintf("Result of %s:\n%s", name, m.Content)}
		}
		msgs = append(msgs, m)
	}
	req.Messages = msgs
	req.Tools = nil
	return req
}

var toolTagRE = regexp.MustCompile(`(?s)<(tool_call|function_call|tool)>(.*?)(?:</(?:tool_call|function_call|tool)>|$)`)

// ParseToolCalls finds tool calls a model wrote as text: <tool_call>{…}
// </tool_call> blocks, or a JSON object (bare, fenced, or in prose) such as
// {"tool": "read_file", "arguments": {"path": "x"}}. Names may also be given
// as "name" or "function", arguments as "arguments", "parameters", "args",
// "input", a JSON string, or as the object's other keys. Only calls of the
// given tools count, so ordinary JSON answers are not mistaken for calls.
func ParseToolCalls(content string, tools []Tool) []ToolCall {
	if len(tools) == 0 || strings.TrimSpace(content) == "" {
		return nil
	}
	known := map[string]bool{}
	for _, t := range tools {
		known[t.Name] = true
	}
	var blobs []string
	for _, m := range toolTagRE.FindAllStringSubmatch(content, -1) {
		blobs = append(blobs, m[2])
	}
	if len(blobs) == 0 {
		blobs = []string{content}
	}
	var out []ToolCall
	for _, blob := range blobs {
		b, err := ExtractJSON(blob)
		if err != nil {
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			items = []json.RawMessage{b}
		}
		for _, it := range items {
			if tc, ok := actionCall(it, known); ok {
				tc.ID = fmt.Sprintf("call_text_%d", len(out)+1)
				out = append(out, tc)
			}
		}
	}
	return out
}

// actionCall reads one JSON action object.
func actionCall(raw json.RawMessage, known map[string]bool) (ToolCall, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return ToolCall{}, false
	}
	name, nameKey := "", ""
	for _, k := range []string{"tool", "name", "tool_name", "function", "action"} {
		v, ok := obj[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil && known[s] {
			name, nameKey = s, k
			break
		}
		// OpenAI's shape inside text: {"function": {"name": …, "arguments": …}}.
		var fn map[string]json.RawMessage
		if json.Unmarshal(v, &fn) == nil {
			if tc, ok := actionCall(v, known); ok {
				return tc, true
			}
		}
	}
	if name == "" {
		return ToolCall{}, false
	}
	args := json.RawMessage(nil)
	for _, k := range []string{"arguments", "parameters", "args", "input"} {
		if v, ok := obj[k]; ok {
			args = v
			break
		}
	}
	if args == nil {
		// Flattened: {"tool": "read_file", "path": "x"}.
		rest := map[string]json.RawMessage{}
		for k, v := range obj {
			if k != nameKey {
				rest[k] = v
			}
		}
		args, _ = json.Marshal(rest)
	}
	var s string
	if json.Unmarshal(args, &s) == nil {
		// Arguments as a JSON string holding JSON.
		args = jsonArgs(s)
	}
	if strings.TrimSpace(string(args)) == "null" {
		args = json.RawMessage("{}")
	}
	return ToolCall{Name: name, Arguments: compactJSON(args)}, true
}
