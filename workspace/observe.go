package workspace

import (
	"context"
	"time"

	"github.com/lemmings-dev/lemmings/sandbox"
)

// Observer sees the gates and commits done under a context that carries it
// (WithObserver): tracing places each under the step that did it. Its
// methods run on the caller's goroutine after the work, so they must be quick.
type Observer interface {
	ObserveGate(ctx context.Context, g GateRecord)
	ObserveCommit(ctx context.Context, c CommitRecord)
}

// GateRecord is one gate run as an observer sees it.
type GateRecord struct {
	Start  time.Time
	Result GateResult
}

// CommitRecord is one Commit call as an observer sees it: SHA is empty when
// nothing was committed (Err is then ErrNothingToCommit or the failure).
type CommitRecord struct {
	Start   time.Time
	End     time.Time
	Branch  string
	Message string
	SHA     string
	Err     error
}

type observerKey struct{}

// WithObserver returns a context whose gates and commits o sees.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

func observerFrom(ctx context.Context) Observer {
	o, _ := ctx.Value(observerKey{}).(Observer)
	return o
}

// RunGate runs g.Command with `sh -c` in dir, confined by box (nil: a box
// of the default configuration, made for this gate): dir and a private
// temp dir writable, no network unless g.Network, the box's minimal
// environment with CI=true. It runs in its own process group, with stdin
// empty. On timeout (g.Timeout, or DefaultGateTimeout) or when ctx is
// cancelled the whole group gets SIGTERM, then SIGKILL, so grandchildren die
// too. Output keeps its last maxOutput bytes (≤ 0: DefaultMaxOutput) behind
// a "[… N bytes cut …]" marker. The context's Observer, if any, sees the
// result.
func RunGate(ctx context.Context, box *sandbox.Box, dir string, g Gate, maxOutput int) GateResult {
	o := observerFrom(ctx)
	if o == nil {
		return runGate(ctx, box, dir, g, maxOutput)
	}
	start := time.Now()
	r := runGate(ctx, box, dir, g, maxOutput)
	o.ObserveGate(ctx, GateRecord{Start: start, Result: r})
	return r
}

// Commit stages every change in the worktree (new, modified and deleted
// files; ignored files stay out) and commits it with the message and the
// trailers ("Key: value" lines after a blank line, keys sorted). It returns
// the new commit's hash, or ErrNothingToCommit when there is no change.
// The repository's user identity is used when configured, otherwise
// "lemmings <lemmings@localhost>" (given with -c, never written to any
// config). Hooks are skipped (--no-verify): the gates are the checks. The
// context's Observer, if any, sees the commit.
func (w *Worktree) Commit(ctx context.Context, message string, trailers map[string]string) (string, error) {
	o := observerFrom(ctx)
	if o == nil {
		return w.commit(ctx, message, trailers)
	}
	start := time.Now()
	sha, err := w.commit(ctx, message, trailers)
	o.ObserveCommit(ctx, CommitRecord{Start: start, End: time.Now(), Branch: w.Branch(), Message: message, SHA: sha, Err: err})
	return sha, err
}
