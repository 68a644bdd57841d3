package serve

import (
	"context"
	"time"

	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Source is where serve reads runs and sends what the user asks of them:
// the repository's .lemmings/ (the default), or a shared store that
// lemmings workers on other machines write (package cluster's View).
type Source interface {
	// Store opens the runs' checkpoints.
	Store() (*inspect.Store, error)
	// Events reads up to max (0: every) events of a run past the cursor from
	// (0: the first); the result's Next is the cursor to read on from.
	Events(ctx context.Context, id string, from int64, max int) (inspect.Events, error)
	// Watch returns a channel that receives when the run may have new
	// events, at least every poll, until ctx ends.
	Watch(ctx context.Context, id string, poll time.Duration) <-chan struct{}
	// Report is the run's report (an error wrapping inspect.ErrNoReport
	// when it is not written yet).
	Report(ctx context.Context, id string) ([]byte, error)
	HaltRequested(ctx context.Context, id string) bool
	// RequestHalt asks the run to stop after its current node.
	RequestHalt(ctx context.Context, id string) error
	// GitDir is a repository holding the run's branch.
	GitDir(ctx context.Context, id, branch string) (string, error)
	// Decide hands a paused run's decision to whoever goes on with it; ok
	// false: nobody else does, and serve resumes the run in this process.
	Decide(ctx context.Context, id string, d runstate.Approval) (ok bool, err error)
	// Queued reports whether work for the run waits to be taken (a decision
	// or a resume handed to workers): its events will move again, so a live
	// view stays open for them.
	Queued(ctx context.Context, id string) bool
}

// source is the configured Source, or the repository's files.
func (s *Server) source() Source {
	if s.opts.Source != nil {
		return s.opts.Source
	}
	return localSource{root: s.opts.Root}
}

// localSource reads the runs of the repository at root from its .lemmings/.
type localSource struct{ root string }

func (l localSource) Store() (*inspect.Store, error) { return inspect.Open(l.root) }

func (l localSource) Events(_ context.Context, id string, from int64, max int) (inspect.Events, error) {
	return inspect.RunEvents(l.root, id, from, max)
}

func (l localSource) Watch(ctx context.Context, _ string, poll time.Duration) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go func() {
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	return ch
}

func (l localSource) Report(_ context.Context, id string) ([]byte, error) {
	return inspect.ReadReport(l.root, id)
}

func (l localSource) HaltRequested(_ context.Context, id string) bool {
	return inspect.HaltRequested(l.root, id)
}

func (l localSource) RequestHalt(_ context.Context, id string) error {
	return inspect.RequestHalt(l.root, id)
}

func (l localSource) GitDir(context.Context, string, string) (string, error) { return l.root, nil }

func (l localSource) Decide(context.Context, string, runstate.Approval) (bool, error) {
	return false, nil
}

// Queued: nothing queues runs here; a resume serve starts is its own.
func (l localSource) Queued(context.Context, string) bool { return false }
