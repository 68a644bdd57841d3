package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// failingStore fails the appends of one run from the failAt-th on.
type failingStore struct {
	Checkpointer
	mu      sync.Mutex
	appends int
	failAt  int
	batches int
}

type countingWriter struct {
	RunWriter
	s *failingStore
}

func (f *failingStore) Open(ctx context.Context, id string, create bool) (RunWriter, error) {
	w, err := f.Checkpointer.Open(ctx, id, create)
	if err != nil {
		return nil, err
	}
	return &countingWriter{RunWriter: w, s: f}, nil
}

func (w *countingWriter) Append(ctx context.Context, rec Record) error {
	w.s.mu.Lock()
	w.s.appends++
	n := w.s.appends
	w.s.mu.Unlock()
	if n == w.s.failAt { // one record fails (a transient error): what follows would succeed
		return fmt.Errorf("disk full at record %d", n)
	}
	return w.RunWriter.Append(ctx, rec)
}

// AppendBatch counts batches and appends one by one (so failAt applies).
func (w *countingWriter) AppendBatch(ctx context.Context, recs []Record) error {
	w.s.mu.Lock()
	w.s.batches++
	w.s.mu.Unlock()
	for _, r := range recs {
		if err := w.Append(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

func TestAsyncWriteFailureFailsTheRunAndStoresNothingAfterIt(t *testing.T) {
	ctx := context.Background()
	mem := NewMemoryCheckpointer()
	store := &failingStore{Checkpointer: mem, failAt: 4} // step 0, 1, 2 stored; step 3 fails
	c := mustCompile(t, line("a", "b", "c", "d", "e", "f"), WithCheckpointer(store))
	_, err := c.Run(ctx, "r", simple{}, WithDurability(DurabilityAsync))
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "asynchronous checkpoint write") {
		t.Fatalf("Run: %v", err)
	}
	recs, _ := mem.Records(ctx, "r")
	if len(recs) != 3 {
		t.Fatalf("%d records stored, want the 3 before the failed one: a record after a missing step would be applied to the wrong state", len(recs))
	}
	store.failAt = 0
	s, err := c.Resume(ctx, "r")
	if err != nil || s.N != 6 {
		t.Fatalf("Resume after the failure = %+v, %v", s, err)
	}
}

func TestAsyncFlushesBeforeASideEffect(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var stepSeen int
		g := New[simple]().AddNode("a", inc("a")).AddNode("b", inc("b")).
			AddNode("commit", func(ctx context.Context, s simple) (simple, error) {
				recs, err := cp.Records(ctx, "r")
				if err != nil {
					return s, err
				}
				stepSeen = recs[len(recs)-1].Step
				s.N++
				return s, nil
			}, WithSideEffects()).
			AddNode("c", inc("c")).
			AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", "commit").AddEdge("commit", "c").AddEdge("c", End)
		c := mustCompile(t, g, WithCheckpointer(cp), WithDefaultDurability(DurabilityAsync))
		if _, err := c.Run(ctx, "r", simple{}); err != nil {
			t.Fatal(err)
		}
		if stepSeen < 2 {
			t.Fatalf("the side-effect node saw the store at step %d, want every step before it (2)", stepSeen)
		}
	})
}

func TestExitDurabilityWritesOneBatch(t *testing.T) {
	ctx := context.Background()
	store := &failingStore{Checkpointer: NewMemoryCheckpointer()}
	c := mustCompile(t, line("a", "b", "c"), WithCheckpointer(store))
	if _, err := c.Run(ctx, "r", simple{}, WithDurability(DurabilityExit)); err != nil {
		t.Fatal(err)
	}
	if store.batches != 1 || store.appends != 4 {
		t.Fatalf("%d batches, %d records: want the 4 checkpoints in one batch", store.batches, store.appends)
	}
}

func TestExitDurabilityFailureAtTheEndIsReported(t *testing.T) {
	ctx := context.Background()
	store := &failingStore{Checkpointer: NewMemoryCheckpointer(), failAt: 2}
	c := mustCompile(t, line("a", "b"), WithCheckpointer(store))
	_, err := c.Run(ctx, "r", simple{}, WithDurability(DurabilityExit))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Run: %v", err)
	}
}

func TestCompileRefusesAnUnknownDurability(t *testing.T) {
	_, err := line("a").Compile(WithDefaultDurability("eventually"))
	if err == nil || !strings.Contains(err.Error(), `WithDefaultDurability("eventually")`) {
		t.Fatalf("Compile: %v", err)
	}
}

