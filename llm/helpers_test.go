package llm

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// fakeClock records sleeps and returns at once, so retry tests take no time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// ollamaRole is a primary role on the scripted server.
func ollamaRole(srv *llmtest.Server, model string) RoleSpec {
	return RoleSpec{Provider: ProviderOllama, Model: model, BaseURL: srv.URL()}
}

// openrouterRole is a supervisor role on the scripted server.
func openrouterRole(srv *llmtest.Server, model string) RoleSpec {
	return RoleSpec{Provider: ProviderOpenRouter, Model: model, BaseURL: srv.URL() + "/api/v1", APIKey: "sk-or-v1-" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
}

// newRouter builds a router on a fake clock; it is closed with the test.
func newRouter(t *testing.T, cfg RouterConfig) (*Router, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	r, err := NewRouter(cfg, WithClock(clk))
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r, clk
}

func userMsg(s string) []Message { return []Message{{Role: "user", Content: s}} }

// closedPortURL returns a loopback URL nothing listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// asError extracts the *Error of err or fails the test.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	if err == nil {
		t.Fatal("expected an error, got nil")
	}
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %T (%v) is not *llm.Error", err, err)
	}
	return e
}
