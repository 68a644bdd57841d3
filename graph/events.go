package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Event kinds.
const (
	EventRunStart   = "run_start"  // Run or Resume began
	EventRunEnd     = "run_end"    // the call ended; Status says how, Error why
	EventNodeStart  = "node_start" // a node attempt is about to run
	EventNodeEnd    = "node_end"   // a node returned: Duration, Changed (fields it changed), Error
	EventRetry      = "retry"      // a failed attempt will be retried after Duration
	EventInterrupt  = "interrupt"  // the run pauses: Reason, Next
	EventError      = "error"      // a failure: node, router, merge, store or sink
	EventCheckpoint = "checkpoint" // a step was committed: Bytes written, Changed, Next
	EventCustom     = "custom"     // from Emit: Name and Data
)

// Event is one thing that happened in a run.
type Event struct {
	Kind     string          `json:"kind"`
	RunID    string          `json:"run_id"`
	Step     int             `json:"step"`
	Node     string          `json:"node,omitempty"`
	Name     string          `json:"name,omitempty"` // custom events: the kind given to Emit
	Time     time.Time       `json:"time"`
	Duration time.Duration   `json:"duration_ns,omitempty"`
	Attempt  int             `json:"attempt,omitempty"`
	Error    string          `json:"error,omitempty"`
	Status   Status          `json:"status,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Changed  []string        `json:"changed,omitempty"`
	Next     []string        `json:"next,omitempty"`
	Bytes    int             `json:"bytes,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Sink consumes events. Handle is called for every event of a run, in order,
// from one goroutine at a time; a slow Handle slows the run, so a sink that
// does slow work should queue it. A sink that panics is disabled for the rest
// of the run and the other sinks get an error event saying so; the run itself
// is not affected.
type Sink interface{ Handle(Event) }

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Handle implements Sink.
func (f SinkFunc) Handle(e Event) { f(e) }

// emitter delivers one run's events to its sinks under one lock, so every sink
// sees the same order even when parallel branches emit.
type emitter struct {
	mu    sync.Mutex
	runID string
	sinks []Sink
	dead  []bool
}

func newEmitter(runID string, sinks []Sink) *emitter {
	if len(sinks) == 0 {
		return nil
	}
	return &emitter{runID: runID, sinks: sinks, dead: make([]bool, len(sinks))}
}

func (em *emitter) emit(ev Event) {
	if em == nil {
		return
	}
	ev.RunID = em.runID
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	em.mu.Lock()
	defer em.mu.Unlock()
	for i := range em.sinks {
		if em.dead[i] {
			continue
		}
		if p := em.deliver(i, ev); p != nil {
			em.dead[i] = true
			msg := Event{Kind: EventError, RunID: em.runID, Step: ev.Step, Time: time.Now(),
				Error: fmt.Sprintf("graph: event sink %d (%T) panicked on a %s event and is disabled for this run: %v", i, em.sinks[i], ev.Kind, p)}
			for j := range em.sinks {
				if !em.dead[j] {
					if em.deliver(j, msg) != nil {
						em.dead[j] = true
					}
				}
			}
		}
	}
}

func (em *emitter) deliver(i int, ev Event) (panicked any) {
	defer func() { panicked = recover() }()
	em.sinks[i].Handle(ev)
	return nil
}

type emitKey struct{}

// nodeScope is what a node's context carries for Emit.
type nodeScope struct {
	em   *emitter
	node string
	step int
}

// Emit sends a custom event (Kind "custom", Name kind, Data the JSON of data)
// from inside a node to the run's sinks. It works in parallel branches too;
// outside a node, or with no sinks, it does nothing.
func Emit(ctx context.Context, kind string, data any) {
	sc, _ := ctx.Value(emitKey{}).(*nodeScope)
	if sc == nil || sc.em == nil {
		return
	}
	ev := Event{Kind: EventCustom, Name: kind, Step: sc.step, Node: sc.node}
	if data != nil {
		raw, err := json.Marshal(data)
		if err != nil {
			ev.Error = "graph: Emit: " + err.Error()
		} else {
			ev.Data = raw
		}
	}
	sc.em.emit(ev)
}
