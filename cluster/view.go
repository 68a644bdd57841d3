package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/cluster/gitremote"
	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/runstate"
)

// View is lemmings serve's window on the runs of a PostgreSQL store (it
// implements serve.Source): checkpoints and events from the store, live
// updates by LISTEN/NOTIFY, halts and decisions written for the workers,
// and the run branches fetched from the shared remote into a cache of its
// own (the user's checkout is not touched).
type View struct {
	db     *pgstore.DB
	root   string
	remote gitremote.Remote
	listen *pgstore.Listener

	mu      sync.Mutex
	cache   string               // a bare repository, made on first use
	fetched map[string]time.Time // run → last fetch of its branch
}

// NewView opens a view of the store's runs for the repository at root (the
// runs' remote is remote; "" shows no commits). Close releases it.
func NewView(ctx context.Context, db *pgstore.DB, root, remote string) *View {
	return &View{db: db, root: root, remote: gitremote.Remote{URL: remote}, listen: db.Listen(context.WithoutCancel(ctx)), fetched: map[string]time.Time{}}
}

// Close stops listening and removes the branch cache.
func (v *View) Close() {
	v.listen.Close()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cache != "" {
		os.RemoveAll(v.cache)
	}
}

// Store implements serve.Source.
func (v *View) Store() (*inspect.Store, error) { return inspect.OpenOn(v.root, v.db.Checkpointer()) }

// Events implements serve.Source: the cursor is the last event id read.
func (v *View) Events(ctx context.Context, id string, from int64, max int) (inspect.Events, error) {
	out := inspect.Events{Next: from}
	evs, err := v.db.Events(ctx, id, from, max)
	if err != nil {
		return out, err
	}
	for _, e := range evs {
		out.Next = e.ID
		var ev graph.Event
		if json.Unmarshal(e.Line, &ev) != nil || ev.Kind == "" {
			out.Bad++
			continue
		}
		out.Events = append(out.Events, ev)
	}
	return out, nil
}

// watchFallback wakes a live view even without a notification, in case one
// was lost while the listener reconnected.
const watchFallback = 5 * time.Second

// Watch implements serve.Source: it wakes on the run's NOTIFY.
func (v *View) Watch(ctx context.Context, id string, poll time.Duration) <-chan struct{} {
	sub, unsubscribe := v.listen.Subscribe(id)
	ch := make(chan struct{}, 1)
	go func() {
		defer unsubscribe()
		t := time.NewTicker(max(poll, watchFallback))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-sub:
			case <-t.C:
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch
}

// Report implements serve.Source.
func (v *View) Report(ctx context.Context, id string) ([]byte, error) {
	data, ok, err := v.db.File(ctx, id, "report.md")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("run %s has %w (its worker stores it after each pushed step and at the end)", id, inspect.ErrNoReport)
	}
	return data, nil
}

// HaltRequested implements serve.Source.
func (v *View) HaltRequested(ctx context.Context, id string) bool {
	halt, err := v.db.HaltRequested(ctx, id)
	return err == nil && halt
}

// RequestHalt implements serve.Source: the holder stops before its next
// step, and no worker takes the run until resume --submit.
func (v *View) RequestHalt(ctx context.Context, id string) error { return v.db.SetHalt(ctx, id, true) }

// Decide implements serve.Source: the decision goes to the workers with a
// new job (as resume --approve/--reject --submit).
func (v *View) Decide(ctx context.Context, id string, d runstate.Approval) (bool, error) {
	return true, Enqueue(ctx, v.db, id, &d)
}

// Queued implements serve.Source: a job of the run waits for a worker or
// runs on a live one.
func (v *View) Queued(ctx context.Context, id string) bool {
	n, err := liveJobs(ctx, v.db, id)
	return err == nil && n > 0
}

// fetchEvery bounds how often one run's branch is fetched for the pages.
const fetchEvery = 2 * time.Second

// GitDir implements serve.Source: a bare cache holding the run branch as
// the shared remote has it.
func (v *View) GitDir(ctx context.Context, id, branch string) (string, error) {
	if v.remote.URL == "" {
		return "", fmt.Errorf("no shared git remote configured (cluster.remote): the run's commits are on its workers' remote")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cache == "" {
		dir, err := os.MkdirTemp("", "lemmings-serve-remote-")
		if err != nil {
			return "", err
		}
		if out, err := gitsafe.Command(ctx, dir, "init", "--quiet", "--bare", dir).CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("git init: %v: %s", err, out)
		}
		v.cache = dir
	}
	if time.Since(v.fetched[id]) < fetchEvery {
		return v.cache, nil
	}
	cmd := gitsafe.Command(ctx, v.cache, "fetch", "--quiet", "--no-tags", v.remote.URL, "+refs/heads/"+branch+":refs/heads/"+branch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("the run's branch %s is not on the shared remote yet (%s)", branch, strings.TrimSpace(string(out)))
	}
	v.fetched[id] = time.Now()
	return v.cache, nil
}
