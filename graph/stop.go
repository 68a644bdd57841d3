package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// How a Run or Resume call ends: the status it stores, the sync that makes
// it durable, the event and the error it reports.

func (r *runner[S]) sync(ctx context.Context) error {
	if err := r.w.Sync(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("graph: run %s: sync checkpoints: %w", r.runID, err)
	}
	return nil
}

// finish: the last checkpoint already says done; make it durable.
func (r *runner[S]) finish(ctx context.Context) error {
	if r.w != nil {
		if err := r.sync(ctx); err != nil {
			r.emit(Event{Kind: EventRunEnd, Status: StatusDone, Error: err.Error()})
			return err
		}
	}
	r.emit(Event{Kind: EventRunEnd, Status: StatusDone})
	return nil
}

// stopWith stores a terminal status for this call, syncs, and reports it.
func (r *runner[S]) stopWith(ctx context.Context, status Status, reason string, cause error, pausedBefore bool) error {
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	var serr error
	if r.w != nil {
		serr = r.writeStatus(ctx, status, reason, msg, pausedBefore || r.skipBefore)
		if serr == nil {
			serr = r.sync(ctx)
		}
	}
	if cause != nil && status == StatusFailed {
		r.emit(Event{Kind: EventError, Error: msg})
	}
	end := Event{Kind: EventRunEnd, Status: status, Reason: reason, Error: msg}
	if serr != nil {
		end.Error = strings.TrimPrefix(end.Error+"; ", "; ") + serr.Error()
	}
	r.emit(end)
	if serr != nil {
		if cause == nil {
			return serr
		}
		return errors.Join(cause, serr)
	}
	return nil
}

func (r *runner[S]) fail(ctx context.Context, err error) error {
	if serr := r.stopWith(ctx, StatusFailed, "", err, false); serr != nil {
		return serr
	}
	return err
}

func (r *runner[S]) interrupted(ctx context.Context, cause error) error {
	err := fmt.Errorf("graph: run %s interrupted at step %d: %w", r.runID, r.step, cause)
	if serr := r.stopWith(ctx, StatusInterrupted, "", err, false); serr != nil {
		return serr
	}
	return err
}

// cancelled ends a call whose context was cancelled: halted when the cause
// of the cancellation wraps ErrHalted (a halt or a time limit that stopped a
// node in flight), interrupted otherwise.
func (r *runner[S]) cancelled(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrHalted) {
		return r.halt(ctx, strings.TrimPrefix(cause.Error(), ErrHalted.Error()+": "))
	}
	return r.interrupted(ctx, err)
}

// pauseError is the error of a call that paused; it matches ErrPaused.
type pauseError struct {
	runID  string
	step   int
	reason string
}

func (e *pauseError) Error() string {
	return fmt.Sprintf("graph: run %s at step %d (%s): %v", e.runID, e.step, e.reason, ErrPaused)
}

func (e *pauseError) Unwrap() error { return ErrPaused }

// haltError is the error of a call that halted; it matches ErrHalted.
type haltError struct {
	runID  string
	step   int
	reason string
}

func (e *haltError) Error() string {
	if e.reason == "" {
		return fmt.Sprintf("graph: run %s stopped at step %d: %v", e.runID, e.step, ErrHalted)
	}
	return fmt.Sprintf("graph: run %s stopped at step %d (%s): %v", e.runID, e.step, e.reason, ErrHalted)
}

func (e *haltError) Unwrap() error { return ErrHalted }

// halt stores the run as halted; reason says why ("" for the stop check).
func (r *runner[S]) halt(ctx context.Context, reason string) error {
	err := &haltError{runID: r.runID, step: r.step, reason: reason}
	if serr := r.stopWith(ctx, StatusHalted, reason, nil, false); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}

// paused ends a call whose last step asked for a pause and is stored paused
// already (commit): it syncs and reports.
func (r *runner[S]) paused(ctx context.Context, reason string) error {
	reason = r.c.redactText(reason)
	r.emit(Event{Kind: EventInterrupt, Reason: reason, Next: r.nextNames(r.next, r.sends)})
	err := &pauseError{runID: r.runID, step: r.step, reason: reason}
	var serr error
	if r.w != nil {
		serr = r.sync(ctx)
	}
	end := Event{Kind: EventRunEnd, Status: StatusPaused, Reason: reason}
	if serr != nil {
		end.Error = serr.Error()
	}
	r.emit(end)
	if serr != nil {
		return errors.Join(err, serr)
	}
	return err
}

func (r *runner[S]) pause(ctx context.Context, reason string, before bool) error {
	r.emit(Event{Kind: EventInterrupt, Reason: reason, Next: r.nextNames(r.next, r.sends)})
	err := &pauseError{runID: r.runID, step: r.step, reason: reason}
	if serr := r.stopWith(ctx, StatusPaused, reason, nil, before); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}
