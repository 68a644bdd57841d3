package llm

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// inFlight counts the requests a router has outstanding, from the start of a
// round trip to the close of its response body: exactly what the concurrency
// limits govern. (Counting in the server would include each handler's tail
// after the client has already read the whole reply.)
type inFlight struct {
	mu       sync.Mutex
	now, max int
}

func (f *inFlight) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.now++
	f.max = max(f.max, f.now)
	f.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		f.done()
		return nil, err
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, done: f.done}
	return resp, nil
}

func (f *inFlight) done() {
	f.mu.Lock()
	f.now--
	f.mu.Unlock()
}

func (f *inFlight) peak() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.max
}

type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}

// countingRouter is newRouter with an in-flight counter on its transport.
func countingRouter(t *testing.T, cfg RouterConfig) (*Router, *inFlight) {
	t.Helper()
	f := &inFlight{}
	r, err := NewRouter(cfg, WithClock(newFakeClock()), WithHTTPClient(&http.Client{Transport: f}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, f
}

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
	r, f := countingRouter(t, RouterConfig{Roles: map[string]RoleSpec{
		"primary":    ollamaRole(srv, "a"),
		"summarizer": ollamaRole(srv, "b"),
	}})
	var wg sync.WaitGroup
	for _, role := range []string{"primary", "summarizer"} {
		wg.Add(1)
		go func() { defer wg.Done(); burst(t, r, role, 4) }()
	}
	wg.Wait()
	if got := f.peak(); got != 1 {
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
		r, f := countingRouter(t, RouterConfig{CloudConcurrency: limit, Roles: map[string]RoleSpec{"supervisor": openrouterRole(srv, "m")}})
		burst(t, r, "supervisor", 8)
		want := limit
		if want == 0 {
			want = 4
		}
		if got := f.peak(); got != want {
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
