package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

func TestRunChainStoresEveryStep(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		c := mustCompile(t, line("a", "b", "c"), WithCheckpointer(cp),
			WithMetadata(func(_ context.Context, s simple) map[string]string {
				return map[string]string{"n": fmt.Sprint(s.N / 2)}
			}))
		s, err := c.Run(ctx, "r1", simple{})
		if err != nil || s.N != 3 || !slices.Equal(s.Log, []string{"a", "b", "c"}) {
			t.Fatalf("Run = %+v, %v", s, err)
		}
		snap, err := c.State(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if snap.Status != StatusDone || snap.Step != 3 || snap.State.N != 3 || len(snap.Next) != 0 || !slices.Equal(snap.Nodes, []string{"c"}) {
			t.Fatalf("State = %+v", snap)
		}
		if snap.Metadata["n"] != "1" {
			t.Errorf("metadata = %v", snap.Metadata)
		}
		h, err := c.History(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 4 {
			t.Fatalf("History has %d checkpoints, want 4: %+v", len(h), h)
		}
		want := [][]string{{Start}, {"a"}, {"b"}, {"c"}}
		for i, ci := range h {
			if ci.Step != i || !slices.Equal(ci.Nodes, want[i]) {
				t.Errorf("checkpoint %d = %+v", i, ci)
			}
		}
		if !h[0].Snapshot || h[1].Snapshot || !slices.Equal(h[1].Changed, []string{"N", "Log"}) || !slices.Equal(h[1].Next, []string{"b"}) {
			t.Errorf("checkpoint 1 = %+v", h[1])
		}
		if h[1].Metadata["n"] != "0" || h[2].Metadata["n"] != "1" || h[3].Metadata["n"] != "1" {
			t.Errorf("metadata per checkpoint: %v %v %v", h[1].Metadata, h[2].Metadata, h[3].Metadata)
		}
		runs, err := c.ListRuns(ctx)
		if err != nil || len(runs) != 1 || runs[0].ID != "r1" || runs[0].Status != StatusDone || runs[0].Step != 3 || runs[0].Active {
			t.Fatalf("ListRuns = %+v, %v", runs, err)
		}
		if _, err := c.Resume(ctx, "r1"); !errors.Is(err, ErrRunFinished) {
			t.Errorf("Resume of a finished run: %v", err)
		}
		if _, err := c.Run(ctx, "r1", simple{}); !errors.Is(err, ErrRunExists) {
			t.Errorf("Run over an existing id: %v", err)
		}
		if _, err := c.Resume(ctx, "nope"); !errors.Is(err, ErrRunNotFound) {
			t.Errorf("Resume of an unknown id: %v", err)
		}
		if _, err := c.State(ctx, "nope"); !errors.Is(err, ErrRunNotFound) {
			t.Errorf("State of an unknown id: %v", err)
		}
		if _, err := c.Run(ctx, "../etc", simple{}); !errors.Is(err, ErrInvalidRunID) {
			t.Errorf("Run with a path as id: %v", err)
		}
	})
}

func TestRouterReturningUndeclaredDestinationFailsTheRun(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		g := New[simple]().AddNode("a", inc("a")).AddEdge(Start, "a").
			AddConditionalEdges("a", func(simple) string { return "mars" }, "a", End)
		c := mustCompile(t, g, WithCheckpointer(cp))
		_, err := c.Run(ctx, "r", simple{})
		var re *RouteError
		if !errors.As(err, &re) || re.Node != "a" || re.Destination != "mars" {
			t.Fatalf("err = %v", err)
		}
		snap, _ := c.State(ctx, "r")
		if snap.Status != StatusFailed || snap.Step != 0 || !strings.Contains(snap.Error, `"mars"`) {
			t.Fatalf("State = %+v", snap)
		}
	})
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

func TestPanicFailsTheRunAndKeepsTheLastCheckpoint(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var boom atomic.Bool
		boom.Store(true)
		g := line("a")
		g.AddNode("b", func(_ context.Context, s simple) (simple, error) {
			if boom.Load() {
				var m map[string]int
				m["x"] = 1 // nil map write
			}
			s.N += 10
			return s, nil
		}).AddEdge("a", "b").AddEdge("b", End)
		c := mustCompile(t, New[simple]().AddNode("a", inc("a")).AddNode("b", g.nodes[1].fn).
			AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", End), WithCheckpointer(cp))
		s, err := c.Run(ctx, "p", simple{})
		var ne *NodeError
		if !errors.As(err, &ne) || ne.Node != "b" || !strings.Contains(ne.Err.Error(), "nil map") || !strings.Contains(ne.Stack, "run_test.go") {
			t.Fatalf("err = %v", err)
		}
		if s.N != 1 {
			t.Errorf("returned state N=%d, want the last committed (1)", s.N)
		}
		snap, err := c.State(ctx, "p")
		if err != nil || snap.Status != StatusFailed || snap.Step != 1 || snap.State.N != 1 || !slices.Equal(snap.Next, []string{"b"}) {
			t.Fatalf("State = %+v, %v", snap, err)
		}
		boom.Store(false)
		s, err = c.Resume(ctx, "p")
		if err != nil || s.N != 11 || !slices.Equal(s.Log, []string{"a"}) {
			t.Fatalf("Resume after the fix = %+v, %v (a must not run again)", s, err)
		}
	})
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

