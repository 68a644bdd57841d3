package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
)

// How a process's stretch of a run ends, in the one vocabulary
// (runstate.StandingOf): a halt request or the wall time cut the node in flight
// (a model call, a gate) and store the run as stopped and resumable; the
// run_end event says what status, report and exit code say.

// ErrHaltRequested is the cause a halt request cancels a run with.
var ErrHaltRequested = fmt.Errorf("%w: halt requested", graph.ErrHalted)

// haltPoll is how often a running process looks for a halt request (the
// halt file); backendHaltPoll when it must ask a shared store.
const (
	haltPoll        = 250 * time.Millisecond
	backendHaltPoll = 2 * time.Second
)

// WallTimeError is the cause the wall-time limit cancels a run with.
func WallTimeError(limit time.Duration) error {
	return fmt.Errorf("%w: reached the wall-time limit of %s (limits.max_wall_time)", graph.ErrHalted, limit)
}

// watchStops returns a context that a halt request (halted, polled every
// every) or the wall time (limit from now; 0: none) cancels with its cause,
// so the node in flight stops at once instead of after its model call.
// stopping (when set) hears either cause once.
func watchStops(ctx context.Context, halted func() bool, every, limit time.Duration, stopping func(error)) (context.Context, func()) {
	parent := ctx
	var cancelWall context.CancelFunc = func() {}
	if limit > 0 {
		ctx, cancelWall = context.WithDeadlineCause(ctx, time.Now().Add(limit), WallTimeError(limit))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				if stopping != nil && parent.Err() == nil {
					stopping(context.Cause(ctx)) // the wall time
				}
				return
			case <-t.C:
				if halted() {
					cancel(ErrHaltRequested)
					if stopping != nil {
						stopping(ErrHaltRequested)
					}
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		wg.Wait()
		cancel(nil)
		cancelWall()
	}
}

// standingOf says how the run stands after this process's stretch.
func standingOf(snap graph.Snapshot[runstate.State], runErr error) runstate.Standing {
	st := runstate.Stored{Status: snap.Status, Reason: snap.Reason, Error: snap.Error}
	if st.Status == "" {
		st.Status = graph.StatusFailed // nothing stored: the run failed before its first checkpoint
	}
	if st.Error == "" && runErr != nil && !errors.Is(runErr, graph.ErrPaused) && !errors.Is(runErr, graph.ErrHalted) {
		st.Error = runErr.Error()
	}
	s := snap.State
	if s.RunID == "" {
		s.RunID = snap.RunID
	}
	return runstate.StandingOf(st, &s)
}

// endSink tells every sink the run's status in the one vocabulary: the
// graph's run_end says "done" for any run that reached its end, so the
// status the Report node settled (its "report" event) replaces it, and a
// run_end of a run that stopped earlier is mapped the same way status and
// report map it.
type endSink struct {
	runID string
	sinks []graph.Sink
	// ended is the standing the Report node announced.
	ended *runstate.Standing
}

func (e *endSink) Handle(ev graph.Event) {
	switch {
	case ev.Kind == graph.EventCustom && ev.Name == events.KindReport:
		if r, ok := events.As[events.Report](ev); ok && r.Status != "" {
			st := r.Standing()
			e.ended = &st
		}
	case ev.Kind == graph.EventRunEnd:
		ev = e.mapEnd(ev)
	}
	for _, s := range e.sinks {
		s.Handle(ev)
	}
}

func (e *endSink) mapEnd(ev graph.Event) graph.Event {
	var st runstate.Standing
	if ev.Status == graph.StatusDone && e.ended != nil {
		st = *e.ended
	} else {
		st = runstate.StandingOf(runstate.Stored{Status: ev.Status, Reason: ev.Reason, Error: ev.Error}, &runstate.State{RunID: e.runID})
	}
	stored := ev.Status
	ev.Status, ev.Reason = graph.Status(st.Status), st.Reason
	if st.Status == runstate.RunFailed && ev.Error == "" {
		ev.Error = st.Reason // a run that ended failed says why where a fault would
	}
	ev.Data, _ = json.Marshal(events.RunEnd{Next: st.Next, Resumable: st.Resumable, Stored: stored})
	return ev
}
