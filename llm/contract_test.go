package llm

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/rag"
)

// The Ollama contract: what lemmings relies on from an Ollama server, as one
// table of cases run unchanged against the real server (built by make ollama,
// tiny random-weight models) and against the scripted server set up to mimic
// it. Every case talks to its server through a recording proxy and asserts on
// what went over the wire, so "the server received this schema" or "this
// num_ctx" means the same for both. The real model's words are noise: the
// cases assert wire behaviour, never wording of replies.

// contractServer is one Ollama server under the contract, behind a proxy.
type contractServer struct {
	URL    string            // the recording proxy: what routers talk to
	Direct string            // the server itself (for "the server went away")
	Models realollama.Models // the same names on both servers
	Window int               // the chat model's context length
	Real   bool
	wire   *wireLog
	stop   func() error
	log    func() string // the server's log; nil for the scripted server
}

// contractCase is one clause of the contract.
type contractCase struct {
	name string
	run  func(t *testing.T, ctx context.Context, s *contractServer)
}

func TestRealOllamaContract(t *testing.T) {
	runContract(t, func(t *testing.T) *contractServer {
		s := realollama.Start(t)
		return newContractServer(t, s.URL, s.Models, true, s.Stop, s.Log)
	})
}

func TestScriptedOllamaContract(t *testing.T) {
	runContract(t, func(t *testing.T) *contractServer {
		srv := mimicServer()
		t.Cleanup(srv.Close)
		stop := func() error { srv.Close(); return nil }
		return newContractServer(t, srv.URL(), realollama.DefaultModels(), false, stop, nil)
	})
}

func runContract(t *testing.T, start func(*testing.T) *contractServer) {
	for _, tc := range contractCases {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			tc.run(t, ctx, s)
		})
	}
}

func newContractServer(t *testing.T, url string, models realollama.Models, real bool, stop func() error, log func() string) *contractServer {
	proxy, wire := recordingProxy(t, url)
	return &contractServer{URL: proxy, Direct: url, Models: models, Window: 4096, Real: real, wire: wire, stop: stop, log: log}
}

// router builds a router whose roles use this server (through the proxy),
// with two attempts per call and retries that do not sleep.
func (s *contractServer) router(t *testing.T, roles map[string]RoleSpec) *Router {
	t.Helper()
	for name, spec := range roles {
		spec.Provider = ProviderOllama
		if spec.BaseURL == "" {
			spec.BaseURL = s.URL
		}
		if spec.Options == nil {
			spec.Options = map[string]any{"seed": 7}
		}
		roles[name] = spec
	}
	r, _ := newRouter(t, RouterConfig{Roles: roles, Retry: RetryPolicy{MaxAttempts: 2}})
	return r
}