func TestAsyncWriterKeepsOrderUnderLoad(t *testing.T) {
	mem := NewMemoryCheckpointer()
	ctx := context.Background()
	w, err := mem.Open(ctx, "q", true)
	if err != nil {
		t.Fatal(err)
	}
	a := newAsyncWriter(w, 4)
	if err := a.Append(ctx, Record{Kind: RecordSnapshot, Data: []byte("s")}); err != nil {
		t.Fatal(err)
	}
	buf := []byte("x")
	for i := 1; i <= 500; i++ {
		buf[0] = byte('a' + i%26) // the writer must copy: the runtime reuses its buffer
		if err := a.Append(ctx, Record{Kind: RecordDelta, Step: i, Data: buf}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _ := mem.Records(ctx, "q")
	if len(recs) != 501 {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs[1:] {
		if r.Step != i+1 || r.Data[0] != byte('a'+(i+1)%26) {
			t.Fatalf("record %d = step %d %q", i+1, r.Step, r.Data)
		}
	}
	if err := a.Append(ctx, Record{Kind: RecordDelta, Step: 501}); err == nil {
		t.Fatal("append after close accepted")
	}
	if !errors.Is(a.flush(ctx), nil) {
		t.Fatal("flush after close")
	}
}

// blockingWriter holds every append until its gate opens.
type blockingWriter struct {
	RunWriter
	gate chan struct{}
}

func (b *blockingWriter) Append(ctx context.Context, rec Record) error {
	<-b.gate
	return b.RunWriter.Append(ctx, rec)
}

// The async queue is bounded: with a store that does not keep up, Append
// waits once depth records are pending, so a crash loses at most those.
func TestAsyncQueueIsBounded(t *testing.T) {
	ctx := context.Background()
	mem := NewMemoryCheckpointer()
	w, err := mem.Open(ctx, "q", true)
	if err != nil {
		t.Fatal(err)
	}
	bw := &blockingWriter{RunWriter: w, gate: make(chan struct{})}
	a := newAsyncWriter(bw, 3)
	done := make(chan int)
	go func() {
		for i := 0; i < 10; i++ {
			kind := RecordDelta
			if i == 0 {
				kind = RecordSnapshot
			}
			if err := a.Append(ctx, Record{Kind: kind, Step: i, Data: []byte("x")}); err != nil {
				t.Error(err)
			}
			done <- i
		}
		close(done)
	}()
	accepted := 0
	for accepted < 10 {
		select {
		case <-done:
			accepted++
			continue
		case <-time.After(100 * time.Millisecond):
		}
		break
	}
	if accepted != 3 {
		t.Fatalf("%d appends accepted while the store was stuck, want the queue depth (3)", accepted)
	}
	close(bw.gate)
	for range done {
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if recs, _ := mem.Records(ctx, "q"); len(recs) != 10 {
		t.Fatalf("%d records stored", len(recs))
	}
}

// Records queued before a failed write was noticed are dropped, not written
// after the gap it left.
func TestAsyncWriterWritesNothingAfterAFailure(t *testing.T) {
	ctx := context.Background()
	mem := NewMemoryCheckpointer()
	store := &failingStore{Checkpointer: mem, failAt: 2}
	w, err := store.Open(ctx, "q", true)
	if err != nil {
		t.Fatal(err)
	}
	a := newAsyncWriter(w, 8)
	_ = a.Append(ctx, Record{Kind: RecordSnapshot, Data: []byte("s0")})
	_ = a.Append(ctx, Record{Kind: RecordDelta, Step: 1, Data: []byte("d1")})
	if err := a.flush(ctx); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("flush after the failed write: %v", err)
	}
	// Step 2 was queued before the writer noticed the failure.
	a.mu.Lock()
	a.queue = append(a.queue, Record{Kind: RecordDelta, Step: 2, Data: []byte("d2")})
	a.cond.Broadcast()
	a.mu.Unlock()
	_ = a.Close()
	if recs, _ := mem.Records(ctx, "q"); len(recs) != 1 {
		t.Fatalf("%d records stored, want only the one before the failure", len(recs))
	}
}

// A run keeps its durability mode: a Resume without WithDurability goes on
// in it, a Resume with the option overrides it for that call.
func TestARunKeepsItsDurabilityMode(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var stored []int // records in the store while b, c, d ran
		look := func(name string) NodeFunc[simple] {
			return func(ctx context.Context, s simple) (simple, error) {
				recs, err := cp.Records(ctx, "r")
				if err != nil {
					return s, err
				}
				stored = append(stored, len(recs))
				return inc(name)(ctx, s)
			}
		}
		g := New[simple]().AddNode("a", inc("a")).AddNode("b", look("b")).AddNode("c", look("c")).AddNode("d", look("d")).
			AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", "d").AddEdge("d", End)
		c := mustCompile(t, g, WithCheckpointer(cp), WithInterruptAfter("a", "c"))
		if _, err := c.Run(ctx, "r", simple{}, WithDurability(DurabilityExit)); !errors.Is(err, ErrPaused) {
			t.Fatal(err)
		}
		if snap, _ := c.State(ctx, "r"); snap.Metadata[MetaDurability] != "exit" {
			t.Fatalf("metadata %v does not keep the mode", snap.Metadata)
		}
		if _, err := c.Resume(ctx, "r"); !errors.Is(err, ErrPaused) { // b, c in exit mode
			t.Fatal(err)
		}
		if _, err := c.Resume(ctx, "r", WithDurability(DurabilitySync)); err != nil { // d in sync mode
			t.Fatal(err)
		}
		// b and c saw only the first call's 2 records (exit mode: the call's own
		// come at its end); d, in sync mode, saw its call's status record.
		if len(stored) != 3 || stored[0] != 2 || stored[1] != 2 || stored[2] <= 5 {
			t.Fatalf("records seen by b, c, d: %v", stored)
		}
		h, _ := c.History(ctx, "r")
		if got := h[len(h)-1].Metadata[MetaDurability]; got != "exit" {
			t.Fatalf("the last checkpoint's metadata lost the mode: %v", h[len(h)-1].Metadata)
		}
	})
}

func TestAForkKeepsItsParentsModeOrTheOneItIsGiven(t *testing.T) {
	ctx := context.Background()
	c := mustCompile(t, line("a", "b"), WithCheckpointer(NewMemoryCheckpointer()))
	if _, err := c.Run(ctx, "p", simple{}, WithDurability(DurabilityAsync)); err != nil {
		t.Fatal(err)
	}
	for id, opts := range map[string][]RunOption{
		"inherits": nil,
		"exit":     {WithDurability(DurabilityExit)},
		"sync":     {WithDurability(DurabilitySync)},
	} {
		snap, err := c.Fork(ctx, "p", 1, id, opts...)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"inherits": "async", "exit": "exit", "sync": ""}[id]
		if got := snap.Metadata[MetaDurability]; got != want {
			t.Errorf("fork %s: mode %q, want %q", id, got, want)
		}
	}
}
