package llm

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replay serves recorded bodies: path suffix → file, status, content type.
// Ollama's /api/show is answered so the router can size the window.
type replay map[string]struct {
	file   string
	status int
	ctype  string
	body   string // instead of file
}

func (rp replay) serve(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for suffix, e := range rp {
			if !strings.HasSuffix(r.URL.Path, suffix) {
				continue
			}
			body := []byte(e.body)
			if e.file != "" {
				var err error
				if body, err = os.ReadFile(filepath.Join("testdata", "cassettes", e.file)); err != nil {
					t.Errorf("cassette: %v", err)
				}
			}
			w.Header().Set("Content-Type", e.ctype)
			w.WriteHeader(e.status)
			_, _ = w.Write(body)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/api/show") {
			_, _ = w.Write([]byte(`{"model_info":{"general.architecture":"llama","llama.context_length":131072},"capabilities":["completion","tools"]}`))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const (
	ndjson = "application/x-ndjson"
	jsonCT = "application/json; charset=utf-8"
	sse    = "text/event-stream"
)

// cassetteRouter is a router whose one role "r" points at the replay.
func cassetteRouter(t *testing.T, provider string, base string, noStream bool) *Router {
	t.Helper()
	spec := RoleSpec{Provider: provider, Model: "recorded", BaseURL: base, NoStream: noStream, APIKey: "k"}
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"r": spec, "embedding": spec}, Retry: RetryPolicy{MaxAttempts: 1}})
	return r
}

// covered lists every cassette the tests below decode; TestCassettes fails
// when a cassette appears that nothing decodes.
var covered = map[string]bool{}

func cassette(name string) string { covered[name] = true; return name }

// TestCassettes decodes every recorded body through the client code lemmings
// uses (Router → ollama/api or go-openai), served from a loopback server.
func TestCassettes(t *testing.T) {
	t.Run("ollama", cassettesOllama)
	t.Run("openai and openrouter", cassettesOpenAI)
	everyCassetteIsCovered(t)
}

