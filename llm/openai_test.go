package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

func TestOpenRouterStreamWithCostAndAttribution(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithProcessingComments())
	defer srv.Close()
	srv.Script(llmtest.Step{API: llmtest.OpenAI, Model: "anthropic/claude-sonnet-4", Contains: "review",
		Reply: llmtest.Reply{Content: "Looks fine overall.", PromptTokens: 612, CompletionTokens: 5, Cost: 0.00341325}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": openrouterRole(srv, "anthropic/claude-sonnet-4")},
		AppName: "lemmings", AppURL: "https://lemmings.example"})
	resp, err := r.Chat(context.Background(), Request{Role: "supervisor", Label: "code_style", Messages: userMsg("please review"), MaxTokens: 500})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Looks fine overall." || resp.DoneReason != "stop" {
		t.Errorf("resp %+v", resp)
	}
	if resp.Usage.PromptTokens != 612 || resp.Usage.CompletionTokens != 5 || resp.Usage.CostUSD != 0.00341325 {
		t.Errorf("usage %+v (cost must survive go-openai)", resp.Usage)
	}
	if u := r.UsageByLabel()["code_style"]; u.CostUSD != 0.00341325 {
		t.Errorf("label usage %+v", u)
	}
	c := srv.ChatCalls()[0]
	if c.Header.Get("HTTP-Referer") != "https://lemmings.example" || c.Header.Get("X-Title") != "lemmings" {
		t.Errorf("attribution headers %v", c.Header)
	}
	if !strings.HasPrefix(c.Header.Get("Authorization"), "Bearer sk-or-v1-") {
		t.Errorf("authorization %q", c.Header.Get("Authorization"))
	}
	if c.Path != "/api/v1/chat/completions" || !c.Stream || c.MaxTokens != 500 {
		t.Errorf("call %s stream=%v max=%d", c.Path, c.Stream, c.MaxTokens)
	}
	if !strings.Contains(string(c.Body), `"include_usage":true`) {
		t.Errorf("stream_options.include_usage not asked: %s", c.Body)
	}
}

func TestOpenAICompatibleNonStreamAndSchema(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: `{"ok":true}`, Cost: 0.5}})
	zero := 0.0
	spec := RoleSpec{Provider: ProviderOpenAI, Model: "local-vllm", BaseURL: srv.URL() + "/v1", NoStream: true, Temperature: &zero}
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}})
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	resp, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("x"), Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"ok":true}` || resp.Usage.CostUSD != 0.5 {
		t.Errorf("resp %+v", resp)
	}
	c := srv.ChatCalls()[0]
	if c.Stream || string(c.Format) != string(schema) {
		t.Errorf("stream %v format %s", c.Stream, c.Format)
	}
	if !strings.Contains(string(c.Body), `"type":"json_schema"`) {
		t.Errorf("response_format not json_schema: %s", c.Body)
	}
	if c.Temperature == nil || *c.Temperature > 1e-30 {
		t.Errorf("temperature 0 must be sent, got %v", c.Temperature)
	}
	if c.Header.Get("X-Title") != "" {
		t.Errorf("attribution headers go to OpenRouter only")
	}
	// A server on loopback counts as local: it takes the local semaphore.
	if !r.roles["primary"].isLocal {
		t.Errorf("loopback OpenAI-compatible server should be local")
	}
}

func TestOpenAIToolCallsStreamedInPieces(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{true, false} {
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path":"cmd/main.go"}`)},
			{ID: "call_b", Name: "grep", Arguments: json.RawMessage(`{"pattern":"func main","path":"**/*.go"}`)},
		}}})
		spec := openrouterRole(srv, "m")
		spec.NoStream = !stream
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": spec}})
		tools := []Tool{{Name: "read_file"}, {Name: "grep"}}
		resp, err := r.Chat(context.Background(), Request{Role: "supervisor", Messages: userMsg("x"), Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].ID != "call_a" || string(resp.ToolCalls[1].Arguments) != `{"pattern":"func main","path":"**/*.go"}` {
			t.Errorf("stream=%v tool calls %+v", stream, resp.ToolCalls)
		}
		if resp.DoneReason != "tool_calls" {
			t.Errorf("done reason %q", resp.DoneReason)
		}
		if c := srv.ChatCalls()[0]; len(c.Tools) != 2 || string(c.Tools[0].Parameters) != `{"type":"object","properties":{}}` {
			t.Errorf("tools sent %+v", c.Tools)
		}
	}
}

func TestOpenRouterFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name      string
		reply     llmtest.Reply
		kind      ErrorKind
		hint      string
		retried   bool
		errSubstr string
	}{
		{"401 bad key says to set OPENROUTER_API_KEY", llmtest.Reply{Status: 401, Body: `{"error":{"message":"No auth credentials found","code":401}}`},
			KindAuth, "OPENROUTER_API_KEY", false, "No auth credentials"},
		{"402 says to top up credit", llmtest.Reply{Status: 402, Body: `{"error":{"message":"This request requires more credits","code":402,"metadata":{"provider_name":null}}}`},
			KindQuota, "top up", false, "requires more credits"},
		{"404 unknown model", llmtest.Reply{Status: 404, Body: `{"error":{"code":404,"message":"No endpoints found for google/gemini-2.5-flash:free."}}`},
			KindModelNotFound, "model name", false, "No endpoints"},
		{"403 moderation is a bad request, not a key problem", llmtest.Reply{Status: 403, Body: `{"error":{"message":"Input was flagged by moderation","code":403,"metadata":{"reasons":["x"],"provider_name":"OpenAI"}}}`},
			KindBadRequest, "", false, "flagged"},
		{"400 bad request", llmtest.Reply{Status: 400, Content: "max_tokens too large"},
			KindBadRequest, "", false, "max_tokens"},
		{"429 upstream keeps provider metadata", llmtest.Reply{Status: 429, Body: `{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"glm is temporarily rate-limited upstream","provider_name":"BaseTen"}}}`},
			KindRateLimited, "rate-limiting", true, "BaseTen: Provider returned error (glm is temporarily rate-limited upstream)"},
		{"502 is retried", llmtest.Reply{Status: 502}, KindServer, "", true, "Bad Gateway"},
		{"mid-stream finish_reason error", llmtest.Reply{Content: "partial answer", MidStreamError: "Provider disconnected unexpectedly"},
			KindServer, "", true, "Provider disconnected unexpectedly"},
		{"stream without [DONE]", llmtest.Reply{Content: "almost", NoDone: true}, KindStreamCut, "", true, "[DONE]"},
		{"connection cut mid-stream", llmtest.Reply{Content: "a b c d", CutAfterChunks: 1}, KindStreamCut, "", true, ""},
		{"garbage body", llmtest.Reply{Body: "not json at all"}, KindBadResponse, "", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer()
			defer srv.Close()
			srv.Script(llmtest.Step{Times: -1, Reply: c.reply})
			r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": openrouterRole(srv, "m")}, Retry: RetryPolicy{MaxAttempts: 2}})
			resp, err := r.Chat(ctx, Request{Role: "supervisor", Messages: userMsg("x")})
			e := asError(t, err)
			if e.Kind != c.kind {
				t.Errorf("kind %s, want %s (%v)", e.Kind, c.kind, e)
			}
			if c.hint != "" && !strings.Contains(e.Hint, c.hint) {
				t.Errorf("hint %q lacks %q", e.Hint, c.hint)
			}
			if c.errSubstr != "" && !strings.Contains(e.Error(), c.errSubstr) {
				t.Errorf("error %q lacks %q", e.Error(), c.errSubstr)
			}
			wantAttempts := 1
			if c.retried {
				wantAttempts = 2
			}
			if resp.Attempts != wantAttempts || len(clk.Sleeps()) != wantAttempts-1 {
				t.Errorf("attempts %d sleeps %v, want %d attempts", resp.Attempts, clk.Sleeps(), wantAttempts)
			}
			if resp.Content != "" {
				t.Errorf("a failed call returned content %q", resp.Content)
			}
		})
	}
}

func TestOpenRouterRetryAfterTooLongFailsAtOnce(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Status: 429, RetryAfter: time.Hour}})
	r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": openrouterRole(srv, "m")}})
	_, err := r.Chat(context.Background(), Request{Role: "supervisor", Messages: userMsg("x")})
	e := asError(t, err)
	if e.Kind != KindRateLimited || e.RetryAfter != time.Hour || len(clk.Sleeps()) != 0 || !strings.Contains(e.Hint, "1h0m0s") {
		t.Errorf("error %v sleeps %v", e, clk.Sleeps())
	}
}

func TestOpenRouterWithoutKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	spec := openrouterRole(srv, "m")
	spec.APIKey = ""
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": spec}})
	_, err := r.Chat(context.Background(), Request{Role: "supervisor", Messages: userMsg("x")})
	if e := asError(t, err); e.Kind != KindAuth || !strings.Contains(e.Hint, "OPENROUTER_API_KEY") {
		t.Errorf("chat: %v", e)
	}
	if e := asError(t, r.Check(context.Background(), "supervisor")); e.Kind != KindAuth {
		t.Errorf("check: %v", e)
	}
	if len(srv.Calls()) != 0 {
		t.Errorf("no request may be sent without a key")
	}
}

func TestCheckOpenAICompatible(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "qwen-local"}))
	defer srv.Close()
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{
		"primary":    {Provider: ProviderOpenAI, Model: "qwen-local", BaseURL: srv.URL() + "/v1"},
		"summarizer": {Provider: ProviderOpenAI, Model: "missing", BaseURL: srv.URL() + "/v1"},
		"down":       {Provider: ProviderOpenAI, Model: "x", BaseURL: closedPortURL(t) + "/v1"},
		"supervisor": openrouterRole(srv, "any/model"),
	}})
	ctx := context.Background()
	if err := r.Check(ctx, "primary"); err != nil {
		t.Errorf("primary: %v", err)
	}
	if e := asError(t, r.Check(ctx, "summarizer")); e.Kind != KindModelNotFound {
		t.Errorf("summarizer: %v", e)
	}
	if e := asError(t, r.Check(ctx, "down")); e.Kind != KindUnavailable || !strings.Contains(e.Hint, "base_url") {
		t.Errorf("down: %v", e)
	}
	before := len(srv.Calls())
	if err := r.Check(ctx, "supervisor"); err != nil {
		t.Errorf("supervisor with a key: %v", err)
	}
	if len(srv.Calls()) != before {
		t.Errorf("checking OpenRouter must not spend a request")
	}
}

// An OpenAI-compatible Ollama lists "tiny:latest" for the model a user
// names "tiny": the check matches names as the server resolves them, and when
// none matches it names what the server does list.
func TestCheckOpenAICompatibleMatchesModelsAsTheServerResolvesThem(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "tiny:latest"}, llmtest.ModelInfo{Name: "qwen2.5-coder:14b"},
		llmtest.ModelInfo{Name: "hf.co/org/Model-GGUF:Q4_K_M"}))
	defer srv.Close()
	ctx := context.Background()
	check := func(model string) error {
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": {Provider: ProviderOpenAI, Model: model, BaseURL: srv.URL() + "/v1"}}})
		return r.Check(ctx, "supervisor")
	}
	for _, model := range []string{"tiny", "tiny:latest", "Tiny", "qwen2.5-coder:14b", "hf.co/org/Model-GGUF:Q4_K_M"} {
		if err := check(model); err != nil {
			t.Errorf("%s: %v", model, err)
		}
	}
	for _, model := range []string{"tiny:7b", "qwen2.5-coder", "qwen2.5-coder:7b", "hf.co/org/Model-GGUF", "tin"} {
		e := asError(t, check(model))
		if e.Kind != KindModelNotFound {
			t.Errorf("%s: %v", model, e)
			continue
		}
		for _, want := range []string{`none of them "` + model + `"`, "tiny:latest", "qwen2.5-coder:14b", "hf.co/org/Model-GGUF:Q4_K_M"} {
			if !strings.Contains(e.Error(), want) {
				t.Errorf("%s: %q lacks %q", model, e.Error(), want)
			}
		}
	}
}

func TestOpenAIEmbeddings(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithEmbeddingDim(8))
	defer srv.Close()
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"embedding": {Provider: ProviderOpenAI, Model: "text-embedding-3-small", BaseURL: srv.URL() + "/v1"}}})
	vecs, err := r.Embed(context.Background(), []string{"alpha", "beta"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || vecs[1][3] != llmtest.Vector("beta", 8)[3] {
		t.Errorf("vectors %v", vecs)
	}
}