var contractCases = []contractCase{
	{"a non-streaming chat is one JSON object with done:true and the server's counts", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, MaxTokens: 64, NoStream: true}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Say hello."}}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.DoneReason == "" || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 || resp.NumCtx != 2048 {
			t.Errorf("resp %+v", resp)
		}
		c := s.wire.one(t, "/api/chat")
		if c.Req["stream"] != false || c.option("num_ctx") != 2048 || c.option("num_predict") != 64 {
			t.Errorf("request %s", c.ReqBody)
		}
		if !strings.HasPrefix(c.ContentType, "application/json") {
			t.Errorf("content type %q", c.ContentType)
		}
		obj := c.lines(t)
		if len(obj) != 1 || obj[0]["done"] != true || jsonInt(obj[0]["prompt_eval_count"]) != resp.Usage.PromptTokens ||
			obj[0]["message"].(map[string]any)["content"] != resp.Content {
			t.Errorf("body %s", c.RespBody)
		}
		s.noTruncation(t)
	}},

	{"a streaming chat is NDJSON, one line per piece, ending with done:true", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, MaxTokens: 64}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Say hello."}}})
		if err != nil {
			t.Fatal(err)
		}
		c := s.wire.one(t, "/api/chat")
		if c.Req["stream"] != true || c.ContentType != "application/x-ndjson" {
			t.Errorf("stream %v, content type %q", c.Req["stream"], c.ContentType)
		}
		lines := c.lines(t)
		var content strings.Builder
		for i, l := range lines {
			content.WriteString(l["message"].(map[string]any)["content"].(string))
			if done := l["done"] == true; done != (i == len(lines)-1) {
				t.Errorf("line %d of %d: done %v", i+1, len(lines), l["done"])
			}
		}
		if len(lines) < 3 || content.String() != resp.Content || jsonInt(lines[len(lines)-1]["eval_count"]) != resp.Usage.CompletionTokens {
			t.Errorf("%d lines, content %q, resp %+v", len(lines), content.String(), resp)
		}
		if resp.Usage.TokensPerSecond() <= 0 {
			t.Errorf("no generation speed: %+v", resp.Usage)
		}
	}},

	{"structured output validates and lemmings' schema reaches the server intact", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, MaxTokens: 200}})
		got, resp, err := Structured[verdict](ctx, r, Request{Role: "primary", Messages: []Message{{Role: "user", Content: "Did the tests pass?"}}})
		if err != nil {
			t.Fatalf("%v (reply %q)", err, resp.Content)
		}
		if got.Verdict != "pass" && got.Verdict != "fail" || got.Score < 0 || got.Score > 9 || len(got.Reason) > 12 {
			t.Errorf("got %+v", got)
		}
		want, err := SchemaFor[verdict]()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.wire.calls("/api/chat") {
			if !jsonEqual(t, c.Req["format"], want) {
				t.Errorf("the server received format %v, lemmings built %s", c.Req["format"], want)
			}
		}
		cs, _ := compileSchema(want)
		if _, problem := decodeReply[verdict](resp.Content, cs); problem != "" {
			t.Errorf("reply %q: %s", resp.Content, problem)
		}
	}},

	{"num_ctx is sized from the prompt and never above what /api/show allows", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{
			"primary": {Model: s.Models.Chat, MaxTokens: 32},
			"forced":  {Model: s.Models.Chat, MaxTokens: 32, NumCtx: 100000},
		})
		for _, role := range []string{"primary", "forced"} {
			if _, err := r.Chat(ctx, Request{Role: role, Messages: userMsg("hi")}); err != nil {
				t.Fatalf("%s: %v", role, err)
			}
		}
		show := s.wire.calls("/api/show")[0].lines(t)[0]
		allowed := jsonInt(show["model_info"].(map[string]any)["llama.context_length"])
		chats := s.wire.calls("/api/chat")
		if len(chats) != 2 || chats[0].option("num_ctx") != 2048 || chats[1].option("num_ctx") != allowed || allowed != s.Window {
			t.Errorf("num_ctx sent %v, /api/show allows %d", s.wire.numCtx(), allowed)
		}
		if s.log != nil {
			// The server loaded exactly the windows lemmings sent, never one
			// it had to clamp.
			if log := s.log(); strings.Contains(log, "requested context size too large") || !strings.Contains(log, "--ctx-size 2048 ") || !strings.Contains(log, "--ctx-size 4096 ") {
				t.Errorf("server log:\n%s", grepLines(log, "ctx-size", "context size"))
			}
		}
	}},

	{"a prompt over the model's window is refused before it is sent", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("word ", 4000))})
		if e := asError(t, err); e.Kind != KindContextTooLarge || e.Window != s.Window || e.Retriable {
			t.Errorf("error %v", e)
		}
		if n := len(s.wire.calls("/api/chat")); n != 0 {
			t.Errorf("%d chat requests sent", n)
		}
	}},

	{"a prompt the estimate underrates is cut by the server silently, noticed, and resent with the whole window", func(t *testing.T, ctx context.Context, s *contractServer) {
		// ~2300 tokens for the tiny model's tokenizer, estimated at ~850.
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, MaxTokens: 32}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("zq8 xv7 kj3 ", 210))})
		if err != nil {
			t.Fatal(err)
		}
		chats := s.wire.calls("/api/chat")
		if len(chats) != 2 || chats[0].option("num_ctx") != 2048 || chats[1].option("num_ctx") != s.Window {
			t.Fatalf("num_ctx sent %v", s.wire.numCtx())
		}
		// The premise: 200, and a whole window evaluated, is all the server
		// says about a prompt it cut.
		if first := chats[0].lines(t); chats[0].Status != 200 || jsonInt(first[len(first)-1]["prompt_eval_count"]) != 2048 {
			t.Errorf("first reply %d %s", chats[0].Status, textutil.Clip(string(chats[0].RespBody), 300))
		}
		second := chats[1].lines(t)
		if n := jsonInt(second[len(second)-1]["prompt_eval_count"]); n >= s.Window || resp.NumCtx != s.Window || resp.Usage.Calls != 2 || resp.Usage.PromptTokens != 2048+n {
			t.Errorf("resp num_ctx %d usage %+v, second prompt_eval_count %d", resp.NumCtx, resp.Usage, n)
		}
	}},

	{"a prompt even the whole window cannot hold is an error, never a truncated answer", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, MaxTokens: 32}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("zq8 xv7 kj3 ", 500))})
		if e := asError(t, err); e.Kind != KindContextTooLarge || !strings.Contains(e.Error(), "truncated") || e.Window != s.Window {
			t.Errorf("error %v", e)
		}
		if resp.Content != "" {
			t.Errorf("the cut prompt's answer came back: %q", resp.Content)
		}
		chats := s.wire.calls("/api/chat")
		if len(chats) != 2 {
			t.Fatalf("num_ctx sent %v", s.wire.numCtx())
		}
		if last := chats[1].lines(t); chats[1].Status != 200 || jsonInt(last[len(last)-1]["prompt_eval_count"]) != s.Window {
			t.Errorf("the server did not cut the prompt silently: %d %s", chats[1].Status, textutil.Clip(string(chats[1].RespBody), 300))
		}
	}},

	{"a reply that ends without done:true after content is a runaway: a bad reply, not retried as a transport fault", func(t *testing.T, ctx context.Context, s *contractServer) {
		// With the seed-1 model, "hello 1" at temperature 0 repeats one
		// token until the server stops it without a done:true line
		// (docs/testing-real-ollama.md).
		zero := 0.0
		for _, noStream := range []bool{false, true} {
			mark := s.wire.len()
			r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, MaxTokens: 400, Temperature: &zero, NoStream: noStream, Options: map[string]any{}}})
			resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hello 1")})
			if err == nil {
				if s.Real {
					t.Skipf("this build's model finished normally (%q): the runaway case did not reproduce", textutil.Clip(resp.Content, 80))
				}
				t.Fatalf("noStream=%v: no error", noStream)
			}
			if e := asError(t, err); e.Kind != KindRunaway || e.Retriable {
				t.Errorf("noStream=%v: error %v", noStream, e)
			}
			chats := s.wire.since(mark, "/api/chat")
			if len(chats) != 1 {
				t.Errorf("noStream=%v: %d requests, want 1 (a runaway is not a transport fault)", noStream, len(chats))
			}
			for _, c := range chats {
				lines := c.lines(t)
				if c.Status != 200 || len(lines) == 0 || slices.ContainsFunc(lines, func(l map[string]any) bool { return l["done"] == true }) {
					t.Errorf("noStream=%v: reply %d with %d lines, %s", noStream, c.Status, len(lines), textutil.Clip(string(c.RespBody), 200))
				}
			}
		}
	}},

	{"an unknown model is reported with `ollama pull`, not retried", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: "qwen2.5-coder:14b"}, "embedding": {Model: "nomic-embed-text"}})
		for what, err := range map[string]error{
			"check": r.Check(ctx, "primary"),
			"chat":  func() error { _, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("x")}); return err }(),
		} {
			e := asError(t, err)
			if e.Kind != KindModelNotFound || e.Retriable || e.Hint != "run `ollama pull qwen2.5-coder:14b`" || e.Status != 404 {
				t.Errorf("%s: %v", what, e)
			}
		}
		_, err := r.Embed(ctx, []string{"x"})
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindModelNotFound || !strings.Contains(err.Error(), "run `ollama pull nomic-embed-text`") {
			t.Errorf("embed: %v", err)
		}
		if n := len(s.wire.calls("/api/chat")); n != 0 {
			t.Errorf("%d chat requests for a model /api/show does not know", n)
		}
		for _, c := range s.wire.all() {
			if c.Status != 404 && c.Path != "/api/version" {
				t.Errorf("%s answered %d", c.Path, c.Status)
			}
		}
		if n := len(s.wire.calls("/api/embed")); n != 1 {
			t.Errorf("%d embed requests", n)
		}
	}},

	{"a 500 for a wrongly typed option is reported with the fix, not retried", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, Options: map[string]any{"top_k": "high"}}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("x")})
		e := asError(t, err)
		if e.Kind != KindBadRequest || e.Status != 500 || e.Retriable || !strings.Contains(e.Error(), `option "top_k" must be of type integer`) || !strings.Contains(e.Hint, "options") {
			t.Errorf("error %v", e)
		}
		if chats := s.wire.calls("/api/chat"); len(chats) != 1 || chats[0].Status != 500 {
			t.Errorf("%d chat requests", len(chats))
		}
	}},

	{"a format the server refuses is reported, not retried, streaming or not", func(t *testing.T, ctx context.Context, s *contractServer) {
		for _, noStream := range []bool{false, true} {
			mark := s.wire.len()
			r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, MaxTokens: 16, NoStream: noStream}})
			_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("x"), Schema: json.RawMessage(`["not","a","schema"]`)})
			if e := asError(t, err); e.Kind != KindBadRequest || e.Retriable || !strings.Contains(e.Error(), "invalid format") {
				t.Errorf("noStream=%v: error %v", noStream, e)
			}
			chats := s.wire.since(mark, "/api/chat")
			if len(chats) != 1 {
				t.Fatalf("noStream=%v: %d requests", noStream, len(chats))
			}
			// Streaming, the refusal is an error line in a 200 stream.
			if want := map[bool]int{false: 200, true: 500}[noStream]; chats[0].Status != want {
				t.Errorf("noStream=%v: status %d, want %d", noStream, chats[0].Status, want)
			}
		}
	}},

	{"a model without tools gets the tools in the prompt instead", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.ChatNoTools, MaxTokens: 64}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("Read main.go"), Tools: testTools})
		if err != nil {
			t.Fatalf("the 400 should have switched to the fallback: %v", err)
		}
		chats := s.wire.calls("/api/chat")
		if len(chats) != 2 || chats[0].Status != 400 || !strings.Contains(string(chats[0].RespBody), "does not support tools") ||
			chats[0].Req["tools"] == nil || chats[1].Req["tools"] != nil || !strings.Contains(string(chats[1].ReqBody), "read_file") {
			t.Fatalf("chat requests %v", s.wire.summary())
		}
		if _, ok := r.noTools.Load(ProviderOllama + "|" + s.URL + "|" + s.Models.ChatNoTools); !ok {
			t.Errorf("the model was not remembered as tool-less (reply %q)", resp.Content)
		}
	}},

	{"a chat with an embedding-only model is refused, not retried", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Embed}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("x")})
		if e := asError(t, err); e.Kind != KindBadRequest || e.Status != 400 || e.Retriable || !strings.Contains(e.Error(), "does not support chat") {
			t.Errorf("error %v", e)
		}
		if n := len(s.wire.calls("/api/chat")); n != 1 {
			t.Errorf("%d chat requests", n)
		}
	}},

	{"embeddings from /api/embed fill a rag index that answers searches", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat}, EmbeddingRole: {Model: s.Models.Embed}})
		if err := r.Check(ctx, EmbeddingRole); err != nil {
			t.Fatal(err)
		}
		emb := &routerEmbedder{r: r, name: "ollama:" + s.Models.Embed}
		if _, err := emb.Embed(ctx, []string{"probe"}); err != nil || emb.Dimensions() != 64 {
			t.Fatalf("probe: %v, %d dimensions", err, emb.Dimensions())
		}
		ix, err := rag.Open(t.TempDir(), emb)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		repo := t.TempDir()
		writeFiles(t, repo, map[string]string{
			"calc.go":                "package calc\n\n// Multiply returns a times b.\nfunc Multiply(a, b int) int { return a * b }\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n",
			"words.go":               "package calc\n\nimport \"strings\"\n\n// CountWords counts the words of s.\nfunc CountWords(s string) int { return len(strings.Fields(s)) }\n",
			"docs/knowledge/calc.md": "# Calc\n\nMultiplication and addition of integers.\n\n## Words\n\nCounting words in a text.\n",
		})
		st, err := ix.Update(ctx, repo, rag.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.ChunksEmbedded < 3 || ix.Embedder() != emb.name {
			t.Errorf("stats %s, embedder %s", st, ix.Embedder())
		}
		for _, m := range []rag.Method{rag.Vector, rag.Hybrid} {
			hits, err := ix.SearchWith(ctx, "Multiply", 3, rag.Filter{}, m)
			if err != nil || len(hits) == 0 || math.IsNaN(hits[0].Score) {
				t.Errorf("%s search: %v %+v", m, err, hits)
			}
		}
		embeds := s.wire.calls("/api/embed")
		if len(embeds) < 2 {
			t.Fatalf("%d embed requests", len(embeds))
		}
		for _, c := range embeds {
			in, _ := c.Req["input"].([]any)
			out, _ := c.lines(t)[0]["embeddings"].([]any)
			if c.Req["model"] != s.Models.Embed || len(in) == 0 || len(out) != len(in) {
				t.Fatalf("embed request %s → %d vectors", textutil.Clip(string(c.ReqBody), 200), len(out))
			}
			for _, v := range out {
				if n := vectorNorm(v.([]any)); len(v.([]any)) != 64 || math.Abs(n-1) > 1e-3 {
					t.Errorf("a vector of %d dimensions and norm %v", len(v.([]any)), n)
				}
			}
		}
	}},

	{"a server that went away is unavailable, with the fix", func(t *testing.T, ctx context.Context, s *contractServer) {
		r := s.router(t, map[string]RoleSpec{"primary": {Model: s.Models.Chat, BaseURL: s.Direct}})
		if err := r.Check(ctx, "primary"); err != nil {
			t.Fatalf("before: %v", err)
		}
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("x")})
		if e := asError(t, err); e.Kind != KindUnavailable || !strings.Contains(e.Hint, "ollama serve") {
			t.Errorf("error %v", e)
		}
	}},
}

