package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

func TestTheFirstTokenWaitFitsThePromptAndTheServersSpeed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a long prompt on a server of unknown speed gets time to be read", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: "read", Latency: 1500 * time.Millisecond}})
		spec := ollamaRole(srv, "m")
		spec.Timeout = 500 * time.Millisecond
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}})
		// ~3,000 tokens: far longer to read than the role's timeout on a slow CPU.
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("func f() {}\n", 750))})
		if err != nil || resp.Content != "read" {
			t.Fatalf("a long prompt was cut at the role's timeout: resp %q err %v", resp.Content, err)
		}
	})

	t.Run("the measured speed sets the wait: a prompt read too slowly for it times out", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer()
		defer srv.Close()
		// The scripted server reports reading a token a millisecond: 1,000 tokens/s.
		srv.Script(
			llmtest.Step{Reply: llmtest.Reply{Content: "first"}},
			llmtest.Step{Reply: llmtest.Reply{Content: "in time", Latency: 800 * time.Millisecond}},
			llmtest.Step{Reply: llmtest.Reply{Content: "too late", Latency: 6 * time.Second}},
		)
		spec := ollamaRole(srv, "m")
		spec.Timeout = 300 * time.Millisecond
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": spec}})
		if _, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("a b ", 600))}); err != nil {
			t.Fatal(err)
		}
		// ~1,000 tokens at 1,000 tokens/s: a wait of about 2 s, not the role's 300 ms.
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("x y ", 750))})
		if err != nil || resp.Content != "in time" {
			t.Fatalf("resp %q err %v", resp.Content, err)
		}
		start := time.Now()
		_, err = r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("p q ", 750))})
		if e := asError(t, err); e.Kind != KindTimeout {
			t.Fatalf("err %v, want a timeout", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("waited %s: the wait should follow the measured speed (~2 s), not the unknown one", took)
		}
	})
}

func TestThePartOfAPromptTheServersCacheHoldsIsCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "ok"}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	file := strings.Repeat("line of the file\n", 200)
	first := []Message{{Role: "system", Content: "You write Go."}, {Role: "user", Content: file + "Write the fix."}}
	resp, err := r.Chat(ctx, Request{Role: "primary", Messages: first})
	if err != nil || resp.Usage.PromptCached != 0 {
		t.Fatalf("the first call: cached %d err %v, want 0", resp.Usage.PromptCached, err)
	}
	// The repair goes on from the first call's prompt and reply: the cache holds all of it.
	again := append(append([]Message{}, first...), Message{Role: "assistant", Content: "ok"}, Message{Role: "user", Content: "It failed. Fix it."})
	resp, err = r.Chat(ctx, Request{Role: "primary", Messages: again})
	if err != nil {
		t.Fatal(err)
	}
	if share := float64(resp.Usage.PromptCached) / float64(resp.Usage.PromptTokens); share < 0.9 || share >= 1 {
		t.Errorf("a call that goes on from the last one: cached %d of %d, want nearly all", resp.Usage.PromptCached, resp.Usage.PromptTokens)
	}
	// Feedback put before the file moves everything after it out of the cache.
	moved := []Message{{Role: "system", Content: "You write Go."}, {Role: "user", Content: "It failed.\n" + file + "Write the fix."}}
	resp, err = r.Chat(ctx, Request{Role: "primary", Messages: moved})
	if err != nil {
		t.Fatal(err)
	}
	if share := float64(resp.Usage.PromptCached) / float64(resp.Usage.PromptTokens); share > 0.1 {
		t.Errorf("a call whose prompt differs early: cached %d of %d, want almost none", resp.Usage.PromptCached, resp.Usage.PromptTokens)
	}
}

func TestARunsWindowIsReservedOnceSoNoCallReloadsTheModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "m", ContextLength: 32768, Capabilities: []string{"completion"}}))
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "ok"}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	if err := r.ReserveWindow(ctx, "primary", 6000); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 2000, 5000} {
		if _, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("w ", n))}); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range srv.ChatCalls() {
		// 6,000 prompt tokens + schema room + a 2,048-token reply: 16,384.
		if c.NumCtx != 16384 {
			t.Errorf("call %d: num_ctx %d, want the reserved 16384 for every call", i+1, c.NumCtx)
		}
	}
}
