package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/termprogress"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
)

// pickRun returns the run named in args, or the most recent run that want
// accepts (want nil: any run).
func (a *app) pickRun(ctx context.Context, root string, args []string, want func(graph.RunInfo) bool) (string, error) {
	store, err := inspect.Open(root)
	if err != nil {
		if len(args) == 1 {
			return "", usageErr("no such run %q in %s: %v", args[0], root, err)
		}
		return "", err
	}
	return a.pickFrom(ctx, store, args, want)
}

// pickFrom is pickRun on a store already open.
func (a *app) pickFrom(ctx context.Context, store *inspect.Store, args []string, want func(graph.RunInfo) bool) (string, error) {
	id := ""
	if len(args) == 1 {
		id = args[0]
	}
	picked, err := store.Pick(ctx, id, want)
	if err == nil {
		warnDamaged(ctx, store, picked, a.stderr)
	}
	if errors.Is(err, inspect.ErrNoSuchRun) {
		return "", usageErr("%v", err)
	}
	if errors.Is(err, inspect.ErrNoMatchingRun) {
		return "", errNoMatchingRun
	}
	return picked, err
}

// warnDamaged names the damaged runs other than the one a command works on,
// with what to do about them: one damaged run never stops a command about
// another, and is not forgotten either.
func warnDamaged(ctx context.Context, store *inspect.Store, picked string, w io.Writer) {
	damaged := store.Damaged(ctx)
	for _, id := range slices.Sorted(maps.Keys(damaged)) {
		if id != picked {
			fmt.Fprintf(w, "warning: %v\n", damaged[id])
		}
	}
}

// errNoMatchingRun: runs exist, but none is what the command wants.
var errNoMatchingRun = errors.New("no matching run (lemmings runs lists them)")

// loadRun picks a run (named in args, else the latest) and reads it as the
// list sees it: its last checkpoint, and whether a process holds it (a
// crashed run reads "crashed" here as in runs).
func (a *app) loadRun(ctx context.Context, args []string) (inspect.Run, error) {
	root := a.repoRoot()
	store, err := inspect.Open(root)
	if err != nil {
		if len(args) == 1 {
			return inspect.Run{}, usageErr("no such run %q in %s: %v", args[0], root, err)
		}
		return inspect.Run{}, err
	}
	id, err := a.pickFrom(ctx, store, args, nil)
	if err != nil {
		return inspect.Run{}, err
	}
	snap, err := store.Snapshot(ctx, id)
	if err != nil {
		return inspect.Run{}, err
	}
	return inspect.Run{RunInfo: graph.RunInfo{ID: id, Status: snap.Status, Step: snap.Step, Created: snap.Created, Updated: snap.Updated,
		Nodes: snap.Nodes, Next: snap.Next, Reason: snap.Reason, Error: snap.Error, Active: store.Active(ctx, id)}, State: snap.State}, nil
}

// printJSON writes v as one JSON line.
func (a *app) printJSON(v any) {
	line, _ := json.Marshal(v)
	fmt.Fprintf(a.stdout, "%s\n", line)
}

func newRunsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "runs",
		Short: "List the runs of this repository",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root := a.repoRoot()
			store, err := inspect.Open(root)
			if errors.Is(err, run.ErrNoRuns) {
				if !a.jsonOut {
					fmt.Fprintf(a.stdout, "no runs yet in %s: lemmings run \"remit\" starts one\n", root)
				}
				return nil
			}
			if err != nil {
				return err
			}
			runs, err := store.List(cmd.Context())
			if err != nil {
				return err
			}
			if len(runs) > 0 && !a.jsonOut {
				fmt.Fprintf(a.stdout, "%-28s %-11s %-19s  %7s %9s  %s\n", "RUN", "STATUS", "UPDATED", "DONE", "FAILED", "REMIT")
			}
			var damaged []error
			for _, r := range runs {
				status, v := r.DisplayStatus(), r.View()
				remit, done, failed := v.Remit, v.Tasks.Completed, v.Tasks.Failed
				if a.jsonOut {
					out := map[string]any{"run_id": r.ID, "status": status, "updated": r.Updated, "remit": remit, "tasks_completed": done, "tasks_failed": failed}
					if status != inspect.Damaged {
						st := v.Standing
						out["reason"], out["next_step"], out["resumable"] = st.Reason, st.Next, st.Resumable
					} else if r.Err != nil {
						out["reason"], out["error"] = r.Err.Error(), r.Err.Error()
					}
					a.printJSON(out)
					continue
				}
				fmt.Fprintf(a.stdout, "%-28s %-11s %s  %7d %9d  %s\n", r.ID, status, r.Updated.Local().Format(time.DateTime), done, failed, textutil.Clip(remit, 60))
				if r.Err != nil {
					damaged = append(damaged, r.Err)
				}
			}
			for _, err := range damaged {
				fmt.Fprintf(a.stderr, "warning: %v\n", err)
			}
			if len(runs) == 0 && !a.jsonOut {
				fmt.Fprintf(a.stdout, "no runs yet in %s: lemmings run \"remit\" starts one\n", root)
			}
			return nil
		},
	}
}

// runCmd is a command about one stored run, named or else the latest, as
// the list sees it.
func runCmd(a *app, use, short string, show func(inspect.Run) error) *cobra.Command {
	return &cobra.Command{Use: use + " [run-id]", Short: short, Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := a.loadRun(cmd.Context(), args)
			if err != nil {
				return err
			}
			return show(r)
		}}
}

func newStatusCmd(a *app) *cobra.Command {
	return runCmd(a, "status", "Show where a run is: status, milestone, task, counts, cost", func(r inspect.Run) error {
		v := r.View()
		st := v.Standing
		if a.jsonOut {
			out := map[string]any{"run_id": r.ID, "status": st.Status, "reason": st.Reason, "next_step": st.Next, "resumable": st.Resumable,
				"stored_status": r.Status, "step": r.Step, "next": r.Next, "updated": r.Updated,
				"remit": v.Remit, "branch": v.Branch, "phase": v.Phase, "milestone": v.Milestone, "milestones": v.Milestones,
				"tasks_completed": v.Tasks.Completed, "tasks_failed": v.Tasks.Failed, "tasks_planned": v.Tasks.Planned,
				"current_task": v.Current, "pending_directives": v.PendingDirectives, "cost_usd": v.Total.CostUSD,
				"outcome": v.Outcome}
			if !v.StartedAt.IsZero() {
				out["started"] = v.StartedAt
			}
			a.printJSON(out)
			return nil
		}
		w := a.stdout
		fmt.Fprintf(w, "run %s: %s (step %d, updated %s)\n", r.ID, st.Status, r.Step, r.Updated.Local().Format(time.DateTime))
		if st.Reason != "" {
			label := "reason"
			if st.Status == runstate.RunDone {
				label = "evidence"
			}
			fmt.Fprintf(w, "%s: %s\n", label, st.Reason)
		}
		if st.Next != "" {
			fmt.Fprintf(w, "how to go on: %s\n", st.Next)
		}
		fmt.Fprintf(w, "remit: %s\nbranch: %s\nphase: %s\n", v.Remit, v.Branch, v.Phase)
		if len(r.Next) > 0 && st.Resumable {
			fmt.Fprintf(w, "next node: %s\n", strings.Join(r.Next, ", "))
		}
		if v.Milestones > 0 {
			fmt.Fprintf(w, "milestone %d of %d\n", v.Milestone, v.Milestones)
		}
		for _, m := range v.Board {
			mark := " "
			if m.Current && st.Status != runstate.RunDone {
				mark = ">"
			}
			fmt.Fprintf(w, "%s %s [%s] %s\n", mark, m.ID, m.Status, m.Goal)
			if st.Status == runstate.RunPaused {
				// What an approval decides on: the tasks planned.
				for _, t := range m.Planned {
					fmt.Fprintf(w, "    - %s\n", t.Title)
				}
			}
		}
		if t := v.Current; t != nil {
			fmt.Fprintf(w, "task: %s %s (attempt %d)\n", t.ID, t.Title, t.Attempt)
		}
		fmt.Fprintf(w, "tasks: %d done, %d failed, %d planned; directives pending: %d; cost: $%.4f\n",
			v.Tasks.Completed, v.Tasks.Failed, v.Tasks.Planned, v.PendingDirectives, v.Total.CostUSD)
		return nil
	})
}

