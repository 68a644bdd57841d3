package graph

import (
	"bytes"
	"context"
	"fmt"
	"sync"
)

// Durability says when a run's checkpoints reach the store.
type Durability string

// Durability modes, from most to least durable.
const (
	// DurabilitySync commits each step before the next one starts (the default).
	DurabilitySync Durability = "sync"
	// DurabilityAsync hands each step's records to a writer goroutine and starts
	// the next step at once. The records are flushed (the run waits for them) when
	// the call ends for any reason, at a pause, and before and after a
	// side-effect node; at most AsyncQueueDepth records are ever waiting.
	DurabilityAsync Durability = "async"
	// DurabilityExit keeps the call's records in memory and writes them when the
	// call ends: done, paused, halted, interrupted or failed. A crash loses
	// everything the call did.
	DurabilityExit Durability = "exit"
)

// MetaDurability is the metadata key that keeps a run's durability mode when
// it is not DurabilitySync: a Resume without WithDurability goes on in the
// mode the run was started (or forked) in.
const MetaDurability = "graph.durability"

// runMode resolves the durability of a call: the call's option, else the
// run's stored mode, else the compiled default.
func (c *Compiled[S]) runMode(option Durability, meta map[string]string) Durability {
	if option != "" {
		return option
	}
	if d := Durability(meta[MetaDurability]); d.valid() {
		return d
	}
	return c.durable
}

// AsyncQueueDepth bounds the records DurabilityAsync lets wait for the store:
// a crash loses at most these and the step in flight.
const AsyncQueueDepth = 64

func (d Durability) valid() bool {
	return d == DurabilitySync || d == DurabilityAsync || d == DurabilityExit
}

// BatchWriter is a RunWriter that commits several records with one write (one
// write(2), one INSERT). The async and exit durability modes use it when the
// store offers it. Records are committed in order; on error a prefix of recs
// may be committed, each record whole, and nothing after it.
type BatchWriter interface {
	AppendBatch(ctx context.Context, recs []Record) error
}

// appendAll commits recs through w, as one batch when w can.
func appendAll(ctx context.Context, w RunWriter, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	if bw, ok := w.(BatchWriter); ok {
		return bw.AppendBatch(ctx, recs)
	}
	for _, rec := range recs {
		if err := w.Append(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

// wrapWriter puts w behind the writer the durability mode needs.
func wrapWriter(w RunWriter, d Durability) RunWriter {
	switch d {
	case DurabilityAsync:
		return newAsyncWriter(w, AsyncQueueDepth)
	case DurabilityExit:
		return &exitWriter{w: w}
	}
	return w
}

// flushWriter is a wrapped writer whose records may not be in the store yet.
type flushWriter interface {
	RunWriter
	flush(ctx context.Context) error
}

// asyncWriter writes appended records in order from a goroutine of its own;
// Append returns once the record is queued. The first failed write is kept:
// every later Append, Sync and flush returns it, and nothing queued after it
// is written, so the store never holds a step whose predecessor is missing.
type asyncWriter struct {
	w     RunWriter
	mu    sync.Mutex
	cond  *sync.Cond
	queue []Record
	busy  int // records taken by the writer goroutine and not yet written
	depth int
	err   error
	stop  bool
	done  chan struct{}
}

func newAsyncWriter(w RunWriter, depth int) *asyncWriter {
	a := &asyncWriter{w: w, depth: depth, done: make(chan struct{})}
	a.cond = sync.NewCond(&a.mu)
	go a.loop()
	return a
}

func (a *asyncWriter) loop() {
	defer close(a.done)
	a.mu.Lock()
	for {
		for len(a.queue) == 0 && !a.stop {
			a.cond.Wait()
		}
		if len(a.queue) == 0 {
			a.mu.Unlock()
			return
		}
		batch := a.queue
		a.queue, a.busy = nil, len(batch)
		failed := a.err != nil
		a.mu.Unlock()
		var err error
		if !failed {
			err = appendAll(context.Background(), a.w, batch)
		}
		a.mu.Lock()
		if err != nil && a.err == nil {
			a.err = fmt.Errorf("asynchronous checkpoint write (steps %d–%d): %w", batch[0].Step, batch[len(batch)-1].Step, err)
		}
		a.busy = 0
		a.cond.Broadcast()
	}
}

// Append queues a copy of rec; it waits while the queue is full.
func (a *asyncWriter) Append(_ context.Context, rec Record) error {
	rec.Data = bytes.Clone(rec.Data)
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.err == nil && len(a.queue)+a.busy >= a.depth {
		a.cond.Wait()
	}
	if a.err != nil {
		return a.err
	}
	if a.stop {
		return fmt.Errorf("append after close")
	}
	a.queue = append(a.queue, rec)
	a.cond.Broadcast()
	return nil
}

// flush waits until every queued record is written.
func (a *asyncWriter) flush(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.queue)+a.busy > 0 {
		a.cond.Wait()
	}
	return a.err
}

func (a *asyncWriter) Sync(ctx context.Context) error {
	if err := a.flush(ctx); err != nil {
		return err
	}
	return a.w.Sync(ctx)
}

func (a *asyncWriter) Prune(ctx context.Context, keepFrom int) (int64, error) {
	if err := a.flush(ctx); err != nil {
		return 0, err
	}
	return a.w.Prune(ctx, keepFrom)
}

// Close writes what is queued, stops the goroutine and closes the store's writer.
func (a *asyncWriter) Close() error {
	a.mu.Lock()
	if a.stop {
		a.mu.Unlock()
		return nil
	}
	a.stop = true
	a.cond.Broadcast()
	a.mu.Unlock()
	<-a.done
	return a.w.Close()
}

// exitWriter keeps the records of a call in memory until Sync (which the
// runtime calls when the call ends) or Close writes them, as one batch when
// the store can.
type exitWriter struct {
	w    RunWriter
	recs []Record
	err  error
}

func (e *exitWriter) Append(_ context.Context, rec Record) error {
	if e.err != nil {
		return e.err
	}
	rec.Data = bytes.Clone(rec.Data)
	e.recs = append(e.recs, rec)
	return nil
}

func (e *exitWriter) flush(ctx context.Context) error {
	if e.err != nil {
		return e.err
	}
	recs := e.recs
	e.recs = nil
	if err := appendAll(ctx, e.w, recs); err != nil {
		e.err = fmt.Errorf("checkpoint write at the end of the call (%d records): %w", len(recs), err)
		return e.err
	}
	return nil
}

func (e *exitWriter) Sync(ctx context.Context) error {
	if err := e.flush(ctx); err != nil {
		return err
	}
	return e.w.Sync(ctx)
}

func (e *exitWriter) Prune(ctx context.Context, keepFrom int) (int64, error) {
	if err := e.flush(ctx); err != nil {
		return 0, err
	}
	return e.w.Prune(ctx, keepFrom)
}

// Close writes what is kept (a call that ends without a sync point, such as
// a failed start) and closes the store's writer.
func (e *exitWriter) Close() error {
	_ = e.flush(context.Background())
	return e.w.Close()
}
