package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Anthropic's Messages API (POST /v1/messages), what Claude Code speaks to
// ANTHROPIC_BASE_URL. Calls decode into the same Call (API Anthropic) and
// are answered from the same Steps: Content becomes a text block, ToolCalls
// tool_use blocks. Streaming sends the typed SSE events (message_start …
// message_stop) with input_json_delta pieces for tool input.

// Anthropic is the Messages API.
const Anthropic API = "anthropic"

type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Stream      bool     `json:"stream"`
	Temperature *float64 `json:"temperature"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// anthropicMessages turns the request into chat messages: text blocks join
// into the content, tool_use blocks become tool calls, and each tool_result
// block a tool message of its own.
func anthropicMessages(req anthropicRequest) []Message {
	var msgs []Message
	if sys := openaiText(req.System); sys != "" {
		msgs = append(msgs, Message{Role: "system", Content: sys})
	}
	for _, m := range req.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			msgs = append(msgs, Message{Role: m.Role, Content: s})
			continue
		}
		var blocks []anthropicBlock
		_ = json.Unmarshal(m.Content, &blocks)
		msg := Message{Role: m.Role}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Content += b.Text
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
			case "tool_result":
				msgs = append(msgs, Message{Role: "tool", ToolCallID: b.ToolUseID, Content: openaiText(b.Content)})
			}
		}
		if msg.Content != "" || len(msg.ToolCalls) > 0 {
			msgs = append(msgs, msg)
		}
	}
	return msgs
}

func anthropicError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": msg}})
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	var req anthropicRequest
	c, ok := decodeRequest(w, r, Anthropic, &req, anthropicError)
	if !ok {
		return
	}
	c.Model, c.Stream, c.Temperature, c.MaxTokens = req.Model, req.Stream, req.Temperature, req.MaxTokens
	c.Messages = anthropicMessages(req)
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	rep, in, out, ok := s.answer(w, r, &c, anthropicError)
	if !ok {
		return
	}
	stop := rep.FinishReason
	if stop == "" {
		stop = "end_turn"
		if len(rep.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	id := fmt.Sprintf("msg_llmtest%06d", c.Seq)
	var content []map[string]any
	if rep.Content != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Content})
	}
	for i, tc := range rep.ToolCalls {
		tid := tc.ID
		if tid == "" {
			tid = fmt.Sprintf("toolu_llmtest_%d_%d", c.Seq, i+1)
		}
		input := tc.Arguments
		if len(input) == 0 {
			input = json.RawMessage(`{}`)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": tid, "name": tc.Name, "input": input})
	}
	if content == nil {
		content = []map[string]any{}
	}
	msg := map[string]any{"id": id, "type": "message", "role": "assistant", "model": c.Model, "content": content,
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
	if !c.Stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	s.anthropicStream(w, r, rep, msg, in, out, stop)
}

func (s *Server) anthropicStream(w http.ResponseWriter, r *http.Request, rep Reply, msg map[string]any, in, out int, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(typ string, ev map[string]any) {
		ev["type"] = typ
		b, _ := json.Marshal(ev)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		flush(w)
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	send("message_start", map[string]any{"message": start})
	sent := 0
	for i, block := range msg["content"].([]map[string]any) {
		switch block["type"] {
		case "text":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			var ok bool
			if sent, ok = streamChunks(w, r, rep, sent, func(part string) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": part}})
			}); !ok {
				return
			}
		case "tool_use":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			args := string(block["input"].(json.RawMessage))
			half := len(args) / 2
			for _, piece := range []string{args[:half], args[half:]} {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
			}
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	if rep.CutAfterChunks > 0 {
		abort(w)
	}
	if rep.MidStreamError != "" {
		send("error", map[string]any{"error": map[string]string{"type": "overloaded_error", "message": rep.MidStreamError}})
		return
	}
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": out}})
	if rep.NoDone {
		return
	}
	send("message_stop", map[string]any{})
}
