package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// Tests against a real Ollama server built here (make ollama) with tiny
// random-weight models: the words are noise, the wire behaviour is the real
// server's. They skip when the server binary is absent (see
// docs/testing-real-ollama.md).

type verdict struct {
	Verdict string `json:"verdict" jsonschema:"enum=pass,enum=fail"`
	Reason  string `json:"reason" jsonschema:"maxLength=12"`
	Score   int    `json:"score" jsonschema:"minimum=0,maximum=9"`
}

func realRouter(t *testing.T, s *realollama.Server, roles map[string]RoleSpec) *Router {
	t.Helper()
	for name, spec := range roles {
		spec.Provider, spec.BaseURL = ProviderOllama, s.URL
		if spec.Options == nil {
			spec.Options = map[string]any{"seed": 7}
		}
		roles[name] = spec
	}
	r, _ := newRouter(t, RouterConfig{Roles: roles, Retry: RetryPolicy{MaxAttempts: 2}})
	return r
}

func TestRealOllamaRouter(t *testing.T) {
	s := realollama.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := realRouter(t, s, map[string]RoleSpec{
		"primary":    {Model: s.Models.Chat, MaxTokens: 64},
		"notools":    {Model: s.Models.ChatNoTools, MaxTokens: 64},
		"embedding":  {Model: s.Models.Embed},
		"missing":    {Model: "qwen2.5-coder:14b"},
		"structured": {Model: s.Models.Chat, MaxTokens: 200},
	})

	t.Run("chat streams to done with the server's counts", func(t *testing.T) {
		resp, err := r.Chat(ctx, Request{Role: "primary", Label: "smoke", Messages: []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Say hello."}}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.DoneReason == "" || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 || resp.Usage.TokensPerSecond() <= 0 {
			t.Errorf("resp %+v", resp)
		}
		if resp.NumCtx != 2048 {
			t.Errorf("num_ctx %d, want the 2048 minimum for a short prompt", resp.NumCtx)
		}
	})

	t.Run("structured output from the grammar decodes and validates", func(t *testing.T) {
		got, resp, err := Structured[verdict](ctx, r, Request{Role: "structured", Messages: []Message{{Role: "user", Content: "Did the tests pass?"}}})
		if err != nil {
			t.Fatalf("%v (reply %q)", err, resp.Content)
		}
		if got.Verdict != "pass" && got.Verdict != "fail" || got.Score < 0 || got.Score > 9 {
			t.Errorf("got %+v", got)
		}
	})

	t.Run("a model without tools falls back to JSON actions", func(t *testing.T) {
		resp, err := r.Chat(ctx, Request{Role: "notools", Messages: []Message{{Role: "user", Content: "Read main.go"}}, Tools: testTools})
		if err != nil {
			t.Fatalf("the 400 should have switched to the fallback: %v", err)
		}
		if _, ok := r.noTools.Load(ProviderOllama + "|" + s.URL + "|" + s.Models.ChatNoTools); !ok {
			t.Errorf("the model was not remembered as tool-less (reply %q)", resp.Content)
		}
	})

	t.Run("a prompt longer than the model's window is refused before sending", func(t *testing.T) {
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("word ", 4000))})
		if e := asError(t, err); e.Kind != KindContextTooLarge || e.Window != 4096 {
			t.Errorf("error %v", e)
		}
	})

	t.Run("a prompt the estimate underrates gets a larger window", func(t *testing.T) {
		// ~2500 real tokens, estimated at ~850: the 2048 window comes back
		// full, the retry with the model's 4096 fits.
		text := strings.Repeat("zq8 xv7 kj3 ", 210)
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(text)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.NumCtx != 4096 || resp.Usage.Calls != 2 || resp.Usage.PromptTokens < 2048+2048 {
			t.Errorf("num_ctx %d usage %+v", resp.NumCtx, resp.Usage)
		}
	})

	t.Run("a prompt the estimate underrates is caught after the server cuts it", func(t *testing.T) {
		// The tiny model's tokenizer has only 90 merges: text it never saw
		// costs about a token per byte, three times the estimate. The server
		// cuts the prompt silently; lemmings notices the full window.
		text := strings.Repeat("zq8 xv7 kj3 ", 500) // 6000 bytes: estimated ~2000 tokens, real ~6000
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(text)})
		if e := asError(t, err); e.Kind != KindContextTooLarge || !strings.Contains(e.Error(), "truncated") {
			t.Errorf("error %v", e)
		}
	})

	t.Run("embeddings", func(t *testing.T) {
		vecs, err := r.Embed(ctx, []string{"alpha", "beta", "gamma"})
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != 3 || len(vecs[0]) != 64 {
			t.Errorf("%d vectors of %d", len(vecs), len(vecs[0]))
		}
	})

	t.Run("check finds the missing model and says how to pull it", func(t *testing.T) {
		if err := r.Check(ctx, "primary"); err != nil {
			t.Errorf("primary: %v", err)
		}
		e := asError(t, r.Check(ctx, "missing"))
		if e.Kind != KindModelNotFound || e.Hint != "run `ollama pull qwen2.5-coder:14b`" {
			t.Errorf("check: %v", e)
		}
		_, err := r.Chat(ctx, Request{Role: "missing", Messages: userMsg("x")})
		if e := asError(t, err); e.Kind != KindModelNotFound || e.Retriable {
			t.Errorf("chat: %v", e)
		}
	})

	t.Run("a server that went away is unavailable, with the fix", func(t *testing.T) {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		_, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("x")})
		if e := asError(t, err); e.Kind != KindUnavailable || !strings.Contains(e.Hint, "ollama serve") {
			t.Errorf("error %v", e)
		}
	})
}

func TestRealOllamaStreamWithoutDone(t *testing.T) {
	// docs/testing-real-ollama.md: with the seed-1 model, "hello 1" at
	// temperature 0 repeats one token until the server stops it without a
	// done:true line.
	s := realollama.Start(t, realollama.WithSeed(1))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	zero := 0.0
	for _, noStream := range []bool{false, true} {
		r := realRouter(t, s, map[string]RoleSpec{"primary": {Model: s.Models.Chat, MaxTokens: 400, Temperature: &zero, NoStream: noStream, Options: map[string]any{}}})
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hello 1")})
		if err == nil {
			t.Skipf("this build's model finished normally (%q): the runaway case did not reproduce", clip(resp.Content, 80))
		}
		if e := asError(t, err); e.Kind != KindStreamCut {
			t.Errorf("noStream=%v: error %v", noStream, e)
		}
	}
}
