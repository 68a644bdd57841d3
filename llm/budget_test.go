package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// Reproduction 12 of issue 43: a server that trickles a token every 50 ms
// and never stops held a run until its wall time (4 h by default):
// max_tokens was the server's to honour. lemmings cuts a streaming reply
// past its budget itself, counts what arrived, and the call ends.
func TestAReplyPastItsBudgetIsCutAndCounted(t *testing.T) {
	ctx := context.Background()
	for name, role := range map[string]func(*llmtest.Server) RoleSpec{
		"ollama":     func(s *llmtest.Server) RoleSpec { return ollamaRole(s, "m") },
		"openrouter": func(s *llmtest.Server) RoleSpec { return openrouterRole(s, "m") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer()
			defer srv.Close()
			srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: "start ", Endless: true, ChunkDelay: time.Millisecond}})
			r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": role(srv)}, Retry: RetryPolicy{MaxAttempts: 3}})
			start := time.Now()
			resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi"), MaxTokens: 100})
			if took := time.Since(start); took > 20*time.Second {
				t.Fatalf("the call took %s", took)
			}
			e := asError(t, err)
			if e.Kind != KindRunaway || !errors.Is(err, errOverBudget) || !strings.Contains(err.Error(), "budget of 100 tokens") {
				t.Fatalf("error %v", err)
			}
			if n := resp.Usage.CompletionTokens; n < 100 || n > replyLimit(100)+5 {
				t.Errorf("%d completion tokens counted, want about %d", n, replyLimit(100))
			}
			if resp.Attempts != 1 {
				t.Errorf("%d attempts: a reply past its budget is not a network fault to retry", resp.Attempts)
			}
		})
	}
}

// The same through Structured: the re-ask says why, and the call fails
// with the budget named, never after the wall time.
func TestAStructuredCallPastItsBudgetFailsNamingIt(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: `{"a": "`, Endless: true}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	type reply struct {
		A string `json:"a"`
	}
	_, resp, err := Structured[reply](context.Background(), r, Request{Role: "primary", Messages: userMsg("hi"), MaxTokens: 50})
	var se *StructuredError
	if !errors.As(err, &se) || !strings.Contains(se.Problem, "budget of 50 tokens") {
		t.Fatalf("error %v", err)
	}
	if resp.Usage.CompletionTokens < 100 {
		t.Errorf("%d tokens counted for two cut replies", resp.Usage.CompletionTokens)
	}
}
