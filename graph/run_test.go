package graph

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stores runs f against both checkpointers.
func stores(t *testing.T, f func(t *testing.T, cp Checkpointer)) {
	t.Run("memory", func(t *testing.T) { t.Parallel(); f(t, NewMemoryCheckpointer()) })
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		cp, err := NewFileCheckpointer(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f(t, cp)
	})
}

// line builds Start → names... → End over simple.
func line(names ...string) *Graph[simple] {
	g := New[simple]()
	prev := Start
	for _, n := range names {
		g.AddNode(n, inc(n)).AddEdge(prev, n)
		prev = n
	}
	return g.AddEdge(prev, End)
}

func mustCompile[S any](t *testing.T, g *Graph[S], opts ...CompileOption) *Compiled[S] {
	t.Helper()
	c, err := g.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRecursionLimitNamesTheLoop(t *testing.T) {
	g := New[simple]().AddNode("ping", inc("ping")).AddNode("pong", inc("pong")).
		AddEdge(Start, "ping").AddEdge("ping", "pong").
		AddConditionalEdges("pong", func(simple) string { return "ping" }, "ping", End)
	c := mustCompile(t, g, WithRecursionLimit(25))
	s, err := c.Run(context.Background(), "r", simple{})
	var re *RecursionError
	if !errors.As(err, &re) || re.Limit != 25 {
		t.Fatalf("err = %v", err)
	}
	if s.N != 25 || !strings.Contains(err.Error(), "25") || !strings.Contains(err.Error(), "ping → pong → ping") {
		t.Fatalf("N=%d err=%v", s.N, err)
	}
	if _, err := New[simple]().AddNode("a", inc("a")).AddEdge(Start, "a").AddEdge("a", End).Compile(); err != nil {
		t.Fatal(err)
	}
}

func TestRetryBacksOffAndHonoursThePredicate(t *testing.T) {
	var calls atomic.Int32
	transient := errors.New("transient")
	fatal := errors.New("fatal")
	flaky := func(fail error, times int32) NodeFunc[simple] {
		return func(_ context.Context, s simple) (simple, error) {
			if calls.Add(1) <= times {
				return s, fail
			}
			s.N++
			return s, nil
		}
	}
	var events []Event
	sink := SinkFunc(func(e Event) { events = append(events, e) })
	policy := RetryPolicy{MaxAttempts: 4, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 8 * time.Millisecond,
		Retryable: func(err error) bool { return errors.Is(err, transient) }}
	c := mustCompile(t, New[simple]().AddNode("f", flaky(transient, 2), WithRetry(policy)).AddEdge(Start, "f").AddEdge("f", End), WithSinks(sink))
	start := time.Now()
	s, err := c.Run(context.Background(), "r", simple{})
	if err != nil || s.N != 1 || calls.Load() != 3 {
		t.Fatalf("N=%d calls=%d err=%v", s.N, calls.Load(), err)
	}
	if el := time.Since(start); el < 13*time.Millisecond {
		t.Errorf("two backoffs (5ms, 8ms) took only %v", el)
	}
	var retries []Event
	for _, e := range events {
		if e.Kind == EventRetry {
			retries = append(retries, e)
		}
	}
	if len(retries) != 2 || retries[0].Attempt != 2 || retries[0].Duration != 5*time.Millisecond || retries[1].Duration != 8*time.Millisecond {
		t.Fatalf("retry events = %+v", retries)
	}

	calls.Store(0)
	c = mustCompile(t, New[simple]().AddNode("f", flaky(fatal, 2), WithRetry(policy)).AddEdge(Start, "f").AddEdge("f", End))
	_, err = c.Run(context.Background(), "r", simple{})
	var ne *NodeError
	if !errors.As(err, &ne) || !errors.Is(err, fatal) || ne.Attempt != 1 || calls.Load() != 1 {
		t.Fatalf("a non-retryable error was retried: calls=%d err=%v", calls.Load(), err)
	}

	for i := 1; i <= 6; i++ {
		d := backoff(RetryPolicy{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Jitter: 0.5}, i)
		full := min(10*time.Millisecond<<(i-1), 50*time.Millisecond)
		if d > full || d < full/2 {
			t.Errorf("backoff(%d) = %v, want within [%v, %v]", i, d, full/2, full)
		}
	}
}

func TestTimeoutCancelsTheNode(t *testing.T) {
	slow := func(ctx context.Context, s simple) (simple, error) {
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(5 * time.Second):
			return s, nil
		}
	}
	c := mustCompile(t, New[simple]().AddNode("slow", slow, WithTimeout(20*time.Millisecond)).AddEdge(Start, "slow").AddEdge("slow", End))
	start := time.Now()
	_, err := c.Run(context.Background(), "r", simple{})
	var ne *NodeError
	if !errors.As(err, &ne) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 20ms") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("the timeout did not stop the node")
	}
}

