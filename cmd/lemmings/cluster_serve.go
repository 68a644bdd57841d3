package main

// lemmings serve and lemmings runs against a PostgreSQL store
// (docs/distributed.md): the runs every worker writes, from any machine.

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/cluster"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/serve"
)

var _ serve.Source = (*cluster.View)(nil)

// serveSource is where lemmings serve reads runs: the configured store, or
// (nil) the repository's .lemmings/. done releases it.
func (a *app) serveSource(ctx context.Context, root string) (src serve.Source, done func(), err error) {
	cfg, _, err := a.loadConfig(root)
	if err != nil || cfg.Store == "" {
		return nil, func() {}, err
	}
	db, err := cluster.Open(ctx, cfg.Store)
	if err != nil {
		return nil, nil, err
	}
	v := cluster.NewView(ctx, db, root, cfg.Cluster.Remote)
	fmt.Fprintf(a.stdout, "runs: the PostgreSQL store (schema %s), shared by the workers\n", db.Schema())
	return v, func() { v.Close(); db.Close() }, nil
}

// clusterRuns lists the store's runs, and the submitted runs no worker has
// started yet.
func (a *app) clusterRuns(cmd *cobra.Command, dsn string) error {
	ctx := cmd.Context()
	db, err := cluster.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := inspect.OpenOn(a.repoRoot(), db.Checkpointer())
	if err != nil {
		return err
	}
	runs, err := store.List(ctx)
	if err != nil {
		return err
	}
	started := map[string]bool{}
	for _, r := range runs {
		started[r.ID] = true
		status := r.DisplayStatus()
		if r.Status == "running" && !r.Active {
			status = "waiting for a worker"
		}
		v := r.View()
		a.printRun(r.ID, status, r.Updated, v.Remit, v.Tasks.Completed, v.Tasks.Failed)
	}
	subs, err := db.Submitted(ctx)
	if err != nil {
		return err
	}
	for _, s := range subs {
		if !started[s.RunID] {
			a.printRun(s.RunID, "queued", time.Time{}, s.Remit, 0, 0)
		}
	}
	if len(runs)+len(subs) == 0 && !a.jsonOut {
		fmt.Fprintln(a.stdout, `no runs in the store yet: lemmings run --submit "remit"`)
	}
	return nil
}

func (a *app) printRun(id, status string, updated time.Time, remit string, done, failed int) {
	if a.jsonOut {
		m := map[string]any{"run_id": id, "status": status, "remit": remit, "tasks_completed": done, "tasks_failed": failed}
		if !updated.IsZero() {
			m["updated"] = updated
		}
		a.printJSON(m)
		return
	}
	when := ""
	if !updated.IsZero() {
		when = updated.Local().Format("2006-01-02 15:04")
	}
	fmt.Fprintf(a.stdout, "%-28s %-20s %-16s  %2d done %2d failed  %s\n", id, status, when, done, failed, textutil.Clip(remit, 60))
}
