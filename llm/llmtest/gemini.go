package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Google's Gemini API (POST …/models/M:generateContent and
// :streamGenerateContent?alt=sse), what Gemini CLI speaks to
// GOOGLE_GEMINI_BASE_URL. Calls decode into the same Call (API Gemini) and are
// answered from the same Steps: Content becomes a text part, ToolCalls
// functionCall parts; a stream sends the text in chunks, then the calls and
// usageMetadata.

// Gemini is Google's Gemini API.
const Gemini API = "gemini"

type geminiPart struct {
	Text         string `json:"text,omitempty"`
	FunctionCall *struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []geminiPart `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig *struct {
		MaxOutputTokens  int             `json:"maxOutputTokens"`
		Temperature      *float64        `json:"temperature"`
		ResponseSchema   json.RawMessage `json:"responseSchema"`
		ResponseJSONSchm json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

// isGemini reports whether a path is a Gemini generate call.
func isGemini(path string) bool {
	return strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")
}

func geminiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INVALID_ARGUMENT"}})
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	var req geminiRequest
	c, ok := decodeRequest(w, r, Gemini, &req, geminiError)
	if !ok {
		return
	}
	model := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	c.Model = model[:strings.LastIndex(model, ":")]
	c.Stream = strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	if g := req.GenerationConfig; g != nil {
		c.MaxTokens, c.Temperature = g.MaxOutputTokens, g.Temperature
		c.Format = nonNull(g.ResponseJSONSchm)
		if c.Format == nil {
			c.Format = nonNull(g.ResponseSchema)
		}
	}
	if si := req.SystemInstruction; si != nil {
		var b strings.Builder
		for _, p := range si.Parts {
			b.WriteString(p.Text)
		}
		c.Messages = append(c.Messages, Message{Role: "system", Content: b.String()})
	}
	for _, content := range req.Contents {
		role := content.Role
		if role == "model" {
			role = "assistant"
		}
		msg := Message{Role: role}
		for _, p := range content.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				c.Messages = append(c.Messages, Message{Role: "tool", ToolCallID: p.FunctionResponse.Name, Content: string(p.FunctionResponse.Response)})
			default:
				msg.Content += p.Text
			}
		}
		if msg.Content != "" || len(msg.ToolCalls) > 0 {
			c.Messages = append(c.Messages, msg)
		}
	}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			params := f.ParametersJSONSchema
			if len(params) == 0 {
				params = f.Parameters
			}
			c.Tools = append(c.Tools, Tool{Name: f.Name, Description: f.Description, Parameters: params})
		}
	}
	rep, in, out, ok := s.answer(w, r, &c, geminiError)
	if !ok {
		return
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "STOP"
	}
	usage := map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}
	chunk := func(parts []map[string]any, last bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		m := map[string]any{"candidates": []any{cand}, "modelVersion": c.Model, "responseId": fmt.Sprintf("llmtest%06d", c.Seq)}
		if last {
			cand["finishReason"] = finish
			m["usageMetadata"] = usage
		}
		return m
	}
	var calls []map[string]any
	for _, tc := range rep.ToolCalls {
		args := tc.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		calls = append(calls, map[string]any{"functionCall": map[string]any{"name": tc.Name, "args": args}})
	}
	if !c.Stream {
		parts := calls
		if rep.Content != "" {
			parts = append([]map[string]any{{"text": rep.Content}}, calls...)
		}
		if parts == nil {
			parts = []map[string]any{}
		}
		writeJSON(w, http.StatusOK, chunk(parts, true))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(m map[string]any) {
		b, _ := json.Marshal(m)
		_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		flush(w)
	}
	if _, ok := streamChunks(w, r, rep, 0, func(part string) {
		send(chunk([]map[string]any{{"text": part}}, false))
	}); !ok {
		return
	}
	if rep.CutAfterChunks > 0 {
		abort(w)
	}
	if calls == nil {
		calls = []map[string]any{{"text": ""}}
	}
	send(chunk(calls, !rep.NoDone))
}
