package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

func TestOllamaChatStreamsAndCountsTokens(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "qwen2.5-coder:14b", ContextLength: 32768}))
	defer srv.Close()
	srv.Script(llmtest.Step{Contains: "count to three", Reply: llmtest.Reply{
		Content: "one two three", PromptTokens: 31, CompletionTokens: 3, EvalDuration: 300 * time.Millisecond}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "qwen2.5-coder:14b")}})

	resp, err := r.Chat(context.Background(), Request{Role: "primary", Label: "task_planner", Messages: userMsg("please count to three")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "one two three" {
		t.Errorf("content %q", resp.Content)
	}
	if resp.Usage.PromptTokens != 31 || resp.Usage.CompletionTokens != 3 || resp.Usage.Calls != 1 {
		t.Errorf("usage %+v", resp.Usage)
	}
	if got := resp.Usage.TokensPerSecond(); got < 9.9 || got > 10.1 {
		t.Errorf("tokens/s = %v, want 10 (3 tokens in 300ms)", got)
	}
	if resp.Provider != ProviderOllama || resp.Model != "qwen2.5-coder:14b" || resp.DoneReason != "stop" {
		t.Errorf("resp %+v", resp)
	}
	calls := srv.ChatCalls()
	if len(calls) != 1 || !calls[0].Stream {
		t.Fatalf("calls %+v", calls)
	}
	if string(calls[0].KeepAlive) != `"30m0s"` {
		t.Errorf("keep_alive %s, want the default 30m", calls[0].KeepAlive)
	}
	if calls[0].NumCtx != 4096 || calls[0].MaxTokens != 2048 {
		t.Errorf("num_ctx %d num_predict %d, want 4096 (a small prompt + 2048 reply, rounded up) and 2048", calls[0].NumCtx, calls[0].MaxTokens)
	}
	if u := r.Usage()["primary"]; u.Calls != 1 || u.PromptTokens != 31 {
		t.Errorf("role usage %+v", u)
	}
	if u := r.UsageByLabel()["task_planner"]; u.CompletionTokens != 3 {
		t.Errorf("label usage %+v", u)
	}
}

func TestOllamaNonStreamingReply(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: "whole", DoneReason: "length"}})
	spec := ollamaRole(srv, "m")
	spec.NoStream = true
	spec.KeepAlive = "-1"
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}})
	resp, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "whole" || resp.DoneReason != "length" {
		t.Errorf("resp %+v", resp)
	}
	c := srv.ChatCalls()[0]
	if c.Stream || string(c.KeepAlive) != "-1" {
		t.Errorf("stream %v keep_alive %s", c.Stream, c.KeepAlive)
	}
}

func TestOllamaSendsSchemaToolsTemperatureAndOptions(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)}}}})
	zero := 0.0
	spec := ollamaRole(srv, "m")
	spec.Options = map[string]any{"top_k": 20}
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}})
	tools := []Tool{{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
	msgs := []Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "look"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}}},
		{Role: "tool", ToolCallID: "c1", Content: "package a"},
	}
	resp, err := r.Chat(context.Background(), Request{Role: "primary", Messages: msgs, Tools: tools, Temperature: &zero, MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "read_file" || string(resp.ToolCalls[0].Arguments) != `{"path":"main.go"}` {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
	c := srv.ChatCalls()[0]
	if len(c.Tools) != 1 || c.Tools[0].Name != "read_file" || !strings.Contains(string(c.Tools[0].Parameters), `"path"`) {
		t.Errorf("tools sent %+v", c.Tools)
	}
	if c.Temperature == nil || *c.Temperature != 0 || c.Options["top_k"] != float64(20) || c.MaxTokens != 100 {
		t.Errorf("options %v", c.Options)
	}
	if len(c.Messages) != 4 || c.Messages[2].ToolCalls[0].Name != "read_file" || c.Messages[3].Role != "tool" {
		t.Errorf("messages %+v", c.Messages)
	}
	if !strings.Contains(string(c.Body), `"tool_name":"read_file"`) {
		t.Errorf("tool result should carry tool_name: %s", c.Body)
	}
}

func TestOllamaNumCtxPolicy(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "small", ContextLength: 8192}))
	defer srv.Close()
	srv.SetDefault(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "ok"} })
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "small")}})
	ctx := context.Background()

	big := strings.Repeat("x", 3*4000) // ~4000 tokens: 4000+2048 → 8192
	if _, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(big)}); err != nil {
		t.Fatal(err)
	}
	// A small prompt afterwards keeps the loaded window: no reload.
	if _, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("small")}); err != nil {
		t.Fatal(err)
	}
	calls := srv.ChatCalls()
	if calls[0].NumCtx != 8192 || calls[1].NumCtx != 8192 {
		t.Errorf("num_ctx %d then %d, want 8192 both (rounded up, then sticky)", calls[0].NumCtx, calls[1].NumCtx)
	}
	// /api/show is read once per model.
	shows := 0
	for _, c := range srv.Calls() {
		if strings.HasSuffix(c.Path, "/api/show") {
			shows++
		}
	}
	if shows != 1 {
		t.Errorf("/api/show called %d times, want 1", shows)
	}

	// Too large for the model's 8192: refused before sending, with numbers.
	huge := strings.Repeat("y", 3*9000)
	_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(huge)})
	e := asError(t, err)
	if e.Kind != KindContextTooLarge || e.Window != 8192 || e.PromptTokens < 9000 || e.Retriable {
		t.Errorf("error %+v", e)
	}
	if !strings.Contains(e.Error(), "8192") {
		t.Errorf("message lacks the window: %v", e)
	}
	if n := len(srv.ChatCalls()); n != 2 {
		t.Errorf("the over-long prompt reached the server (%d chat calls)", n)
	}
}

