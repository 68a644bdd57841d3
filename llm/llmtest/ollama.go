package llmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// ollamaChatRequest is the part of Ollama's /api/chat body the server reads.
type ollamaChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Stream    *bool           `json:"stream"`
	Format    json.RawMessage `json:"format"`
	Options   map[string]any  `json:"options"`
	KeepAlive json.RawMessage `json:"keep_alive"`
	Tools     []wireTool      `json:"tools"`
}

// Wire shapes of Ollama's replies (field order as the real server writes).
type ollamaToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type ollamaMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
}

type ollamaChunk struct {
	Model              string        `json:"model"`
	CreatedAt          string        `json:"created_at"`
	Message            ollamaMessage `json:"message"`
	DoneReason         string        `json:"done_reason,omitempty"`
	Done               bool          `json:"done"`
	TotalDuration      int64         `json:"total_duration,omitempty"`
	LoadDuration       int64         `json:"load_duration,omitempty"`
	PromptEvalCount    int           `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64         `json:"prompt_eval_duration,omitempty"`
	EvalCount          int           `json:"eval_count,omitempty"`
	EvalDuration       int64         `json:"eval_duration,omitempty"`
}

func ollamaError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	var req ollamaChatRequest
	c, ok := decodeRequest(w, r, Ollama, &req, ollamaError)
	if !ok {
		return
	}
	c.Model, c.Format, c.Options, c.KeepAlive = req.Model, nonNull(req.Format), req.Options, nonNull(req.KeepAlive)
	c.Stream = req.Stream == nil || *req.Stream
	for _, m := range req.Messages {
		msg := Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		c.Messages = append(c.Messages, msg)
	}
	c.Tools = toolsOf(req.Tools)
	c.Prompt = joinPrompt(c.Messages)
	if v, ok := req.Options["num_ctx"].(float64); ok {
		c.NumCtx = int(v)
	}
	if v, ok := req.Options["num_predict"].(float64); ok {
		c.MaxTokens = int(v)
	}
	if v, ok := req.Options["temperature"].(float64); ok {
		c.Temperature = &v
	}
	s.record(&c)

	// The checks come in the real server's order: the body (keep_alive), the
	// model, its capabilities, the options, then the format.
	if len(req.KeepAlive) > 0 && !validKeepAlive(req.KeepAlive) {
		ollamaError(w, http.StatusBadRequest, fmt.Sprintf("time: invalid duration %s", req.KeepAlive))
		return
	}
	info, ok := s.knownModel(req.Model)
	if !ok {
		ollamaError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	if !slices.Contains(info.Capabilities, "completion") {
		ollamaError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support chat", req.Model))
		return
	}
	if len(req.Tools) > 0 && !slices.Contains(info.Capabilities, "tools") {
		ollamaError(w, http.StatusBadRequest, qualifiedName(req.Model)+" does not support tools")
		return
	}
	// Like the real server, a wrongly typed option is a 500, not a 400.
	if err := checkOptions(req.Options); err != nil {
		ollamaError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := checkFormat(c.Format); err != nil {
		// The real server finds a bad format once the model is loaded: a
		// 500 without streaming, an error line in a 200 stream with it.
		if !c.Stream {
			ollamaError(w, http.StatusInternalServerError, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		_, _ = w.Write(append(b, '\n'))
		return
	}
	c.window = effectiveWindow(c.NumCtx, info.ContextLength)
	rep, found := s.pick(c)
	if !found {
		ollamaError(w, http.StatusInternalServerError, unmatchedMessage(c))
		return
	}
	if prelude(w, r, rep, ollamaError) {
		return
	}
	s.ollamaAnswer(w, r, c, rep)
}

// ollamaAnswer writes a successful chat reply, streaming or not.
func (s *Server) ollamaAnswer(w http.ResponseWriter, r *http.Request, c Call, rep Reply) {
	now := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	rep.Content = continued(c, rep.Content)
	if stops, ok := c.Options["stop"].([]any); ok {
		// The real server ends the reply at the first stop sequence and
		// leaves it out.
		for _, st := range stops {
			if st, ok := st.(string); ok && st != "" {
				if i := strings.Index(rep.Content, st); i >= 0 {
					rep.Content = rep.Content[:i]
				}
			}
		}
	}
	done := ollamaChunk{Model: c.Model, Message: ollamaMessage{Role: "assistant"}, Done: true, DoneReason: rep.DoneReason}
	if done.DoneReason == "" {
		done.DoneReason = "stop"
	}
	done.PromptEvalCount = rep.PromptTokens
	if done.PromptEvalCount == 0 {
		done.PromptEvalCount = estimate(c.Prompt)
	}
	if c.window > 0 {
		// The real server cuts a prompt longer than its window silently:
		// it evaluates one whole window and answers 200.
		done.PromptEvalCount = min(done.PromptEvalCount, c.window)
	}
	done.EvalCount = rep.CompletionTokens
	if done.EvalCount == 0 {
		done.EvalCount = estimate(rep.Content)
	}
	done.EvalDuration = int64(rep.EvalDuration)
	if done.EvalDuration == 0 {
		done.EvalDuration = int64(done.EvalCount) * int64(10*time.Millisecond)
	}
	done.PromptEvalDuration = int64(done.PromptEvalCount) * int64(time.Millisecond)
	done.LoadDuration = int64(time.Millisecond)
	done.TotalDuration = done.LoadDuration + done.PromptEvalDuration + done.EvalDuration
	calls := ollamaToolCalls(rep.ToolCalls)

	if !c.Stream {
		out := done
		out.CreatedAt = now()
		out.Message.Content = rep.Content
		out.Message.ToolCalls = calls
		if rep.NoDone {
			// What the real server sent when it stopped a runaway model.
			out = ollamaChunk{Model: c.Model, CreatedAt: now(), Message: ollamaMessage{Role: "assistant", Content: rep.Content}}
		}
		b, _ := json.Marshal(out)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		if rep.CutAfterChunks > 0 {
			_, _ = w.Write(b[:len(b)/2])
			abort(w)
		}
		_, _ = w.Write(append(b, '\n'))
		return
	}

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	line := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(b, '\n'))
		flush(w)
	}
	if _, ok := streamChunks(w, r, rep, 0, func(part string) {
		line(ollamaChunk{Model: c.Model, CreatedAt: now(), Message: ollamaMessage{Role: "assistant", Content: part}})
	}); !ok {
		return
	}
	if len(calls) > 0 {
		line(ollamaChunk{Model: c.Model, CreatedAt: now(), Message: ollamaMessage{Role: "assistant", ToolCalls: calls}})
	}
	if rep.CutAfterChunks > 0 {
		abort(w)
	}
	if rep.MidStreamError != "" {
		line(map[string]string{"error": rep.MidStreamError})
		return
	}
	if rep.NoDone {
		return
	}
	done.CreatedAt = now()
	line(done)
}

func ollamaToolCalls(tcs []ToolCall) []ollamaToolCall {
	var out []ollamaToolCall
	for i, tc := range tcs {
		var o ollamaToolCall
		o.ID = tc.ID
		if o.ID == "" {
			o.ID = fmt.Sprintf("call_%08d", i+1)
		}
		o.Function.Index = i
		o.Function.Name = tc.Name
		o.Function.Arguments = tc.Arguments
		if len(o.Function.Arguments) == 0 {
			o.Function.Arguments = json.RawMessage(`{}`)
		}
		out = append(out, o)
	}
	return out
}

func (s *Server) ollamaEmbed(w http.ResponseWriter, r *http.Request) {
	c, ok := s.embedCall(w, r, Ollama, ollamaError)
	if !ok {
		return
	}
	if _, ok := s.knownModel(c.Model); !ok {
		ollamaError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", c.Model))
		return
	}
	rep, found := s.pick(c)
	if found && prelude(w, r, rep, ollamaError) {
		return
	}
	vecs := rep.Embeddings
	if !found || vecs == nil {
		for _, in := range c.Input {
			vecs = append(vecs, Vector(in, s.embedDim))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"model": c.Model, "embeddings": vecs,
		"total_duration": 1000000, "load_duration": 100000, "prompt_eval_count": len(c.Prompt)/4 + len(c.Input),
	})
}

func (s *Server) ollamaTags(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	models := []map[string]any{}
	for _, name := range s.modelOrder {
		m := s.models[name]
		sum := sha256.Sum256([]byte(name))
		models = append(models, map[string]any{
			"name": name, "model": name, "modified_at": "2026-11-01T10:00:00.000000000Z",
			"size": 266240, "digest": hex.EncodeToString(sum[:]), "details": details(m),
		})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	c, ok := decodeRequest(w, r, Ollama, &req, ollamaError)
	if !ok {
		return
	}
	if req.Model == "" {
		req.Model = req.Name
	}
	c.Model = req.Model
	s.record(&c)
	m, ok := s.knownModel(req.Model)
	if !ok {
		ollamaError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"modelfile":  "FROM " + m.Name + "\n",
		"parameters": "stop \"<|end|>\"",
		"template":   "{{ .Prompt }}",
		"details":    details(m),
		"model_info": map[string]any{
			"general.architecture":             m.Family,
			"general.parameter_count":          1000000,
			m.Family + ".context_length":       m.ContextLength,
			m.Family + ".embedding_length":     s.embedDim,
			m.Family + ".attention.head_count": 4,
		},
		"capabilities": m.Capabilities,
		"modified_at":  "2026-11-01T10:00:00.000000000Z",
	})
}

func details(m ModelInfo) map[string]any {
	return map[string]any{
		"parent_model": "", "format": "gguf", "family": m.Family, "families": []string{m.Family},
		"parameter_size": "1M", "quantization_level": "F16",
	}
}

// defaultWindow is the real server's num_ctx when a request sets none
// (OLLAMA_CONTEXT_LENGTH's default).
const defaultWindow = 4096

// effectiveWindow is the window the real server loads a model with: the
// request's num_ctx (else its default), silently clamped to the model's
// context length.
func effectiveWindow(numCtx, contextLength int) int {
	n := numCtx
	if n <= 0 {
		n = defaultWindow
	}
	if contextLength > 0 && n > contextLength {
		n = contextLength
	}
	return n
}

// checkOptions checks option types as the real server does, with Ollama's
// own api.Options.FromMap (option "top_k" must be of type integer).
// Unknown options are accepted, as there (it only logs them; they are left
// out here so that nothing is logged).
func checkOptions(opts map[string]any) error {
	known := map[string]any{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[api.Options]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if v, ok := opts[name]; ok && name != "" {
			known[name] = v
		}
	}
	o := api.DefaultOptions()
	return o.FromMap(known)
}

// checkFormat accepts what the real server accepts as format: nothing, "",
// "json" or a JSON schema object.
func checkFormat(f json.RawMessage) error {
	switch string(f) {
	case "", `""`, `"json"`:
		return nil
	}
	if f[0] != '{' {
		return fmt.Errorf("invalid format: %q; expected \"json\" or a valid JSON Schema object", f)
	}
	if !json.Valid(f) {
		return fmt.Errorf("invalid JSON schema in format")
	}
	return nil
}

// qualifiedName is a model name as the real server prints it in errors:
// "registry.ollama.ai/library/tiny:latest".
func qualifiedName(model string) string {
	name := fullName(model)
	switch strings.Count(name, "/") {
	case 0:
		return "registry.ollama.ai/library/" + name
	case 1:
		return "registry.ollama.ai/" + name
	}
	return name
}

// validKeepAlive accepts what Ollama accepts: a number of seconds or a Go
// duration string ("soon" is a 400 on the real server).
func validKeepAlive(raw json.RawMessage) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	switch t := v.(type) {
	case float64:
		return true
	case string:
		_, err := time.ParseDuration(t)
		return err == nil
	}
	return false
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// decodeInput reads an embedding input: a string or a list of strings.
func decodeInput(raw json.RawMessage) []string {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

func joinStrings(ss []string) string { return strings.Join(ss, "\n") }

// embedCall decodes and records an embedding request of either protocol
// (both send {"model", "input"}).
func (s *Server) embedCall(w http.ResponseWriter, r *http.Request, api API, fail func(http.ResponseWriter, int, string)) (Call, bool) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	c, ok := decodeRequest(w, r, api, &req, fail)
	if !ok {
		return Call{}, false
	}
	c.Model = req.Model
	c.Input = decodeInput(req.Input)
	c.Prompt = joinStrings(c.Input)
	s.record(&c)
	return c, true
}

// continued is a scripted reply to a request whose last message is the
// assistant's (a prefill): the real server returns only what follows it, so
// a script that wrote the whole reply, prefill included, has it taken off.
func continued(c Call, content string) string {
	if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "assistant" {
		return strings.TrimPrefix(content, c.Messages[n-1].Content)
	}
	return content
}
