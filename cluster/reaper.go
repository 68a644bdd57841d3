package cluster

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/nodes"
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
		if err := Retain(ctx, w.o.DB, w.app, w.o.Config.Cluster.EventsRetention); err != nil {
			w.log.Warn("retention", "err", err)
		}
	}
}

// staleRunning: a job taken longer ago than this whose run nobody holds
// belongs to a worker that died.
const staleRunning = 5 * time.Second

// Reap re-enqueues every submitted run that is not done, not waiting for a
// decision, not halted on request, not failed for good, whose lock no one
// holds and for which no job waits or was just taken. It returns how many
// it enqueued.
func Reap(ctx context.Context, db *pgstore.DB, app *graph.Compiled[nodes.WorkflowState]) (int, error) {
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
		live, err := liveJobs(ctx, db, s.RunID, staleRunning)
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

// Retain applies cluster.events_retention to finished runs: their events
// older than it are deleted. (Checkpoints of a finished run are kept: the
// history view reads them; `lemmings clean` deletes whole runs.)
func Retain(ctx context.Context, db *pgstore.DB, app *graph.Compiled[nodes.WorkflowState], keep time.Duration) error {
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
	_, err = db.DeleteEventsBefore(ctx, done, time.Now().Add(-keep))
	return err
}
