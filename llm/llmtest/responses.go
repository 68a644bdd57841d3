package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// OpenAI's Responses API (POST /v1/responses), the only wire Codex CLI
// speaks to a custom provider (its `wire_api = "chat"` is gone). Calls are
// decoded into the same Call as chat completions (API OpenAI, Path
// /v1/responses) and answered from the same Steps: Content becomes an
// output_text message, ToolCalls function_call items. Streaming sends the
// typed SSE events (response.created … response.completed) clients read.

type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
	Stream          bool     `json:"stream"`
	MaxOutputTokens int      `json:"max_output_tokens"`
	Temperature     *float64 `json:"temperature"`
	Text            *struct {
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

type responsesInputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
}

// responsesMessages turns the input (a string or a list of items) into chat
// messages: message items by role, function_call items as assistant tool
// calls, function_call_output items as tool messages.
func responsesMessages(instructions string, input json.RawMessage) []Message {
	var msgs []Message
	if instructions != "" {
		msgs = append(msgs, Message{Role: "system", Content: instructions})
	}
	var s string
	if json.Unmarshal(input, &s) == nil {
		return append(msgs, Message{Role: "user", Content: s})
	}
	var items []responsesInputItem
	_ = json.Unmarshal(input, &items)
	for _, it := range items {
		switch it.Type {
		case "function_call":
			msgs = append(msgs, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(it.Arguments)}}})
		case "function_call_output", "custom_tool_call_output":
			msgs = append(msgs, Message{Role: "tool", ToolCallID: it.CallID, Content: openaiText(it.Output)})
		case "message", "":
			msgs = append(msgs, Message{Role: it.Role, Content: openaiText(it.Content)})
		}
	}
	return msgs
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var req responsesRequest
	c, ok := decodeRequest(w, r, OpenAI, &req, openaiError)
	if !ok {
		return
	}
	c.Model, c.Stream, c.Temperature, c.MaxTokens = req.Model, req.Stream, req.Temperature, req.MaxOutputTokens
	if req.Text != nil && req.Text.Format != nil {
		c.Format = nonNull(req.Text.Format.Schema)
	}
	c.Messages = responsesMessages(req.Instructions, req.Input)
	for _, t := range req.Tools {
		if t.Type == "function" {
			c.Tools = append(c.Tools, Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	rep, in, out, ok := s.answer(w, r, &c, openaiError)
	if !ok {
		return
	}
	id := fmt.Sprintf("resp_llmtest%06d", c.Seq)
	resp := map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(), "model": c.Model,
		"status": "completed", "output": responsesOutput(id, rep),
		"usage": map[string]any{"input_tokens": in, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": out, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": in + out}}
	if !c.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	s.responsesStream(w, r, rep, resp)
}

// responsesOutput is the reply as output items: the message, then the calls.
func responsesOutput(id string, rep Reply) []map[string]any {
	var items []map[string]any
	if rep.Content != "" {
		items = append(items, map[string]any{"id": id + "_msg", "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Content, "annotations": []any{}}}})
	}
	for i, tc := range rep.ToolCalls {
		callID := tc.ID
		if callID == "" {
			callID = fmt.Sprintf("call_llmtest_%d", i+1)
		}
		items = append(items, map[string]any{"id": fmt.Sprintf("%s_fc%d", id, i), "type": "function_call", "status": "completed",
			"call_id": callID, "name": tc.Name, "arguments": string(tc.Arguments)})
	}
	return items
}

func (s *Server) responsesStream(w http.ResponseWriter, r *http.Request, rep Reply, resp map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	seq := 0
	send := func(typ string, ev map[string]any) {
		ev["type"], ev["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(ev)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		flush(w)
	}
	started := map[string]any{}
	for k, v := range resp {
		started[k] = v
	}
	started["status"], started["output"] = "in_progress", []any{}
	delete(started, "usage")
	send("response.created", map[string]any{"response": started})
	send("response.in_progress", map[string]any{"response": started})
	sent := 0
	for i, item := range resp["output"].([]map[string]any) {
		pending := map[string]any{}
		for k, v := range item {
			pending[k] = v
		}
		pending["status"] = "in_progress"
		itemID := item["id"].(string)
		switch item["type"] {
		case "message":
			pending["content"] = []any{}
			send("response.output_item.added", map[string]any{"output_index": i, "item": pending})
			send("response.content_part.added", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			var ok bool
			if sent, ok = streamChunks(w, r, rep, sent, func(part string) {
				send("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0, "delta": part})
			}); !ok {
				return
			}
			send("response.output_text.done", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0, "text": rep.Content})
			send("response.content_part.done", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": rep.Content, "annotations": []any{}}})
		case "function_call":
			args := item["arguments"].(string)
			pending["arguments"] = ""
			send("response.output_item.added", map[string]any{"output_index": i, "item": pending})
			half := len(args) / 2
			for _, piece := range []string{args[:half], args[half:]} {
				send("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": i, "delta": piece})
			}
			send("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": i, "arguments": args})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	if rep.CutAfterChunks > 0 {
		abort(w)
	}
	if rep.MidStreamError != "" {
		failed := map[string]any{}
		for k, v := range resp {
			failed[k] = v
		}
		failed["status"] = "failed"
		failed["error"] = map[string]any{"code": "server_error", "message": rep.MidStreamError}
		send("response.failed", map[string]any{"response": failed})
		return
	}
	if rep.NoDone {
		return
	}
	send("response.completed", map[string]any{"response": resp})
}

// isResponses reports whether a path is the Responses endpoint.
func isResponses(path string) bool { return strings.HasSuffix(path, "/responses") }
