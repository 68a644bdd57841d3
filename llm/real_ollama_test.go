package llm

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// Checks only the real server can make: what its own log and /api/ps say
// about lemmings' requests. The contract both servers meet is in
// contract_test.go; docs/testing-real-ollama.md says how to run these.

func TestRealOllamaServerSideView(t *testing.T) {
	s := realollama.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, _ := newRouter(t, RouterConfig{Retry: RetryPolicy{MaxAttempts: 2}, Roles: map[string]RoleSpec{
		"primary": {Provider: ProviderOllama, BaseURL: s.URL, Model: s.Models.Chat, MaxTokens: 32, Options: map[string]any{"seed": 7}},
	}})

	t.Run("the model stays loaded for lemmings' keep_alive", func(t *testing.T) {
		if _, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("hi")}); err != nil {
			t.Fatal(err)
		}
		ps, err := s.Client().ListRunning(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps.Models) != 1 || ps.Models[0].Name != s.Models.Chat+":latest" || time.Until(ps.Models[0].ExpiresAt) < 25*time.Minute {
			t.Errorf("running %+v", ps.Models)
		}
	})

	t.Run("the server's log names the cut lemmings noticed, and nothing after the resend", func(t *testing.T) {
		before := strings.Count(s.Log(), "truncating input prompt")
		resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg(strings.Repeat("zq8 xv7 kj3 ", 210))})
		if err != nil {
			t.Fatal(err)
		}
		log := s.Log()
		cuts := regexp.MustCompile(`truncating input prompt"? limit=(\d+) prompt=(\d+)`).FindAllStringSubmatch(log, -1)
		if len(cuts)-before != 1 || cuts[len(cuts)-1][1] != "2048" || resp.NumCtx != 4096 {
			t.Errorf("num_ctx %d; the server's truncation lines:\n%s", resp.NumCtx, grepLines(log, "truncating"))
		}
		// The resent prompt fit: the server counted it whole.
		if want := cuts[len(cuts)-1][2]; resp.Usage.PromptTokens != 2048+atoi(t, want) {
			t.Errorf("usage %+v, the server counted a %s-token prompt", resp.Usage, want)
		}
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}
