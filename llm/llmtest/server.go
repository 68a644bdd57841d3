package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Server is the scripted model server. Its methods are safe for concurrent use.
type Server struct {
	ts *httptest.Server

	mu          sync.Mutex
	steps       []*stepState
	def         func(Call) Reply
	calls       []Call
	unmatched   []Call
	models      map[string]ModelInfo // nil: every model exists
	modelOrder  []string
	embedDim    int
	version     string
	processing  bool
	inflight    int
	maxInflight int
}

type stepState struct {
	step Step
	used int
}

// Option configures a Server.
type Option func(*Server)

// WithModels declares the models the fake Ollama has: /api/tags, /api/show
// and /v1/models list them, and an Ollama call (/api/chat, /api/embed,
// /api/show) naming another model gets a 404 worded as the real server's; a
// model without the "tools" capability answers tools with a 400. OpenAI
// calls are not checked (script a Status: 404 for that). Without this option
// every model name is accepted.
func WithModels(models ...ModelInfo) Option {
	return func(s *Server) {
		if s.models == nil {
			s.models = map[string]ModelInfo{}
		}
		for _, m := range models {
			if m.ContextLength == 0 {
				m.ContextLength = 4096
			}
			if m.Capabilities == nil {
				m.Capabilities = []string{"completion", "tools"}
			}
			if m.Family == "" {
				m.Family = "llama"
			}
			name := fullName(m.Name)
			if _, dup := s.models[name]; !dup {
				s.modelOrder = append(s.modelOrder, name)
			}
			s.models[name] = m
		}
	}
}

// WithEmbeddingDim sets the dimension of the default embeddings (default 64,
// as the real server gave for a small model).
func WithEmbeddingDim(n int) Option {
	return func(s *Server) { s.embedDim = n }
}

// WithVersion sets what /api/version reports (default "0.17.4").
func WithVersion(v string) Option {
	return func(s *Server) { s.version = v }
}

// WithProcessingComments makes OpenAI streams start with OpenRouter's
// ": OPENROUTER PROCESSING" comment line.
func WithProcessingComments() Option {
	return func(s *Server) { s.processing = true }
}

// NewServer starts a server on a loopback port. Close it when done.
func NewServer(opts ...Option) *Server {
	s := &Server{embedDim: 64, version: "0.17.4"}
	for _, o := range opts {
		o(s)
	}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's base URL, e.g. http://127.0.0.1:41234. Ollama clients
// use it as is; OpenAI clients use URL()+"/v1".
func (s *Server) URL() string { return s.ts.URL }

// Close shuts the server down, closing open connections.
func (s *Server) Close() {
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// Script appends steps to the script.
func (s *Server) Script(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range steps {
		s.steps = append(s.steps, &stepState{step: st})
	}
}

// SetDefault sets the reply for chat calls no step matches (instead of a 500).
func (s *Server) SetDefault(fn func(Call) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = fn
}

// Calls returns every request received so far, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ChatCalls returns the chat requests received so far, in arrival order.
func (s *Server) ChatCalls() []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.isChat() {
			out = append(out, c)
		}
	}
	return out
}

// Unmatched returns the calls that no step (and no default) could answer.
func (s *Server) Unmatched() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.unmatched...)
}

// Pending names the steps with a finite count that still expect calls.
func (s *Server) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i, st := range s.steps {
		if n := st.step.limit(); n > 0 && st.used < n {
			name := st.step.Name
			if name == "" {
				name = fmt.Sprintf("step %d", i+1)
			}
			out = append(out, name)
		}
	}
	return out
}

// MaxConcurrent is the largest number of chat and embedding requests that were
// being answered at the same moment.
func (s *Server) MaxConcurrent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInflight
}

// counted serves a model call, counted as in flight while it runs
// (MaxInflight).
func (s *Server) counted(h http.HandlerFunc, w http.ResponseWriter, r *http.Request) {
	s.enter()
	defer s.leave()
	h(w, r)
}