func TestCancellationMarksTheRunInterrupted(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx, cancel := context.WithCancel(context.Background())
		var bRuns atomic.Int32
		g := New[simple]().AddNode("a", inc("a")).
			AddNode("b", func(ctx context.Context, s simple) (simple, error) {
				if bRuns.Add(1) == 1 {
					cancel()
					<-ctx.Done()
					return s, ctx.Err()
				}
				s.N += 100
				return s, nil
			}).AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", End)
		c := mustCompile(t, g, WithCheckpointer(cp))
		_, err := c.Run(ctx, "c", simple{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		snap, _ := c.State(context.Background(), "c")
		if snap.Status != StatusInterrupted || snap.Step != 1 || !slices.Equal(snap.Next, []string{"b"}) {
			t.Fatalf("State = %+v", snap)
		}
		s, err := c.Resume(context.Background(), "c")
		if err != nil || s.N != 101 || bRuns.Load() != 2 {
			t.Fatalf("Resume = %+v, %v (b ran %d times)", s, err, bRuns.Load())
		}
	})
}

func TestStopCheckHaltsBetweenSteps(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var stop atomic.Bool
		g := New[simple]().AddNode("a", func(_ context.Context, s simple) (simple, error) {
			s.N++
			if s.N == 3 {
				stop.Store(true)
			}
			return s, nil
		}).AddEdge(Start, "a").AddConditionalEdges("a", func(s simple) string {
			if s.N < 5 {
				return "a"
			}
			return End
		}, "a", End)
		c := mustCompile(t, g, WithCheckpointer(cp), WithStopCheck(func(id string) bool { return id == "h" && stop.Load() }))
		s, err := c.Run(ctx, "h", simple{})
		if !errors.Is(err, ErrHalted) || s.N != 3 {
			t.Fatalf("Run = %+v, %v", s, err)
		}
		if snap, _ := c.State(ctx, "h"); snap.Status != StatusHalted || snap.Step != 3 {
			t.Fatalf("State = %+v", snap)
		}
		stop.Store(false)
		s, err = c.Resume(ctx, "h")
		if err != nil || s.N != 5 {
			t.Fatalf("Resume = %+v, %v", s, err)
		}
	})
}

func TestInterrupts(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var askRuns atomic.Int32
		g := New[simple]().AddNode("plan", inc("plan")).
			AddNode("ask", func(_ context.Context, s simple) (simple, error) {
				askRuns.Add(1)
				s.Log = append(s.Log, "ask")
				return s, Interrupt("need approval")
			}).
			AddNode("apply", inc("apply")).AddNode("report", inc("report")).
			AddEdge(Start, "plan").AddEdge("plan", "ask").AddEdge("ask", "apply").AddEdge("apply", "report").AddEdge("report", End)
		c := mustCompile(t, g, WithCheckpointer(cp), WithInterruptBefore("plan"), WithInterruptAfter("apply"))

		_, err := c.Run(ctx, "i", simple{})
		if !errors.Is(err, ErrPaused) || !strings.Contains(err.Error(), "before plan") {
			t.Fatalf("pause before: %v", err)
		}
		snap, _ := c.State(ctx, "i")
		if snap.Status != StatusPaused || snap.Step != 0 || snap.Reason != "before plan" || !slices.Equal(snap.Next, []string{"plan"}) {
			t.Fatalf("State = %+v", snap)
		}
		_, err = c.Resume(ctx, "i")
		if !errors.Is(err, ErrPaused) || !strings.Contains(err.Error(), "need approval") {
			t.Fatalf("node interrupt: %v", err)
		}
		snap, _ = c.State(ctx, "i")
		if snap.Step != 2 || !slices.Equal(snap.State.Log, []string{"plan", "ask"}) || !slices.Equal(snap.Next, []string{"apply"}) {
			t.Fatalf("the interrupting node's state was not committed: %+v", snap)
		}
		_, err = c.Resume(ctx, "i", WithUpdate(func(s simple) (simple, error) {
			s.Log = append(s.Log, "approved")
			return s, nil
		}))
		if !errors.Is(err, ErrPaused) || !strings.Contains(err.Error(), "after apply") {
			t.Fatalf("pause after: %v", err)
		}
		s, err := c.Resume(ctx, "i")
		if err != nil || !slices.Equal(s.Log, []string{"plan", "ask", "approved", "apply", "report"}) || askRuns.Load() != 1 {
			t.Fatalf("final = %+v, %v (ask ran %d times)", s, err, askRuns.Load())
		}
		h, _ := c.History(ctx, "i")
		var nodes []string
		for _, ci := range h {
			nodes = append(nodes, strings.Join(ci.Nodes, "+"))
		}
		if strings.Join(nodes, " ") != "__start__ plan ask __update__ apply report" {
			t.Errorf("history = %v", nodes)
		}
	})
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

func TestApprovalSurvivesAFailureOfTheApprovedNode(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var fail atomic.Bool
		fail.Store(true)
		g := New[simple]().AddNode("a", inc("a")).
			AddNode("deploy", func(_ context.Context, s simple) (simple, error) {
				if fail.Load() {
					return s, errors.New("deploy failed")
				}
				s.Log = append(s.Log, "deploy")
				return s, nil
			}).AddEdge(Start, "a").AddEdge("a", "deploy").AddEdge("deploy", End)
		c := mustCompile(t, g, WithCheckpointer(cp), WithInterruptBefore("deploy"))
		if _, err := c.Run(ctx, "ap", simple{}); !errors.Is(err, ErrPaused) {
			t.Fatal(err)
		}
		if _, err := c.Resume(ctx, "ap"); err == nil || errors.Is(err, ErrPaused) {
			t.Fatalf("approved deploy should run and fail: %v", err)
		}
		fail.Store(false)
		s, err := c.Resume(ctx, "ap")
		if err != nil || !slices.Equal(s.Log, []string{"a", "deploy"}) {
			t.Fatalf("retry of an approved node asked again or failed: %+v, %v", s, err)
		}
	})
}