func cassettesOllama(t *testing.T) {
	ctx := context.Background()
	chat := func(t *testing.T, file, ctype string, noStream bool, status int) (Response, error) {
		srv := replay{"/api/chat": {file: cassette(file), status: status, ctype: ctype}}.serve(t)
		return cassetteRouter(t, ProviderOllama, srv.URL, noStream).Chat(ctx, Request{Role: "r", Messages: userMsg("x"), Tools: testTools})
	}
	t.Run("stream plain", func(t *testing.T) {
		resp, err := chat(t, "ollama/chat_stream_plain.ndjson", ndjson, false, 200)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(resp.Content, "Okay, here we go!\n\n1, 2, 3, 4, 5") || resp.DoneReason != "stop" {
			t.Errorf("content %q done %q", resp.Content, resp.DoneReason)
		}
		if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 || resp.Usage.GenDuration == 0 {
			t.Errorf("usage %+v", resp.Usage)
		}
	})
	t.Run("stream format json", func(t *testing.T) {
		srv := replay{"/api/chat": {file: cassette("ollama/chat_stream_format_json.ndjson"), status: 200, ctype: ndjson}}.serve(t)
		type answer struct {
			Answer string `json:"answer"`
		}
		got, resp, err := Structured[answer](ctx, cassetteRouter(t, ProviderOllama, srv.URL, false), Request{Role: "r", Messages: userMsg("x")})
		if err != nil || got.Answer != "600" || resp.Usage.PromptTokens != 25 || resp.Usage.CompletionTokens != 9 {
			t.Errorf("got %+v %+v %v", got, resp.Usage, err)
		}
	})
	t.Run("non-stream format schema", func(t *testing.T) {
		resp, err := chat(t, "ollama/doc_chat_nonstream_format_schema.json", jsonCT, true, 200)
		if err != nil || resp.Content != `{"age": 22, "available": false}` || resp.Usage.PromptTokens != 34 || resp.Usage.CompletionTokens != 12 {
			t.Errorf("resp %+v err %v", resp, err)
		}
	})
	for _, c := range []struct {
		file, ctype string
		noStream    bool
	}{{"ollama/doc_chat_nonstream_tools.json", jsonCT, true}, {"ollama/doc_chat_stream_tools.ndjson", ndjson, false}} {
		t.Run(c.file, func(t *testing.T) {
			resp, err := chat(t, c.file, c.ctype, c.noStream, 200)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "get_weather" || string(resp.ToolCalls[0].Arguments) != `{"city":"Tokyo"}` || resp.ToolCalls[0].ID == "" {
				t.Errorf("tool calls %+v", resp.ToolCalls)
			}
		})
	}
	t.Run("404 model not found", func(t *testing.T) {
		_, err := chat(t, "ollama/real_error_model_not_found.json", jsonCT, false, 404)
		if e := asError(t, err); e.Kind != KindModelNotFound || !strings.Contains(e.Error(), "model 'nope' not found") || e.Hint != "run `ollama pull recorded`" {
			t.Errorf("error %v", e)
		}
	})
	t.Run("embed", func(t *testing.T) {
		srv := replay{"/api/embed": {file: cassette("ollama/embed.json"), status: 200, ctype: jsonCT}}.serve(t)
		vecs, err := cassetteRouter(t, ProviderOllama, srv.URL, false).Embed(ctx, []string{"Hello world"})
		if err != nil || len(vecs) != 1 || len(vecs[0]) != 768 || vecs[0][0] != -0.006746773 {
			t.Errorf("vecs %d err %v", len(vecs), err)
		}
	})
	t.Run("embed 404", func(t *testing.T) {
		srv := replay{"/api/embed": {file: cassette("ollama/real_error_embed_model_not_found.json"), status: 404, ctype: jsonCT}}.serve(t)
		_, err := cassetteRouter(t, ProviderOllama, srv.URL, false).Embed(ctx, []string{"x"})
		var e *Error
		if !asErrorAs(err, &e) || e.Kind != KindModelNotFound || !strings.Contains(e.Error(), "try pulling it first") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("version for Check", func(t *testing.T) {
		srv := replay{"/api/version": {file: cassette("ollama/real_version.json"), status: 200, ctype: jsonCT}}.serve(t)
		if err := cassetteRouter(t, ProviderOllama, srv.URL, false).Check(ctx, "r"); err != nil {
			t.Errorf("check: %v", err)
		}
	})
}

func asErrorAs(err error, target **Error) bool {
	for err != nil {
		if e, ok := err.(*Error); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

func cassettesOpenAI(t *testing.T) {
	ctx := context.Background()
	chat := func(t *testing.T, provider, file, ctype string, noStream bool, status int) (Response, error) {
		srv := replay{"/chat/completions": {file: cassette(file), status: status, ctype: ctype}}.serve(t)
		return cassetteRouter(t, provider, srv.URL+"/v1", noStream).Chat(ctx, Request{Role: "r", Messages: userMsg("x"), Tools: testTools})
	}
	t.Run("openai tool calls and usage", func(t *testing.T) {
		resp, err := chat(t, ProviderOpenAI, "openai/chat_tool_calls_usage.json", "application/json", true, 200)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "getCurrentWeather" || string(resp.ToolCalls[0].Arguments) != `{"location":"Boston"}` ||
			resp.ToolCalls[0].ID != "call_olc8qHf1RDItRqwuEBNjsu3B" || resp.Usage.PromptTokens != 81 || resp.Usage.CompletionTokens != 14 || resp.DoneReason != "tool_calls" {
			t.Errorf("resp %+v", resp)
		}
	})
	t.Run("openai json schema", func(t *testing.T) {
		resp, err := chat(t, ProviderOpenAI, "openai/chat_json_schema.json", "application/json", true, 200)
		if err != nil || resp.Content != `{"final_answer":"4"}` || resp.Model != "gpt-4o-2024-08-06" {
			t.Errorf("resp %+v err %v", resp, err)
		}
	})
	t.Run("openrouter stream with processing comment and cost", func(t *testing.T) {
		resp, err := chat(t, ProviderOpenRouter, "openrouter/chat_stream_usage_cost.sse", sse, false, 200)
		if err != nil || resp.Content != "OK" || resp.Usage.PromptTokens != 612 || resp.Usage.CompletionTokens != 2 || resp.DoneReason != "stop" {
			t.Errorf("resp %+v err %v", resp, err)
		}
	})
	t.Run("openrouter non-stream cost", func(t *testing.T) {
		resp, err := chat(t, ProviderOpenRouter, "openrouter/chat_nonstream_usage_cost.json", "application/json", true, 200)
		if err != nil || !strings.HasPrefix(resp.Content, "I'm Grok") || resp.Usage.CostUSD != 0.00341325 || resp.Usage.PromptTokens != 687 {
			t.Errorf("resp %+v err %v", resp.Usage, err)
		}
	})
	t.Run("openrouter tool calls", func(t *testing.T) {
		srv := replay{"/chat/completions": {file: cassette("openrouter/chat_tool_calls.json"), status: 200, ctype: "application/json"}}.serve(t)
		r := cassetteRouter(t, ProviderOpenRouter, srv.URL+"/v1", true)
		resp, err := r.Chat(ctx, Request{Role: "r", Messages: userMsg("x"), Tools: []Tool{{Name: "divide"}}})
		if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "divide" ||
			string(resp.ToolCalls[0].Arguments) != `{"numerator": 123, "denominator": 456, "on_inf": "infinity"}` {
			t.Errorf("resp %+v err %v", resp.ToolCalls, err)
		}
	})
	t.Run("openrouter mid-stream error", func(t *testing.T) {
		_, err := chat(t, ProviderOpenRouter, "openrouter/doc_midstream_error.sse", sse, false, 200)
		if e := asError(t, err); e.Kind != KindServer || !e.Retriable || !strings.Contains(e.Error(), "ExampleProvider") && !strings.Contains(e.Error(), "Provider disconnected unexpectedly") {
			t.Errorf("error %v", e)
		}
	})
	t.Run("openrouter usage accounting chunk", func(t *testing.T) {
		chunk, err := os.ReadFile(filepath.Join("testdata", "cassettes", cassette("openrouter/doc_usage_accounting_chunk.json")))
		if err != nil {
			t.Fatal(err)
		}
		body := `data: {"id":"g","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` +
			"\n\ndata: " + strings.TrimSpace(string(chunk)) + "\n\ndata: [DONE]\n\n"
		srv := replay{"/chat/completions": {body: body, status: 200, ctype: sse}}.serve(t)
		resp, err := cassetteRouter(t, ProviderOpenRouter, srv.URL+"/v1", false).Chat(ctx, Request{Role: "r", Messages: userMsg("x")})
		if err != nil || resp.Usage.CostUSD != 0.95 || resp.Usage.PromptTokens != 194 || resp.Usage.CompletionTokens != 2 || resp.Content != "hi" {
			t.Errorf("resp %+v err %v", resp, err)
		}
	})
	for _, c := range []struct {
		file   string
		status int
		kind   ErrorKind
		text   string
	}{
		{"openrouter/error_401_no_auth.json", 401, KindAuth, "No auth credentials found"},
		{"openrouter/error_401_user_not_found.json", 401, KindAuth, "User not found."},
		{"openrouter/error_402_credits.json", 402, KindQuota, "requires more credits"},
		{"openrouter/error_404_no_endpoints.json", 404, KindModelNotFound, "No endpoints found for google/gemini-2.5-flash:free."},
		{"openrouter/error_429_rate_limit.json", 429, KindRateLimited, "limited to 1 requests per minute"},
		{"openrouter/error_429_provider_upstream.json", 429, KindRateLimited, "BaseTen: Provider returned error (z-ai/glm-5.3-flash is temporarily rate-limited upstream"},
	} {
		t.Run(c.file, func(t *testing.T) {
			srv := replay{"/chat/completions": {file: cassette(c.file), status: c.status, ctype: "application/json"}}.serve(t)
			_, err := cassetteRouter(t, ProviderOpenRouter, srv.URL+"/v1", false).Chat(ctx, Request{Role: "r", Messages: userMsg("x")})
			e := asError(t, err)
			if e.Kind != c.kind || e.Status != c.status || !strings.Contains(e.Error(), c.text) {
				t.Errorf("error %v", e)
			}
		})
	}
}

func everyCassetteIsCovered(t *testing.T) {
	err := filepath.WalkDir(filepath.Join("testdata", "cassettes"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".request.json") || strings.HasSuffix(p, "README.md") {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", "cassettes"), p)
		rel = filepath.ToSlash(rel)
		if !covered[rel] && !shapeOnly[rel] {
			t.Errorf("cassette %s is not decoded by any test", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// shapeOnly cassettes are not on a lemmings code path; the shape test
// compares the scripted server's bodies with them.
var shapeOnly = map[string]bool{"ollama/real_tags.json": true}

// readCassette decodes a cassette as generic JSON.
func readCassette(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cassettes", name))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}