// streamChunks sends the reply's content in chunks of rep.ChunkSize, one
// send each, paced by rep.ChunkDelay and cut off after rep.CutAfterChunks
// chunks of the whole reply (sent so far: sent). It returns the chunks sent;
// false when the client went away.
func streamChunks(w http.ResponseWriter, r *http.Request, rep Reply, sent int, send func(part string)) (int, bool) {
	for _, part := range chunks(rep.Content, rep.ChunkSize) {
		if rep.CutAfterChunks > 0 && sent >= rep.CutAfterChunks {
			abort(w)
		}
		if sent > 0 && !wait(r, rep.ChunkDelay) {
			return sent, false
		}
		sent++
		send(part)
	}
	// A server that never stops: a distinct word a chunk (no loop to
	// detect), until the client goes away.
	for n := 0; rep.Endless; n++ {
		if !wait(r, rep.ChunkDelay) || r.Context().Err() != nil {
			return sent, false
		}
		sent++
		send(fmt.Sprintf("w%d ", n))
	}
	return sent, true
}

// serve routes a request by path suffix, so base URLs with prefixes work.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/api/chat"):
		s.counted(s.ollamaChat, w, r)
	case strings.HasSuffix(p, "/api/embed"):
		s.counted(s.ollamaEmbed, w, r)
	case strings.HasSuffix(p, "/api/tags"):
		s.ollamaTags(w, r)
	case strings.HasSuffix(p, "/api/show"):
		s.ollamaShow(w, r)
	case strings.HasSuffix(p, "/api/version"):
		writeJSON(w, http.StatusOK, map[string]string{"version": s.version})
	case strings.HasSuffix(p, "/chat/completions"):
		s.counted(s.openaiChat, w, r)
	case isResponses(p):
		s.counted(s.responses, w, r)
	case strings.HasSuffix(p, "/v1/messages"):
		s.counted(s.anthropicMessages, w, r)
	case isGemini(p):
		s.counted(s.gemini, w, r)
	case strings.HasSuffix(p, "/embeddings"):
		s.counted(s.openaiEmbed, w, r)
	case strings.HasSuffix(p, "/models"):
		s.openaiModels(w, r)
	default:
		http.Error(w, "404 page not found", http.StatusNotFound)
	}
}

// record stores the call, numbering it.
func (s *Server) record(c *Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.Seq = len(s.calls) + 1
	s.calls = append(s.calls, *c)
}

// enter and leave count requests in flight.
func (s *Server) enter() {
	s.mu.Lock()
	s.inflight++
	if s.inflight > s.maxInflight {
		s.maxInflight = s.inflight
	}
	s.mu.Unlock()
}

func (s *Server) leave() {
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
}

// pick finds the reply for c: the first live matching step, else the default
// (chat calls only). ok is false when nothing answers; the call is then
// recorded as unmatched.
func (s *Server) pick(c Call) (Reply, bool) {
	s.mu.Lock()
	var fn func(Call) Reply
	var reply Reply
	found := false
	for _, st := range s.steps {
		lim := st.step.limit()
		if lim >= 0 && st.used >= lim {
			continue
		}
		if !st.step.matches(c) {
			continue
		}
		st.used++
		fn, reply, found = st.step.Respond, st.step.Reply, true
		break
	}
	if !found && s.def != nil && c.isChat() {
		fn, found = s.def, true
	}
	if !found && c.isChat() {
		s.unmatched = append(s.unmatched, c)
	}
	s.mu.Unlock()
	// Computed replies run outside the lock: they may call back into s.
	if fn != nil {
		reply = fn(c)
	}
	return reply, found
}

// unmatchedMessage says which call found no step, for the 500 body.
func unmatchedMessage(c Call) string {
	prompt := c.LastUser()
	if prompt == "" {
		prompt = c.Prompt
	}
	if len(prompt) > 300 {
		prompt = prompt[:300] + "…"
	}
	return fmt.Sprintf("llmtest: no script step matches call #%d (%s %s, model %q); last user message: %q",
		c.Seq, c.API, c.Path, c.Model, prompt)
}

