package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// openaiChatRequest is the part of a /chat/completions body the server reads.
type openaiChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Tools               []wireTool `json:"tools"`
	MaxTokens           int        `json:"max_tokens"`
	MaxCompletionTokens int        `json:"max_completion_tokens"`
	Temperature         *float64   `json:"temperature"`
}

// Wire shapes of OpenAI / OpenRouter replies.
type openaiToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openaiUsage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TotalTokens      int     `json:"total_tokens"`
	Cost             float64 `json:"cost"`
	IsBYOK           bool    `json:"is_byok"`
}

type openaiDelta struct {
	Role      string           `json:"role,omitempty"`
	Content   *string          `json:"content,omitempty"`
	ToolCalls []openaiToolCall `json:"tool_calls,omitempty"`
}

type openaiStreamChoice struct {
	Index              int         `json:"index"`
	Delta              openaiDelta `json:"delta"`
	FinishReason       *string     `json:"finish_reason"`
	NativeFinishReason *string     `json:"native_finish_reason"`
	Logprobs           any         `json:"logprobs"`
}

type openaiChunk struct {
	ID       string               `json:"id"`
	Provider string               `json:"provider"`
	Model    string               `json:"model"`
	Object   string               `json:"object"`
	Created  int64                `json:"created"`
	Error    *openaiChunkError    `json:"error,omitempty"`
	Choices  []openaiStreamChoice `json:"choices"`
	Usage    *openaiUsage         `json:"usage,omitempty"`
}

type openaiChunkError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func openaiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "code": status}})
}

// openaiText reads a message content: a string or a list of text parts.
func openaiText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out
}

func (s *Server) openaiChat(w http.ResponseWriter, r *http.Request) {
	var req openaiChatRequest
	c, ok := decodeRequest(w, r, OpenAI, &req, openaiError)
	if !ok {
		return
	}
	c.Model, c.Stream, c.Temperature = req.Model, req.Stream, req.Temperature
	c.MaxTokens = req.MaxCompletionTokens
	if c.MaxTokens == 0 {
		c.MaxTokens = req.MaxTokens
	}
	if req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil {
		c.Format = nonNull(req.ResponseFormat.JSONSchema.Schema)
	}
	for _, m := range req.Messages {
		msg := Message{Role: m.Role, Content: openaiText(m.Content), ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
		}
		c.Messages = append(c.Messages, msg)
	}
	c.Tools = toolsOf(req.Tools)
	rep, in, out, ok := s.answer(w, r, &c, openaiError)
	if !ok {
		return
	}
	usage := openaiUsage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, Cost: rep.Cost}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
		if len(rep.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	id := fmt.Sprintf("gen-%d-llmtest%06d", time.Now().Unix(), c.Seq)
	if !c.Stream {
		s.openaiWhole(w, c, rep, id, finish, usage)
		return
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.openaiStream(w, r, c, rep, id, finish, usage, includeUsage)
}

func (s *Server) openaiWhole(w http.ResponseWriter, c Call, rep Reply, id, finish string, usage openaiUsage) {
	msg := map[string]any{"role": "assistant", "content": rep.Content, "refusal": nil}
	if len(rep.ToolCalls) > 0 {
		if rep.Content == "" {
			msg["content"] = nil
		}
		var tcs []openaiToolCall
		for i, tc := range rep.ToolCalls {
			tcs = append(tcs, wireToolCall(i, tc, string(tc.Arguments), false))
		}
		msg["tool_calls"] = tcs
	}
	body := map[string]any{
		"id": id, "provider": "llmtest", "model": c.Model, "object": "chat.completion", "created": time.Now().Unix(),
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish, "native_finish_reason": finish}},
		"usage":   usage,
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if rep.CutAfterChunks > 0 {
		_, _ = w.Write(b[:len(b)/2])
		abort(w)
	}
	_, _ = w.Write(b)
}

func wireToolCall(i int, tc ToolCall, args string, indexed bool) openaiToolCall {
	var o openaiToolCall
	if indexed {
		o.Index = &i
	}
	o.ID = tc.ID
	if o.ID == "" {
		o.ID = fmt.Sprintf("call_llmtest_%d", i+1)
	}
	o.Type = "function"
	o.Function.Name = tc.Name
	o.Function.Arguments = args
	return o
}

func (s *Server) openaiStream(w http.ResponseWriter, r *http.Request, c Call, rep Reply, id, finish string, usage openaiUsage, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if s.processing {
		_, _ = io.WriteString(w, ": OPENROUTER PROCESSING\n\n")
		flush(w)
	}
	created := time.Now().Unix()
	send := func(ch openaiChunk) {
		ch.ID, ch.Provider, ch.Model, ch.Object, ch.Created = id, "llmtest", c.Model, "chat.completion.chunk", created
		if ch.Choices == nil {
			ch.Choices = []openaiStreamChoice{}
		}
		b, _ := json.Marshal(ch)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		flush(w)
	}
	choice := func(d openaiDelta, fin string) []openaiStreamChoice {
		ch := openaiStreamChoice{Delta: d}
		if fin != "" {
			ch.FinishReason, ch.NativeFinishReason = &fin, &fin
		}
		return []openaiStreamChoice{ch}
	}
	empty := ""
	send(openaiChunk{Choices: choice(openaiDelta{Role: "assistant", Content: &empty}, "")})
	if _, ok := streamChunks(w, r, rep, 0, func(part string) {
		send(openaiChunk{Choices: choice(openaiDelta{Content: &part}, "")})
	}); !ok {
		return
	}
	// Tool calls stream as OpenAI sends them: id and name first, then the
	// arguments in pieces, all keyed by index.
	for i, tc := range rep.ToolCalls {
		args := string(tc.Arguments)
		head := wireToolCall(i, tc, "", true)
		send(openaiChunk{Choices: choice(openaiDelta{ToolCalls: []openaiToolCall{head}}, "")})
		half := len(args) / 2
		for _, piece := range []string{args[:half], args[half:]} {
			var frag openaiToolCall
			idx := i
			frag.Index = &idx
			frag.Function.Arguments = piece
			send(openaiChunk{Choices: choice(openaiDelta{ToolCalls: []openaiToolCall{frag}}, "")})
		}
	}
	if rep.CutAfterChunks > 0 {
		abort(w)
	}
	if rep.MidStreamError != "" {
		send(openaiChunk{Error: &openaiChunkError{Code: "server_error", Message: rep.MidStreamError},
			Choices: choice(openaiDelta{Content: &empty}, "error")})
	} else {
		send(openaiChunk{Choices: choice(openaiDelta{Content: &empty}, finish)})
		if includeUsage {
			send(openaiChunk{Usage: &usage})
		}
	}
	if rep.NoDone {
		return
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	flush(w)
}

func (s *Server) openaiEmbed(w http.ResponseWriter, r *http.Request) {
	c, ok := s.embedCall(w, r, OpenAI, openaiError)
	if !ok {
		return
	}
	rep, found := s.pick(c)
	if found && prelude(w, r, rep, openaiError) {
		return
	}
	data := []map[string]any{}
	for i, in := range c.Input {
		v := Vector(in, s.embedDim)
		if found && i < len(rep.Embeddings) {
			v = rep.Embeddings[i]
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "model": c.Model,
		"usage": map[string]int{"prompt_tokens": len(c.Prompt)/4 + 1, "total_tokens": len(c.Prompt)/4 + 1},
	})
}

func (s *Server) openaiModels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	data := []map[string]any{}
	for _, name := range s.modelOrder {
		data = append(data, map[string]any{"id": s.models[name].Name, "object": "model", "created": 1762000000, "owned_by": "llmtest"})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
