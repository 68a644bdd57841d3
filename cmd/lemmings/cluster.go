package main

// Runs kept in a PostgreSQL store (docs/distributed.md): lemmings worker,
// run/resume --submit, and status, log, report and halt read and written
// through the store when the configuration names one (store, LEMMINGS_STORE).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/cluster"
	"github.com/lemmings-dev/lemmings/cluster/gitremote"
	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/internal/termprogress"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// wrapForCluster gives run and resume a --submit flag, and makes status,
// log, report and halt use the PostgreSQL store when one is configured.
func wrapForCluster(a *app, root *cobra.Command) {
	for _, c := range root.Commands() {
		name, orig := c.Name(), c.RunE
		switch name {
		case "demo":
			wrapDemoForCluster(a, c)
		case "run", "resume":
			submit := c.Flags().Bool("submit", false, "enqueue for the lemmings workers sharing the configured PostgreSQL store (docs/distributed.md) instead of running here")
			queue := c.Flags().String("queue", "", "with --submit: the queue (default: model_<primary model>)")
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if !*submit {
					return orig(cmd, args)
				}
				if name == "run" {
					return a.submitRun(cmd, args, *queue)
				}
				return a.submitResume(cmd, args)
			}
		case "runs":
			c.RunE = func(cmd *cobra.Command, args []string) error {
				cfg, _, err := a.loadConfig(a.repoRoot())
				if err != nil {
					return err // a refused store is said, not silently replaced by the local one
				}
				if cfg.Store == "" {
					return orig(cmd, args)
				}
				return a.clusterRuns(cmd, cfg.Store)
			}
		case "status", "log", "report", "halt":
			c.RunE = func(cmd *cobra.Command, args []string) error {
				cfg, _, err := a.loadConfig(a.repoRoot())
				if err != nil {
					return err // a refused store is said, not silently replaced by the local one
				}
				if cfg.Store == "" {
					return orig(cmd, args)
				}
				db, err := cluster.Open(cmd.Context(), cfg.Store)
				if err != nil {
					return err
				}
				defer db.Close()
				if len(args) == 0 {
					return usageErr("with a PostgreSQL store, name the run: lemmings %s <run-id>", name)
				}
				return a.clusterCommand(cmd, db, name, args[0])
			}
		}
	}
}

// clusterConfig loads the configuration and checks it names a store and a remote.
func (a *app) clusterConfig(root string, remote bool) (*config.Config, error) {
	cfg, _, err := a.loadRunConfig(root)
	if err != nil {
		return nil, err
	}
	if cfg.Store == "" {
		return nil, usageErr("no PostgreSQL store configured: set store: postgres://… in your user file (~/.config/lemmings/config.yaml) or LEMMINGS_STORE (docs/distributed.md)")
	}
	if remote && cfg.Cluster.Remote == "" {
		return nil, usageErr("no shared git remote configured: set cluster.remote (a bare repository path or URL) or LEMMINGS_CLUSTER__REMOTE (docs/distributed.md)")
	}
	return cfg, nil
}

func (a *app) submitRun(cmd *cobra.Command, args []string, queue string) error {
	ctx := cmd.Context()
	remit := ""
	if len(args) == 1 {
		remit = strings.TrimSpace(args[0])
	}
	if remit == "" {
		return usageErr(`give a remit: lemmings run --submit "what to do" (a --plan file is not carried to workers yet)`)
	}
	approve, _ := cmd.Flags().GetString("approve")
	if p, _ := cmd.Flags().GetString("plan"); p != "" {
		return usageErr("--plan is not carried to workers yet: submit a remit")
	}
	root, err := a.gitRoot(ctx)
	if err != nil {
		return err
	}
	cfg, err := a.clusterConfig(root, true)
	if err != nil {
		return err
	}
	repo, err := workspace.OpenRepo(ctx, root)
	if err != nil {
		return err
	}
	base, err := repo.HeadCommit(ctx)
	if err != nil {
		return err
	}
	id := run.NewRunID()
	remote := gitremote.Remote{URL: cfg.Cluster.Remote}
	if err := remote.PushBase(ctx, root, id, base); err != nil {
		return err
	}
	db, err := cluster.Open(ctx, cfg.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	if queue == "" {
		queue = cluster.QueueFor(cfg.Roles[config.RolePrimary].Model)
	}
	sub := pgstore.Submission{RunID: id, Remit: remit, Base: base, Approve: approve, Queue: queue, Choices: run.ChoicesOf(cfg)}
	if err := cluster.Submit(ctx, db, sub); err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(map[string]any{"kind": "submitted", "run_id": id, "queue": queue, "base": base})
		return nil
	}
	fmt.Fprintf(a.stdout, "submitted run %s to queue %s (from %s)\nlemmings status %s and lemmings log -f %s follow it from any machine with this store\n",
		id, queue, base[:10], id, id)
	return nil
}

