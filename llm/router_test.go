package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

func TestNewRouterReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := NewRouter(RouterConfig{Roles: map[string]RoleSpec{
		"a": {Provider: "anthropic", Model: "m"},
		"b": {Provider: ProviderOllama},
		"c": {Provider: ProviderOllama, Model: "m", KeepAlive: "soon"},
		"d": {Provider: ProviderOllama, Model: "m", BaseURL: "localhost:11434"},
		"e": {Provider: ProviderOllama, Model: "m", NumCtx: -1},
		"f": {Provider: ProviderOllama, Model: "m"},
	}})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{
		`role a: unknown provider "anthropic" (accepted: ollama, openrouter, openai)`,
		"role b: model is empty",
		`role c: keep_alive "soon"`,
		`role d: base_url "localhost:11434" is not an http(s) URL`,
		"role e: num_ctx",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "role f") {
		t.Errorf("a valid role is reported: %v", err)
	}
	if _, err := NewRouter(RouterConfig{LocalConcurrency: -1}); err == nil {
		t.Error("negative concurrency accepted")
	}
}

func TestDefaultsAndLocality(t *testing.T) {
	t.Parallel()
	r, err := NewRouter(RouterConfig{Roles: map[string]RoleSpec{
		"primary":    {Provider: ProviderOllama, Model: "qwen2.5-coder:14b"},
		"supervisor": {Provider: ProviderOpenRouter, Model: "x/y"},
		"lan":        {Provider: ProviderOpenAI, Model: "m", BaseURL: "http://192.168.1.20:8000/v1"},
		"cloud":      {Provider: ProviderOpenAI, Model: "m", BaseURL: "https://api.example.com/v1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for role, want := range map[string]struct {
		local   bool
		base    string
		timeout time.Duration
	}{
		"primary":    {true, DefaultOllamaURL, 5 * time.Minute},
		"supervisor": {false, DefaultOpenRouterURL, 5 * time.Minute},
		"lan":        {true, "http://192.168.1.20:8000/v1", 5 * time.Minute},
		"cloud":      {false, "https://api.example.com/v1", 5 * time.Minute},
	} {
		ro := r.roles[role]
		if ro.isLocal != want.local || ro.spec.BaseURL != want.base || ro.timeout != want.timeout {
			t.Errorf("%s: local %v base %q timeout %v", role, ro.isLocal, ro.spec.BaseURL, ro.timeout)
		}
	}
	if got := strings.Join(r.Roles(), ","); got != "cloud,lan,primary,supervisor" {
		t.Errorf("roles %s", got)
	}
}

func TestPlain403IsAnAuthError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Status: 403, Content: "Key disabled"}})
	r, clk := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": openrouterRole(srv, "m")}})
	_, err := r.Chat(context.Background(), Request{Role: "supervisor", Messages: userMsg("x")})
	if e := asError(t, err); e.Kind != KindAuth || !strings.Contains(e.Hint, "OPENROUTER_API_KEY") || len(clk.Sleeps()) != 0 {
		t.Errorf("error %v", e)
	}
}

func TestOllamaBehindAProxyWithoutShow(t *testing.T) {
	t.Parallel()
	inner := llmtest.NewServer()
	defer inner.Close()
	inner.Script(llmtest.Step{Reply: llmtest.Reply{Content: "proxied"}})
	// A proxy that forwards /api/chat only.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, inner.URL()+r.URL.Path, r.Body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			_, _ = w.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}))
	defer proxy.Close()
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": {Provider: ProviderOllama, Model: "m", BaseURL: proxy.URL}}})
	resp, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("x")})
	if err != nil || resp.Content != "proxied" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"1.5":                           1500 * time.Millisecond,
		"-4":                            0,
		"soon":                          0,
		"Sat, 21 Nov 2026 09:00:30 GMT": 30 * time.Second,
		"Sat, 21 Nov 2026 08:00:00 GMT": 0,
	} {
		h := http.Header{}
		if in != "" {
			h.Set("Retry-After", in)
		}
		if got := parseRetryAfter(h, now); got != want {
			t.Errorf("Retry-After %q = %v, want %v", in, got, want)
		}
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{InitialBackoff: time.Second, MaxBackoff: 8 * time.Second}.withDefaults()
	for n, base := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 9: 8 * time.Second} {
		for i := 0; i < 50; i++ {
			if d := p.backoff(n); d < base/2 || d > base {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, base/2, base)
			}
		}
	}
}
