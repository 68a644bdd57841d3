package llm

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// burst makes n concurrent calls to role and waits for them.
func burst(t *testing.T, r *Router, role string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Chat(context.Background(), Request{Role: role, Messages: userMsg("x")}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLocalCallsNeverOverlap(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.SetDefault(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "ok", Latency: 20 * time.Millisecond} })
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{
		"primary":    ollamaRole(srv, "a"),
		"summarizer": ollamaRole(srv, "b"),
	}})
	var wg sync.WaitGroup
	for _, role := range []string{"primary", "summarizer"} {
		wg.Add(1)
		go func() { defer wg.Done(); burst(t, r, role, 4) }()
	}
	wg.Wait()
	if got := srv.MaxConcurrent(); got != 1 {
		t.Errorf("local calls overlapped: %d at once, want 1", got)
	}
	if n := len(srv.ChatCalls()); n != 8 {
		t.Errorf("%d calls", n)
	}
}

func TestCloudCallsOverlapUpToTheLimit(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 2} {
		srv := llmtest.NewServer()
		defer srv.Close()
		srv.SetDefault(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "ok", Latency: 60 * time.Millisecond} })
		r, _ := newRouter(t, RouterConfig{CloudConcurrency: limit, Roles: map[string]RoleSpec{"supervisor": openrouterRole(srv, "m")}})
		burst(t, r, "supervisor", 8)
		want := limit
		if want == 0 {
			want = 4
		}
		if got := srv.MaxConcurrent(); got != want {
			t.Errorf("limit %d: %d cloud calls at once, want %d", limit, got, want)
		}
	}
}

func TestCloudCallsDoNotWaitForTheLocalModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{API: llmtest.Ollama, Times: -1, Reply: llmtest.Reply{Content: "slow", Latency: 300 * time.Millisecond}})
	srv.Script(llmtest.Step{API: llmtest.OpenAI, Times: -1, Reply: llmtest.Reply{Content: "fast"}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m"), "supervisor": openrouterRole(srv, "s")}})
	go func() { _, _ = r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("x")}) }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if _, err := r.Chat(context.Background(), Request{Role: "supervisor", Messages: userMsg("x")}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("the cloud call waited %v for the local one", d)
	}
}
