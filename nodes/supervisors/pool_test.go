package supervisors

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A job runs once however often it is launched; its outcome is there
// without waiting only once it finished, and a wait ends with its context.
func TestPoolRunsAJobOnceAndHandsItsOutcomeBack(t *testing.T) {
	t.Parallel()
	p := NewPool[string](context.Background())
	defer p.Close()
	release := make(chan struct{})
	var calls atomic.Int32
	call := func(context.Context) string {
		calls.Add(1)
		<-release
		return "done"
	}
	p.Launch("j1", true, call)
	p.Launch("j1", false, call)
	if !p.Known("j1") || !p.Fresh("j1") || p.Known("j2") {
		t.Fatalf("known j1 %v, fresh j1 %v, known j2 %v: want true, true (the first launch counts), false", p.Known("j1"), p.Fresh("j1"), p.Known("j2"))
	}
	if _, ok := p.Result("j1"); ok {
		t.Fatal("Result of a running job: want none yet")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, ok := p.Wait(ctx, "j1"); ok {
		t.Fatal("Wait past its context's end: want none")
	}
	close(release)
	if out, ok := p.Wait(context.Background(), "j1"); !ok || out != "done" {
		t.Fatalf("Wait = %q, %v; want done, true", out, ok)
	}
	if out, ok := p.Result("j1"); !ok || out != "done" {
		t.Fatalf("Result = %q, %v; want done, true", out, ok)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the job ran %d times, want once", n)
	}
	p.Forget("j1")
	if p.Known("j1") {
		t.Fatal("a forgotten job is still known")
	}
}

// Close cancels the context of jobs still running and waits for them.
func TestPoolCloseCancelsRunningJobs(t *testing.T) {
	t.Parallel()
	p := NewPool[error](context.Background())
	var got atomic.Value
	p.Launch("j", true, func(ctx context.Context) error {
		<-ctx.Done()
		got.Store(ctx.Err())
		return ctx.Err()
	})
	p.Close()
	if got.Load() != context.Canceled {
		t.Fatalf("the running job saw %v, want context.Canceled", got.Load())
	}
}
