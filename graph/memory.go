package graph

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// MemoryCheckpointer keeps runs in memory, for tests and short-lived programs.
// It stores the same records as the durable store, so it exercises the same
// encoding, deltas and resume logic. Safe for concurrent use.
type MemoryCheckpointer struct {
	mu   sync.Mutex
	runs map[string]*memRun
}

type memRun struct {
	recs     []Record
	lastSnap int // index of the last snapshot in recs
	locked   bool
}

// NewMemoryCheckpointer returns an empty in-memory checkpointer.
func NewMemoryCheckpointer() *MemoryCheckpointer {
	return &MemoryCheckpointer{runs: map[string]*memRun{}}
}

// Open implements Checkpointer.
func (m *MemoryCheckpointer) Open(_ context.Context, runID string, create bool) (RunWriter, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.runs[runID]
	switch {
	case create && r != nil && len(r.recs) > 0:
		return nil, fmt.Errorf("run %s: %w", runID, ErrRunExists)
	case !create && (r == nil || len(r.recs) == 0):
		return nil, fmt.Errorf("run %s: %w", runID, ErrRunNotFound)
	case r != nil && r.locked:
		return nil, fmt.Errorf("run %s: %w (in this process)", runID, ErrRunLocked)
	}
	if r == nil {
		r = &memRun{}
		m.runs[runID] = r
	}
	r.locked = true
	return &memWriter{m: m, id: runID, r: r}, nil
}

func (m *MemoryCheckpointer) get(runID string) (*memRun, error) {
	r := m.runs[runID]
	if r == nil || len(r.recs) == 0 {
		return nil, fmt.Errorf("run %s: %w", runID, ErrRunNotFound)
	}
	return r, nil
}

func copyRecords(recs []Record) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = Record{Kind: r.Kind, Step: r.Step, Data: append([]byte(nil), r.Data...)}
	}
	return out
}

// Tail implements Checkpointer.
func (m *MemoryCheckpointer) Tail(_ context.Context, runID string) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.get(runID)
	if err != nil {
		return nil, err
	}
	return copyRecords(r.recs[r.lastSnap:]), nil
}

// Records implements Checkpointer.
func (m *MemoryCheckpointer) Records(_ context.Context, runID string) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.get(runID)
	if err != nil {
		return nil, err
	}
	return copyRecords(r.recs), nil
}

// Runs implements Checkpointer.
func (m *MemoryCheckpointer) Runs(_ context.Context) ([]StoredRun, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]StoredRun, 0, len(m.runs))
	for id, r := range m.runs {
		if len(r.recs) == 0 {
			continue
		}
		out = append(out, StoredRun{ID: id, Last: copyRecords(r.recs[len(r.recs)-1:])[0], Active: r.locked})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Delete implements Checkpointer.
func (m *MemoryCheckpointer) Delete(_ context.Context, runID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.get(runID)
	if err != nil {
		return err
	}
	if r.locked {
		return fmt.Errorf("run %s: %w", runID, ErrRunLocked)
	}
	delete(m.runs, runID)
	return nil
}

type memWriter struct {
	m      *MemoryCheckpointer
	id     string
	r      *memRun
	closed bool
}

func (w *memWriter) Append(_ context.Context, rec Record) error {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	if w.closed {
		return fmt.Errorf("run %s: append after close", w.id)
	}
	if !rec.Kind.valid() {
		return fmt.Errorf("run %s: invalid record kind %d", w.id, rec.Kind)
	}
	if len(w.r.recs) == 0 && rec.Kind != RecordSnapshot {
		return fmt.Errorf("run %s: the first record must be a snapshot", w.id)
	}
	if rec.Kind == RecordSnapshot {
		w.r.lastSnap = len(w.r.recs)
	}
	w.r.recs = append(w.r.recs, Record{Kind: rec.Kind, Step: rec.Step, Data: append([]byte(nil), rec.Data...)})
	return nil
}

func (w *memWriter) Sync(context.Context) error { return nil }

func (w *memWriter) Prune(_ context.Context, keepFrom int) (int64, error) {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	// Cut at the last snapshot at or before keepFrom: it and what follows load every later step.
	cut := 0
	for i, r := range w.r.recs[:w.r.lastSnap+1] {
		if r.Kind == RecordSnapshot && r.Step <= keepFrom {
			cut = i
		}
	}
	var freed int64
	for _, r := range w.r.recs[:cut] {
		freed += int64(len(r.Data))
	}
	w.r.recs = append([]Record(nil), w.r.recs[cut:]...)
	w.r.lastSnap -= cut
	return freed, nil
}

func (w *memWriter) Close() error {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	if !w.closed {
		w.closed = true
		w.r.locked = false
		if len(w.r.recs) == 0 {
			delete(w.m.runs, w.id)
		}
	}
	return nil
}
