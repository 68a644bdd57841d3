package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/workspace"
)

func newCleanCmd(a *app) *cobra.Command {
	var finished, branches, prune, force bool
	cmd := &cobra.Command{
		Use:   "clean [run-id | --finished]",
		Short: "Remove a run's worktree (and on request its branch and records)",
		Long: `A run works in its own worktree, .lemmings/worktrees/<run-id>, with its branch
lemmings/<run-id> checked out there; while it exists, git checkout and git branch -D of
that branch fail ("already checked out"). lemmings clean removes the worktree of the run
named, or of every finished run with --finished. The branch and the run's records
(checkpoints, events, report) are kept unless you ask:

  --branches   delete the branch lemmings/<run-id> too, and its rescue branches
               lemmings/<run-id>-rescue… (their commits become unreachable)
  --prune      delete the run's checkpoints and logs too (lemmings runs forgets it)

A run that can still be resumed (paused, stopped, interrupted, crashed, failed) is only cleaned
when named with --force; a run in progress never is.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if finished == (len(args) == 1) {
				return usageErr("name one run or give --finished (lemmings runs lists them)")
			}
			if force && finished {
				return usageErr("--force applies to a run named, not to --finished")
			}
			ctx := cmd.Context()
			repo, err := workspace.OpenRepo(ctx, a.dir)
			if err != nil {
				return err
			}
			root := repo.Root()
			app, err := run.Store(root)
			if err != nil {
				if len(args) == 1 {
					return usageErr("no such run %q in %s: %v", args[0], root, err)
				}
				return err
			}
			runs, damaged, err := run.Runs(ctx, app)
			if err != nil {
				return err
			}
			for id, derr := range damaged {
				switch {
				case len(args) == 1 && id == args[0]:
					// Its status cannot be read: only --force cleans it.
					if !force {
						return usageErr("run %s is damaged (%v) and its status cannot be read: lemmings clean %s --force (--prune removes its records too)", id, derr, id)
					}
					runs = append(runs, graph.RunInfo{ID: id})
				case len(args) == 0:
					fmt.Fprintf(a.stderr, "warning: run %s is damaged, left alone (%v): %s\n", id, derr, run.DamagedAdvice(id))
				}
			}
			var todo []graph.RunInfo
			for _, r := range runs {
				switch {
				case len(args) == 1 && r.ID == args[0]:
					if r.Active {
						return fmt.Errorf("run %s is in progress: lemmings halt %s stops it first", r.ID, r.ID)
					}
					if r.Status != graph.StatusDone && !force {
						return usageErr("run %s is %s and can still be resumed (lemmings resume %s); --force cleans it anyway", r.ID, r.Status, r.ID)
					}
					todo = append(todo, r)
				case finished && r.Status == graph.StatusDone && !r.Active:
					todo = append(todo, r)
				}
			}
			if len(args) == 1 && len(todo) == 0 {
				return usageErr("no such run %q in %s (lemmings runs lists them)", args[0], root)
			}
			if len(todo) == 0 && !a.jsonOut {
				fmt.Fprintln(a.stdout, "no finished run to clean")
			}
			for _, r := range todo {
				res := map[string]any{"kind": "clean", "run_id": r.ID, "branch": workspace.BranchPrefix + r.ID}
				wt := repo.WorktreeDir(r.ID)
				_, statErr := os.Stat(wt)
				if err := repo.RemoveWorktree(ctx, r.ID); err != nil {
					return err
				}
				res["worktree_removed"] = statErr == nil
				if branches {
					if err := repo.DeleteBranch(ctx, r.ID); err != nil {
						return err
					}
				}
				res["branch_deleted"] = branches
				if prune {
					if err := app.DeleteRun(ctx, r.ID); err != nil {
						return err
					}
					if err := os.RemoveAll(filepath.Join(root, run.DataDir, run.RunsDir, r.ID)); err != nil {
						return err
					}
				}
				res["records_pruned"] = prune
				if a.jsonOut {
					a.printJSON(res)
					continue
				}
				a.printCleaned(r.ID, statErr == nil, branches, prune)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&finished, "finished", false, "clean every finished (done) run")
	cmd.Flags().BoolVar(&branches, "branches", false, "delete the runs' branches too")
	cmd.Flags().BoolVar(&prune, "prune", false, "delete the runs' checkpoints, events and reports too")
	cmd.Flags().BoolVar(&force, "force", false, "clean a named run even though it could be resumed")
	return cmd
}

func (a *app) printCleaned(id string, hadWorktree, branches, prune bool) {
	w := a.stdout
	if hadWorktree {
		fmt.Fprintf(w, "%s: worktree removed", id)
	} else {
		fmt.Fprintf(w, "%s: no worktree left", id)
	}
	if branches {
		fmt.Fprintf(w, "; branch %s%s deleted", workspace.BranchPrefix, id)
	} else {
		fmt.Fprintf(w, "; branch %s%s kept (git checkout or git merge it; --branches deletes it)", workspace.BranchPrefix, id)
	}
	if prune {
		fmt.Fprint(w, "; checkpoints and logs deleted")
	} else {
		fmt.Fprint(w, "; checkpoints and logs kept (lemmings report still shows it)")
	}
	fmt.Fprintln(w)
}