// noTruncation asserts that no reply so far evaluated a whole window (the
// server's only sign of a prompt it cut) and, on the real server, that its
// log reports no truncation.
func (s *contractServer) noTruncation(t *testing.T) {
	t.Helper()
	for _, c := range s.wire.calls("/api/chat") {
		lines := c.lines(t)
		if len(lines) > 0 && jsonInt(lines[len(lines)-1]["prompt_eval_count"]) >= c.option("num_ctx") {
			t.Errorf("a reply evaluated a whole window: %s", textutil.Clip(string(c.RespBody), 200))
		}
	}
	if s.log != nil && strings.Contains(s.log(), "truncating input prompt") {
		t.Errorf("the server cut a prompt:\n%s", grepLines(s.log(), "truncating"))
	}
}

// verdict is a bounded structured reply: random weights under a grammar end
// well within the reply budget.
type verdict struct {
	Verdict string `json:"verdict" jsonschema:"enum=pass,enum=fail"`
	Reason  string `json:"reason" jsonschema:"maxLength=12"`
	Score   int    `json:"score" jsonschema:"minimum=0,maximum=9"`
}

// routerEmbedder adapts the router's embedding role to rag.Embedder, as the
// workflow does (nodes.ChooseEmbedder): the dimension is learned from the
// first answer.
type routerEmbedder struct {
	r    *Router
	name string
	mu   sync.Mutex
	dims int
}

func (e *routerEmbedder) Name() string { return e.name }

func (e *routerEmbedder) Dimensions() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dims
}

func (e *routerEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := e.r.Embed(ctx, texts)
	if err == nil && len(vecs) > 0 {
		e.mu.Lock()
		e.dims = len(vecs[0])
		e.mu.Unlock()
	}
	return vecs, err
}

func jsonEqual(t *testing.T, got any, want json.RawMessage) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(got, w)
}

func vectorNorm(v []any) float64 {
	var sum float64
	for _, x := range v {
		f, _ := x.(float64)
		sum += f * f
	}
	return math.Sqrt(sum)
}

func grepLines(text string, words ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
