package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/lemmings-dev/lemmings/cluster/gitremote"
	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
)

// reapLoop runs the reaper every reap interval until ctx ends. Every worker
// runs it: two reapers at once insert at most a duplicate job, which finds
// the run held (and snoozes) or finished (and completes).
func (w *Worker) reapLoop(ctx context.Context) {
	every := w.o.Config.Cluster.ReapInterval
	if every <= 0 {
		every = 2 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !w.healthy.Load() {
			continue // a box that takes no runs hands them to the others
		}
		n, err := Reap(ctx, w.o.DB, w.app)
		if err != nil {
			w.log.Warn("reaper", "err", err)
		} else if n > 0 {
			w.log.Info("reaper re-enqueued runs", "count", n)
		}
		if err := Retain(ctx, w.o.DB, w.app, w.o.Remote, w.o.RepoDir, w.o.Config.Cluster.EventsRetention); err != nil {
			w.log.Warn("retention", "err", err)
		}
	}
}

// Reap re-enqueues every submitted run that is not done, not waiting for a
// decision, not halted on request, not failed for good, whose lock no one
// holds and for which no job waits or was just taken. It returns how many
// it enqueued.
func Reap(ctx context.Context, db *pgstore.DB, app *graph.Reader[runstate.State]) (int, error) {
	subs, err := db.Submitted(ctx)
	if err != nil {
		return 0, err
	}
	infos, err := app.ListRuns(ctx)
	if err != nil {
		return 0, err
	}
	byID := map[string]graph.RunInfo{}
	for _, in := range infos {
		byID[in.ID] = in
	}
	client, err := insertOnly(db)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range subs {
		if in, ok := byID[s.RunID]; ok {
			switch in.Status {
			case graph.StatusDone, graph.StatusPaused, graph.StatusFailed:
				continue // finished; waiting for a person; River retries a failed job, then a person decides
			}
			if in.Active {
				continue
			}
		}
		// A run with no checkpoint yet (its first worker died before step 0)
		// is reaped too: the pid check stands in for Active.
		if pid, err := db.HolderPID(ctx, s.RunID); err != nil || pid != 0 {
			continue
		}
		live, err := liveJobs(ctx, db, s.RunID)
		if err != nil || live > 0 {
			continue
		}
		if _, err := client.Insert(ctx, RunArgs{RunID: s.RunID}, &river.InsertOpts{Queue: s.Queue, MaxAttempts: maxAttempts}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Retain applies cluster.events_retention to finished runs, once each:
// their events older than it are deleted, their checkpoints pruned to the
// last one (status, report and resume-free reads still work; the history
// view shows that one step), and their step refs on the remote that the
// last checkpoint does not name deleted. The run branch stays. dir is a
// repository to run git in.
func Retain(ctx context.Context, db *pgstore.DB, app *graph.Reader[runstate.State], remote gitremote.Remote, dir string, keep time.Duration) error {
	if keep <= 0 {
		return nil
	}
	infos, err := app.ListRuns(ctx)
	if err != nil {
		return err
	}
	var done []string
	for _, in := range infos {
		if in.Status == graph.StatusDone && time.Since(in.Updated) > keep {
			done = append(done, in.ID)
		}
	}
	if _, err := db.DeleteEventsBefore(ctx, done, time.Now().Add(-keep)); err != nil {
		return err
	}
	unpruned, err := db.Unpruned(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range done {
		if !unpruned[id] {
			continue
		}
		if claimed, err := db.ClaimPrune(ctx, id); err != nil || !claimed {
			continue
		}
		if err := pruneRun(ctx, app, remote, dir, id); err != nil {
			errs = append(errs, err)
			_ = db.UnclaimPrune(context.WithoutCancel(ctx), id)
		}
	}
	return errors.Join(errs...)
}

// pruneRun prunes a finished run's checkpoints to its last one, then the
// step refs no retained checkpoint names.
func pruneRun(ctx context.Context, app *graph.Reader[runstate.State], remote gitremote.Remote, dir, id string) error {
	snap, err := app.State(ctx, id)
	if err != nil {
		return err
	}
	if _, err := app.Prune(ctx, id, snap.Step); err != nil {
		return err
	}
	_, err = pruneOrphanRefs(ctx, app, remote, dir, id)
	return err
}

// pruneOrphanRefs deletes the run's step refs on the remote that none of
// its retained checkpoints names, except those of the last checkpoint's
// commit: refs of steps pruned away, and those a holder pushed just before
// it died (never checkpointed).
func pruneOrphanRefs(ctx context.Context, app *graph.Reader[runstate.State], remote gitremote.Remote, dir, id string) (int, error) {
	if remote.URL == "" {
		return 0, nil
	}
	hist, err := app.History(ctx, id)
	if err != nil {
		return 0, err
	}
	named := map[string]bool{}
	for _, h := range hist {
		if ref := h.Metadata["git_ref"]; ref != "" {
			named[ref] = true
		}
	}
	last := ""
	if len(hist) > 0 {
		last = hist[len(hist)-1].Metadata[run.MetaGitHead]
	}
	n, err := remote.PruneRefs(ctx, dir, id, func(ref, commit string) bool { return named[ref] || commit == last })
	if err != nil {
		return 0, fmt.Errorf("run %s: prune step refs: %w", id, err)
	}
	return n, nil
}