// wait sleeps d unless the client goes away first; false means it went away.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// answer records a decoded chat call and picks its scripted reply, applying
// the parts that do not depend on the protocol (prelude). ok is false when
// the response is already complete (no step matched, a scripted error or
// body, or the client left). in and out are the reply's token counts, or
// estimates where the script gave none.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, c *Call, fail func(http.ResponseWriter, int, string)) (rep Reply, in, out int, ok bool) {
	c.Prompt = joinPrompt(c.Messages)
	s.record(c)
	rep, found := s.pick(*c)
	if !found {
		fail(w, http.StatusInternalServerError, unmatchedMessage(*c))
		return rep, 0, 0, false
	}
	if prelude(w, r, rep, fail) {
		return rep, 0, 0, false
	}
	in, out = rep.PromptTokens, rep.CompletionTokens
	if in == 0 {
		in = estimate(c.Prompt)
	}
	if out == 0 {
		out = estimate(rep.Content)
	}
	return rep, in, out, true
}

// prelude applies the parts of a reply that do not depend on the protocol:
// latency, Retry-After, a raw body, and a scripted error status (written by
// fail in the protocol's error envelope, with Content as the message). done is
// true when the response is complete (body or error written, or the client left).
func prelude(w http.ResponseWriter, r *http.Request, rep Reply, fail func(http.ResponseWriter, int, string)) (done bool) {
	if !wait(r, rep.Latency) {
		return true
	}
	if rep.RetryAfter > 0 {
		secs := int((rep.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", fmt.Sprint(secs))
	}
	if rep.Body != "" {
		ct := rep.ContentType
		if ct == "" {
			ct = "application/json; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		status := rep.Status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		if rep.CutAfterChunks > 0 {
			_, _ = w.Write([]byte(rep.Body[:len(rep.Body)/2]))
			abort(w)
		}
		_, _ = w.Write([]byte(rep.Body))
		return true
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		msg := rep.Content
		if msg == "" {
			msg = http.StatusText(rep.Status)
		}
		fail(w, rep.Status, msg)
		return true
	}
	return false
}

// abort drops the connection mid-response, as a crashed server does.
func abort(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// chunks splits content for streaming: every size runes, or after each space.
func chunks(content string, size int) []string {
	if content == "" {
		return nil
	}
	var out []string
	if size > 0 {
		rs := []rune(content)
		for i := 0; i < len(rs); i += size {
			out = append(out, string(rs[i:min(i+size, len(rs))]))
		}
		return out
	}
	start := 0
	for i := 0; i < len(content); i++ {
		if content[i] == ' ' {
			out = append(out, content[start:i+1])
			start = i + 1
		}
	}
	if start < len(content) {
		out = append(out, content[start:])
	}
	return out
}

// estimate is the token count reported when the script gives none.
func estimate(s string) int { return len(s)/4 + 1 }

// fullName adds Ollama's implicit ":latest" tag.
func fullName(model string) string {
	if model == "" || strings.Contains(model, ":") {
		return model
	}
	return model + ":latest"
}

// knownModel reports whether model exists (always, without WithModels).
func (s *Server) knownModel(model string) (ModelInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.models == nil {
		return ModelInfo{Name: model, ContextLength: 4096, Capabilities: []string{"completion", "tools"}, Family: "llama"}, true
	}
	m, ok := s.models[fullName(model)]
	return m, ok
}

// joinPrompt concatenates message contents for substring matching.
func joinPrompt(msgs []Message) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Content)
	}
	return b.String()
}

// decodeRequest reads r's JSON body into req and starts the Call that every
// handler records, whichever protocol it speaks.
func decodeRequest(w http.ResponseWriter, r *http.Request, api API, req any, fail func(http.ResponseWriter, int, string)) (Call, bool) {
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, req); err != nil {
		fail(w, http.StatusBadRequest, err.Error()) // in the API's own error shape
		return Call{}, false
	}
	return Call{API: api, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Time: time.Now()}, true
}

// wireTool is a tool offered in a chat request; both protocols send the
// OpenAI shape.
type wireTool struct {
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func toolsOf(ws []wireTool) []Tool {
	var out []Tool
	for _, t := range ws {
		out = append(out, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out
}