func TestResumeWithUpdateOfAnotherTypeIsRefused(t *testing.T) {
	cp := NewMemoryCheckpointer()
	c := mustCompile(t, line("a"), WithCheckpointer(cp), WithInterruptBefore("a"))
	_, _ = c.Run(context.Background(), "u", simple{})
	_, err := c.Resume(context.Background(), "u", WithUpdate(func(s string) (string, error) { return s, nil }))
	if err == nil || !strings.Contains(err.Error(), "WithUpdate") {
		t.Fatalf("err = %v", err)
	}
}

func TestNoCheckpointer(t *testing.T) {
	c := mustCompile(t, line("a"))
	ctx := context.Background()
	if _, err := c.Resume(ctx, "x"); !errors.Is(err, ErrNoCheckpointer) {
		t.Error(err)
	}
	if _, err := c.State(ctx, "x"); !errors.Is(err, ErrNoCheckpointer) {
		t.Error(err)
	}
	if _, err := c.ListRuns(ctx); !errors.Is(err, ErrNoCheckpointer) {
		t.Error(err)
	}
}

// A node stuck where no cancellation reaches it (the open(2) of a
// FIFO, here a channel never closed) kept its run, and the process, alive
// after a halt, SIGTERM or Ctrl-C: the run now stops AbandonGrace after it
// was stopped, stored as halted (or interrupted), without the node.
func TestAStuckNodeIsLeftBehindWhenTheRunStops(t *testing.T) {
	defer func(g time.Duration) { AbandonGrace = g }(AbandonGrace)
	AbandonGrace = 100 * time.Millisecond
	stuck := make(chan struct{})
	defer close(stuck)
	entered := make(chan struct{}, 2)
	g := New[simple]().AddNode("stuck", func(ctx context.Context, s simple) (simple, error) {
		entered <- struct{}{}
		<-stuck // deaf to ctx
		return s, nil
	}).AddEdge(Start, "stuck").AddEdge("stuck", End)
	for name, cause := range map[string]error{"halt": ErrHalted, "interrupt": nil} {
		t.Run(name, func(t *testing.T) {
			cp := NewMemoryCheckpointer()
			c := mustCompile(t, g, WithCheckpointer(cp))
			ctx, cancel := context.WithCancelCause(context.Background())
			go func() {
				<-entered
				cancel(cause)
			}()
			start := time.Now()
			_, err := c.Run(ctx, "r", simple{})
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("the run took %s to stop", took)
			}
			snap, serr := c.State(context.Background(), "r")
			if serr != nil {
				t.Fatal(serr)
			}
			want := StatusInterrupted
			if cause != nil {
				want = StatusHalted
				if !errors.Is(err, ErrHalted) {
					t.Errorf("err = %v, want a halt", err)
				}
			} else if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want the cancellation", err)
			}
			if snap.Status != want {
				t.Errorf("stored %s, want %s (err %v)", snap.Status, want, err)
			}
		})
	}
}