func TestSizeWindow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                                           string
		prompt, reply, forced, userMax, modelMax, last int
		want                                           window
		tooLarge                                       bool
	}{
		{"a small prompt gets the 2048 minimum", 100, 500, 0, 0, 32768, 0, window{2048, 500}, false},
		{"rounds up to a power of two", 3000, 2048, 0, 0, 32768, 0, window{8192, 2048}, false},
		{"keeps a larger loaded window", 100, 500, 0, 0, 32768, 16384, window{16384, 500}, false},
		{"caps at the model maximum", 5000, 2048, 0, 0, 7500, 0, window{7500, 2048}, false},
		{"shrinks the reply to fit", 3500, 2048, 0, 0, 4096, 0, window{4096, 596}, false},
		{"refuses when even a quarter reply cannot fit", 3900, 2048, 0, 0, 4096, 0, window{}, true},
		{"user cap below the model maximum", 3000, 1000, 0, 4096, 32768, 0, window{4096, 1000}, false},
		{"forced window", 100, 500, 6000, 0, 32768, 0, window{6000, 500}, false},
		{"forced window clamped to the maximum", 100, 500, 64000, 0, 32768, 0, window{32768, 500}, false},
		{"forced window too small", 7000, 2048, 4096, 0, 32768, 0, window{}, true},
		{"unknown maximum trusts the estimate", 50000, 2048, 0, 0, 0, 0, window{65536, 2048}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := sizeWindow(c.prompt, c.reply, c.forced, c.userMax, c.modelMax, c.last)
			if c.tooLarge {
				if err == nil || err.Kind != KindContextTooLarge {
					t.Fatalf("want ContextTooLarge, got %+v %v", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v %v, want %+v", got, err, c.want)
			}
		})
	}
}

func TestOllamaServerTruncationIsAnError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	// The server says it evaluated the whole window: it cut the prompt.
	srv.Script(llmtest.Step{Respond: func(c llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Content: "confused", PromptTokens: c.NumCtx}
	}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	_, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("hi")})
	if e := asError(t, err); e.Kind != KindContextTooLarge || !strings.Contains(e.Error(), "truncated") {
		t.Fatalf("error %v", e)
	}
}

func TestOllamaGrowsTheWindowWhenTheServerCutsThePrompt(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "m", ContextLength: 16384}))
	defer srv.Close()
	// A tokenizer that needs 5000 tokens where lemmings estimated far fewer:
	// every window below 5000 comes back full.
	srv.SetDefault(func(c llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Content: "ok", PromptTokens: min(c.NumCtx, 5000), CompletionTokens: 3}
	})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	resp, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("short to the estimate")})
	if err != nil {
		t.Fatal(err)
	}
	calls := srv.ChatCalls()
	if len(calls) != 2 || calls[0].NumCtx != 4096 || calls[1].NumCtx != 16384 || resp.NumCtx != 16384 {
		t.Fatalf("windows sent %d then %d, resp %d", calls[0].NumCtx, calls[1].NumCtx, resp.NumCtx)
	}
	if resp.Usage.Calls != 2 || resp.Usage.PromptTokens != 4096+5000 {
		t.Errorf("both calls' tokens count: %+v", resp.Usage)
	}
	// A forced window is never grown.
	spec := ollamaRole(srv, "m")
	spec.NumCtx = 4096
	r2, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}})
	_, err = r2.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("x")})
	if e := asError(t, err); e.Kind != KindContextTooLarge || e.Window != 4096 {
		t.Errorf("forced window: %v", e)
	}
}

func TestOllamaFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("refused connection retries then says how to start ollama", func(t *testing.T) {
		t.Parallel()
		r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": {Provider: ProviderOllama, Model: "m", BaseURL: closedPortURL(t)}}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		e := asError(t, err)
		if e.Kind != KindUnavailable || !strings.Contains(e.Hint, "ollama serve") || !strings.Contains(e.Hint, "OLLAMA_HOST") {
			t.Errorf("error %v", e)
		}
		if resp.Attempts != 4 || len(clk.Sleeps()) != 3 {
			t.Errorf("attempts %d sleeps %v, want 4 attempts and 3 backoffs", resp.Attempts, clk.Sleeps())
		}
		for i, d := range clk.Sleeps() {
			base := time.Second << i
			if d < base/2 || d > base {
				t.Errorf("backoff %d = %v, want within [%v, %v]", i+1, d, base/2, base)
			}
		}
	})

	t.Run("500 then 200 is retried", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(
			llmtest.Step{Name: "fail", Reply: llmtest.Reply{Status: 500, Content: "runner crashed"}},
			llmtest.Step{Name: "ok", Reply: llmtest.Reply{Content: "fine"}},
		)
		r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if err != nil || resp.Content != "fine" || resp.Attempts != 2 || len(clk.Sleeps()) != 1 {
			t.Fatalf("resp %+v err %v sleeps %v", resp, err, clk.Sleeps())
		}
	})

	t.Run("model not pulled is not retried and says ollama pull", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "other"}))
		defer srv.Close()
		r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "qwen2.5-coder:14b")}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		e := asError(t, err)
		if e.Kind != KindModelNotFound || e.Status != 404 || e.Retriable || e.Hint != "run `ollama pull qwen2.5-coder:14b`" {
			t.Errorf("error %v", e)
		}
		if len(clk.Sleeps()) != 0 {
			t.Errorf("a 404 was retried")
		}
	})

	t.Run("429 honours Retry-After", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(
			llmtest.Step{Reply: llmtest.Reply{Status: 429, RetryAfter: 7 * time.Second}},
			llmtest.Step{Reply: llmtest.Reply{Content: "after the wait"}},
		)
		r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if err != nil || resp.Content != "after the wait" {
			t.Fatalf("resp %+v err %v", resp, err)
		}
		s := clk.Sleeps()
		if len(s) != 1 || s[0] < 7*time.Second || s[0] > 7700*time.Millisecond {
			t.Errorf("sleeps %v, want one of 7s (+ up to 10%%)", s)
		}
	})

	t.Run("stream stopped after content without done:true is a runaway, not retried", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "same same same", NoDone: true}})
		r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}, Retry: RetryPolicy{MaxAttempts: 4}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindRunaway || !strings.Contains(e.Error(), "done:true") || e.Retriable {
			t.Errorf("error %v", e)
		}
		if resp.Attempts != 1 || len(clk.Sleeps()) != 0 {
			t.Errorf("attempts %d, sleeps %v: a runaway reply is not a network fault to back off from", resp.Attempts, clk.Sleeps())
		}
	})

	t.Run("stream without done:true and without content is a StreamCut", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "", NoDone: true}})
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}, Retry: RetryPolicy{MaxAttempts: 2}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindStreamCut {
			t.Errorf("error %v", e)
		}
		if resp.Attempts != 2 {
			t.Errorf("attempts %d, want 2 (an empty cut stream is retried)", resp.Attempts)
		}
	})

	t.Run("non-streaming reply with done:false is a runaway", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "aaaa", NoDone: true}})
		spec := ollamaRole(srv, "m")
		spec.NoStream = true
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}, Retry: RetryPolicy{MaxAttempts: 1}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindRunaway {
			t.Errorf("error %v", e)
		}
	})

	t.Run("connection cut mid-stream is a StreamCut", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "a b c d e f", CutAfterChunks: 2}})
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}, Retry: RetryPolicy{MaxAttempts: 1}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindStreamCut {
			t.Errorf("error %v", e)
		}
		if resp.Content != "" {
			t.Errorf("a cut reply must not be returned as content: %q", resp.Content)
		}
	})

	t.Run("error line mid-stream is a server error", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "partial", MidStreamError: "llama runner process has terminated"}})
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}, Retry: RetryPolicy{MaxAttempts: 1}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindServer || !e.Retriable || !strings.Contains(e.Error(), "runner process") {
			t.Errorf("error %v", e)
		}
	})

	t.Run("malformed body is a bad response", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Body: "<html>proxy error</html>", ContentType: "text/html"}})
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}, Retry: RetryPolicy{MaxAttempts: 1}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindBadResponse {
			t.Errorf("error %v", e)
		}
	})

	t.Run("a timeout is not retried: the wait would only double", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(
			llmtest.Step{Reply: llmtest.Reply{Content: "late", Latency: 5 * time.Second}},
			llmtest.Step{Reply: llmtest.Reply{Content: "quick"}},
		)
		spec := ollamaRole(srv, "m")
		// Wide enough that the request reaches the server on a loaded machine.
		spec.Timeout = 600 * time.Millisecond
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindTimeout || resp.Attempts != 1 || len(srv.ChatCalls()) != 1 {
			t.Fatalf("resp %+v err %v after %d requests", resp, err, len(srv.ChatCalls()))
		}
	})

	t.Run("a reply that keeps streaming outlives the timeout: it bounds silence, not length", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		words := strings.Repeat("word ", 12)
		// Chunks 100 ms apart for 1.2 s against a 600 ms timeout: the gaps stay far below it on
		// a loaded machine, the whole reply well above it.
		srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: words, ChunkDelay: 100 * time.Millisecond}})
		spec := ollamaRole(srv, "m")
		spec.Timeout = 600 * time.Millisecond
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}})
		start := time.Now()
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if err != nil || resp.Content != words || time.Since(start) < 900*time.Millisecond {
			t.Fatalf("resp %q err %v after %s", resp.Content, err, time.Since(start))
		}
	})

	t.Run("timeout on every attempt is a Timeout error", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "late", Latency: 2 * time.Second}})
		spec := ollamaRole(srv, "m")
		spec.Timeout = 50 * time.Millisecond
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}, Retry: RetryPolicy{MaxAttempts: 2}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		e := asError(t, err)
		if e.Kind != KindTimeout || !strings.Contains(e.Hint, "timeout of role primary") || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v", e)
		}
	})

	t.Run("caller cancellation is Canceled and not retried", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "late", Latency: 2 * time.Second}})
		r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := r.Chat(cctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindCanceled || len(clk.Sleeps()) != 0 {
			t.Errorf("error %v sleeps %v", e, clk.Sleeps())
		}
	})

	t.Run("a wrongly typed option is a 500 that is reported, not retried", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "hello"}})
		spec := ollamaRole(srv, "m")
		spec.Options = map[string]any{"top_k": "lots"}
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}, Retry: RetryPolicy{MaxAttempts: 3}})
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")})
		if e := asError(t, err); e.Kind != KindBadRequest || e.Status != 500 || e.Retriable {
			t.Errorf("error %v (kind %s, status %d)", e, e.Kind, e.Status)
		}
		if n := len(srv.ChatCalls()); n != 1 {
			t.Errorf("%d calls: a refused option must not be retried", n)
		}
	})
}

