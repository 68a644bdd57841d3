package main

// lemmings demo --cluster (docs/distributed.md): the distributed mode on one
// machine, with a local PostgreSQL server, a bare remote and two workers.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/cluster/clusterdemo"
)

// wrapDemoForCluster gives demo a --cluster flag.
func wrapDemoForCluster(a *app, c *cobra.Command) {
	on := c.Flags().Bool("cluster", false, "show the distributed mode instead: a local PostgreSQL, a bare remote and two workers; one is killed mid-run and the other finishes (docs/distributed.md)")
	orig := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if !*on {
			return orig(cmd, args)
		}
		if cmd.Flags().Changed("dir") {
			return usageErr("demo --cluster keeps nothing: it removes everything it started; drop --dir")
		}
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		story := a.stdout
		if a.jsonOut {
			story = a.stderr // stdout carries the one JSON line of the result
		}
		fmt.Fprintln(story, "lemmings demo --cluster — the models are SCRIPTED (llm/llmtest), everything else is real:")
		fmt.Fprintln(story, "PostgreSQL, River's queue, git pushes to a shared remote, two lemmings worker processes.")
		res, err := clusterdemo.Run(ctx, clusterdemo.Options{Exe: exe, Out: story})
		if errors.Is(err, clusterdemo.ErrNoPostgres) {
			return err // exit 1: the machine lacks a program; the message says which and how to install it
		}
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted; everything the demo started is stopped and removed")}
			}
			return err
		}
		if a.jsonOut {
			a.printJSON(map[string]any{"kind": "demo_cluster", "run_id": res.RunID, "status": res.Status, "tasks_completed": res.Tasks,
				"killed": res.Victim, "killed_at_step": res.KilledAtStep, "finished_by": res.Survivor,
				"takeover_seconds": res.Takeover.Seconds(), "commits": res.Commits})
			return nil
		}
		fmt.Fprintf(a.stdout, "\n%s was SIGKILLed in the middle of step %d; %s stored it %.1fs later and finished the run (%d tasks).\n",
			res.Victim, res.KilledAtStep, res.Survivor, res.Takeover.Seconds(), res.Tasks)
		fmt.Fprintln(a.stdout, "On real machines: docs/distributed.md (store:, cluster.remote, lemmings worker on each GPU box).")
		return nil
	}
}