func (a *app) submitResume(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	if len(args) != 1 {
		return usageErr("resume --submit needs the run id")
	}
	id := args[0]
	cfg, err := a.clusterConfig(a.repoRoot(), false)
	if err != nil {
		return err
	}
	db, err := cluster.Open(ctx, cfg.Store)
	if err != nil {
		return err
	}
	defer db.Close()
	approve, _ := cmd.Flags().GetBool("approve")
	reject, _ := cmd.Flags().GetString("reject")
	var decision *runstate.Approval
	if approve || reject != "" {
		if approve && reject != "" {
			return usageErr("--approve and --reject exclude each other")
		}
		app, err := run.StoreOn(db.Checkpointer())
		if err != nil {
			return err
		}
		snap, err := app.State(ctx, id)
		if err != nil {
			return err
		}
		kind, err := inspect.PausedFor(snap)
		if err != nil {
			return err
		}
		decision = &runstate.Approval{Kind: kind, Approved: approve, Reason: reject}
	}
	if err := cluster.Enqueue(ctx, db, id, decision); err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(map[string]any{"kind": "resubmitted", "run_id": id, "decision": decision})
		return nil
	}
	fmt.Fprintf(a.stdout, "run %s enqueued: a worker goes on with it\n", id)
	return nil
}

func (a *app) clusterCommand(cmd *cobra.Command, db *pgstore.DB, name, id string) error {
	ctx := cmd.Context()
	switch name {
	case "halt":
		if err := db.SetHalt(ctx, id, true); err != nil {
			return err
		}
		if a.jsonOut {
			a.printJSON(map[string]any{"kind": "halt", "run_id": id, "requested": true})
			return nil
		}
		fmt.Fprintf(a.stdout, "halt requested for %s: its worker stops after the current node, and no worker takes it (lemmings resume --submit %s continues)\n", id, id)
		return nil
	case "report":
		data, ok, err := db.File(ctx, id, "report.md")
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("run %s: %w", id, inspect.ErrNoReport)
		}
		if a.jsonOut {
			a.printJSON(map[string]any{"run_id": id, "markdown": string(data)})
			return nil
		}
		_, err = a.stdout.Write(data)
		return err
	case "log":
		follow, _ := cmd.Flags().GetBool("follow")
		return a.clusterLog(ctx, db, id, follow)
	}
	app, err := run.StoreOn(db.Checkpointer())
	if err != nil {
		return err
	}
	snap, err := app.State(ctx, id)
	if err != nil {
		return err
	}
	pid, _ := db.HolderPID(ctx, id)
	halt, _ := db.HaltRequested(ctx, id)
	v := inspect.Run{RunInfo: graph.RunInfo{ID: id, Status: snap.Status, Active: pid != 0, Reason: snap.Reason, Error: snap.Error},
		State: snap.State}.View()
	st := v.Standing
	if a.jsonOut {
		a.printJSON(map[string]any{"run_id": id, "status": st.Status, "stored_status": snap.Status, "step": snap.Step, "next": snap.Next, "updated": snap.Updated,
			"remit": v.Remit, "branch": v.Branch, "phase": v.Phase, "tasks_completed": v.Tasks.Completed, "tasks_failed": v.Tasks.Failed,
			"held": pid != 0, "halt_requested": halt, "git_head": snap.Metadata[run.MetaGitHead], "git_ref": snap.Metadata["git_ref"],
			"reason": snap.Reason, "error": snap.Error, "cost_usd": v.Total.CostUSD})
		return nil
	}
	w := a.stdout
	held := "no worker holds it"
	if pid != 0 {
		held = "a worker holds it"
	}
	fmt.Fprintf(w, "run %s: %s (step %d, updated %s; %s)\n", id, st.Status, snap.Step, snap.Updated.Local().Format(time.DateTime), held)
	if st.Reason != "" && st.Status != runstate.RunPaused {
		fmt.Fprintf(w, "reason: %s\n", st.Reason)
	}
	fmt.Fprintf(w, "remit: %s\nbranch: %s (on the shared remote)\nphase: %s\n", v.Remit, v.Branch, v.Phase)
	if ref := snap.Metadata["git_ref"]; ref != "" {
		fmt.Fprintf(w, "last pushed: %s at %s\n", short(snap.Metadata[run.MetaGitHead]), ref)
	}
	if snap.Reason != "" {
		fmt.Fprintf(w, "paused: %s\n", snap.Reason)
	}
	if snap.Error != "" {
		fmt.Fprintf(w, "error: %s\n", snap.Error)
	}
	if halt {
		fmt.Fprintf(w, "halt requested\n")
	}
	if len(snap.Next) > 0 {
		fmt.Fprintf(w, "next: %s\n", strings.Join(snap.Next, ", "))
	}
	fmt.Fprintf(w, "tasks: %d done, %d failed, %d planned; cost: $%.4f\n", v.Tasks.Completed, v.Tasks.Failed, v.Tasks.Planned, v.Total.CostUSD)
	return nil
}