func TestOllamaEmbedBatches(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithEmbeddingDim(16))
	defer srv.Close()
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"embedding": ollamaRole(srv, "nomic-embed-text")}})
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = strings.Repeat("t", i+1)
	}
	vecs, err := r.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 150 || len(vecs[0]) != 16 {
		t.Fatalf("got %d vectors of %d", len(vecs), len(vecs[0]))
	}
	for i, v := range vecs {
		want := llmtest.Vector(texts[i], 16)
		if v[0] != want[0] || v[15] != want[15] {
			t.Fatalf("vector %d out of order", i)
		}
	}
	var sizes []int
	for _, c := range srv.Calls() {
		if strings.HasSuffix(c.Path, "/api/embed") {
			sizes = append(sizes, len(c.Input))
		}
	}
	if len(sizes) != 3 || sizes[0] != 64 || sizes[1] != 64 || sizes[2] != 22 {
		t.Errorf("batches %v, want [64 64 22]", sizes)
	}
	if u := r.Usage()["embedding"]; u.Calls != 3 {
		t.Errorf("embedding usage %+v", u)
	}
}

func TestCheckOllama(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "qwen2.5-coder:14b"}))
	defer srv.Close()
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{
		"primary":    ollamaRole(srv, "qwen2.5-coder:14b"),
		"summarizer": ollamaRole(srv, "llama3.2:3b"),
		"offline":    {Provider: ProviderOllama, Model: "m", BaseURL: closedPortURL(t)},
	}})
	if err := r.Check(ctx, "primary"); err != nil {
		t.Errorf("primary: %v", err)
	}
	if e := asError(t, r.Check(ctx, "summarizer")); e.Kind != KindModelNotFound || e.Hint != "run `ollama pull llama3.2:3b`" {
		t.Errorf("summarizer: %v", e)
	}
	if e := asError(t, r.Check(ctx, "offline")); e.Kind != KindUnavailable || !strings.Contains(e.Hint, "ollama serve") {
		t.Errorf("offline: %v", e)
	}
	if e := asError(t, r.Check(ctx, "nosuchrole")); e.Kind != KindBadRequest || !strings.Contains(e.Hint, "offline, primary, summarizer") {
		t.Errorf("unknown role: %v", e)
	}
}