// runIDCmd is a command about one run's files, by its id (named, else the
// latest).
func runIDCmd(a *app, use, short string, do func(ctx context.Context, root, id string) error) *cobra.Command {
	return &cobra.Command{Use: use + " [run-id]", Short: short, Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := a.repoRoot()
			id, err := a.pickRun(cmd.Context(), root, args, nil)
			if err != nil {
				return err
			}
			return do(cmd.Context(), root, id)
		}}
}

func newReportCmd(a *app) *cobra.Command {
	return runIDCmd(a, "report", "Print a run's report (written when the run ends)", func(_ context.Context, root, id string) error {
		data, err := inspect.ReadReport(root, id)
		if err != nil {
			return err
		}
		if a.jsonOut {
			a.printJSON(map[string]any{"run_id": id, "path": inspect.ReportPath(root, id), "markdown": string(data)})
			return nil
		}
		_, err = a.stdout.Write(data)
		return err
	})
}

func newDirectivesCmd(a *app) *cobra.Command {
	return runCmd(a, "directives", "List a run's supervisor directives and what became of each", func(r inspect.Run) error {
		id, rows := r.ID, r.View().Directives
		if a.jsonOut {
			for _, r := range rows {
				a.printJSON(r)
			}
			return nil
		}
		if len(rows) == 0 {
			fmt.Fprintf(a.stdout, "run %s has no directives\n", id)
			return nil
		}
		for _, r := range rows {
			fmt.Fprintf(a.stdout, "%-4s %-12s %-11s %-4s %s", r.ID, r.Source, r.Fate, r.TaskID, r.Description)
			if r.Priority != "" {
				fmt.Fprintf(a.stdout, " (%s %s)", r.Priority, r.Type)
			}
			if r.Trail != "" {
				fmt.Fprintf(a.stdout, " — %s", r.Trail)
			}
			if r.Note != "" {
				fmt.Fprintf(a.stdout, " — %s", r.Note)
			}
			fmt.Fprintln(a.stdout)
		}
		return nil
	})
}

func newGraphCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "graph",
		Short: "Print the workflow graph as Mermaid",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			app, err := nodes.Build(&nodes.Deps{Settings: nodes.DefaultSettings()}).Compile()
			if err != nil {
				return err
			}
			if a.jsonOut {
				a.printJSON(map[string]any{"mermaid": app.Mermaid()})
				return nil
			}
			fmt.Fprintln(a.stdout, app.Mermaid())
			return nil
		},
	}
}

func newLogCmd(a *app) *cobra.Command {
	var follow bool
	cmd := runIDCmd(a, "log", "Print a run's events (-f follows a running run)", func(ctx context.Context, root, id string) error {
		return a.printEvents(ctx, root, id, follow)
	})
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events until the run stops")
	return cmd
}

// printEvents prints the event log; following, it polls for new lines until
// no process holds the run any more.
func (a *app) printEvents(ctx context.Context, root, id string, follow bool) error {
	path := inspect.EventsPath(root, id)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("run %s has no event log: %w", id, err)
	}
	prog := termprogress.NewReplay(a.stdout, a.jsonOut)
	prog.Verbose = a.verbose
	var offset int64
	for {
		got, err := inspect.ReadEvents(path, offset, 0)
		if err != nil {
			return err
		}
		offset = got.Next
		for _, ev := range got.Events {
			prog.Handle(ev)
		}
		if !follow || !runActive(ctx, root, id) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func runActive(ctx context.Context, root, id string) bool {
	store, err := inspect.Open(root)
	if err != nil {
		return false
	}
	return store.Active(ctx, id)
}