func short(sha string) string { return sha[:min(len(sha), 10)] }

// clusterLog prints the run's events from the store; following, it wakes on
// NOTIFY until the run is finished or paused and nobody holds it.
func (a *app) clusterLog(ctx context.Context, db *pgstore.DB, id string, follow bool) error {
	prog := termprogress.NewReplay(a.stdout, a.jsonOut)
	var after int64
	app, err := run.StoreOn(db.Checkpointer())
	if err != nil {
		return err
	}
	for {
		evs, err := db.Events(ctx, id, after, 1000)
		if err != nil {
			return err
		}
		for _, e := range evs {
			after = e.ID
			var ev graph.Event
			if json.Unmarshal(e.Line, &ev) == nil {
				prog.Handle(ev)
			}
		}
		if len(evs) == 1000 {
			continue
		}
		if !follow {
			return nil
		}
		snap, err := app.State(ctx, id)
		if err == nil && (snap.Status == graph.StatusDone || snap.Status == graph.StatusPaused) {
			return nil
		}
		if err := db.WaitEvents(ctx, id, 2*time.Second); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

func newWorkerCmd(a *app) *cobra.Command {
	var slots int
	var queues []string
	var name string
	var health time.Duration
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Take runs from the PostgreSQL store's queue and advance them on this machine's models",
		Long: `A worker takes submitted runs (lemmings run --submit) from the queues of the models its
Ollama serves, advances each through the same workflow as lemmings run, and pushes every
step's commits to the shared remote (cluster.remote) before the step's checkpoint. Runs that
no worker holds any more (a worker died, a box lost its model server) are taken by another
worker. The directory (-C) is this box's repository cache: a clone of the shared remote,
made there when it does not exist. Stop it with Ctrl-C: running runs stop at their next
step and another worker goes on with them. See docs/distributed.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			dir := a.dir
			cfg0, _, err := a.loadConfig(dir)
			if err != nil {
				return err
			}
			if _, err := os.Stat(dir + "/.git"); errors.Is(err, os.ErrNotExist) && cfg0.Cluster.Remote != "" {
				// Cloned from the folder above: no hook or driver of a
				// repository there runs (package gitsafe), nor of the remote's.
				abs, err := filepath.Abs(dir)
				if err != nil {
					return err
				}
				if out, err := gitsafe.Command(ctx, filepath.Dir(abs), "clone", "--quiet", "--no-recurse-submodules", cfg0.Cluster.Remote, abs).CombinedOutput(); err != nil {
					return fmt.Errorf("clone the shared remote into %s: %v: %s", dir, err, out)
				}
			}
			root, err := a.gitRoot(ctx)
			if err != nil {
				return err
			}
			cfg, err := a.clusterConfig(root, true)
			if err != nil {
				return err
			}
			db, err := cluster.Open(ctx, cfg.Store)
			if err != nil {
				return err
			}
			defer db.Close()
			w, err := cluster.NewWorker(cluster.WorkerOptions{DB: db, RepoDir: root, Remote: gitremote.Remote{URL: cfg.Cluster.Remote},
				Config: cfg, Queues: queues, Slots: slots, Name: name, HealthInterval: health, Log: a.stderr})
			if err != nil {
				return err
			}
			return w.Run(ctx)
		},
	}
	cmd.Flags().IntVar(&slots, "slots", 1, "runs this machine advances at once (one per GPU)")
	cmd.Flags().StringSliceVar(&queues, "queue", nil, "queues to take runs from (default: model_<primary model>)")
	cmd.Flags().StringVar(&name, "name", "", "this worker's name in the store and logs (default host:pid)")
	cmd.Flags().DurationVar(&health, "health-interval", 2*time.Second, "how often the local model server is checked")
	return cmd
}
