package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/internal/cleanup"
	"github.com/lemmings-dev/lemmings/internal/tempdir"
	"github.com/lemmings-dev/lemmings/internal/textutil"
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
			req := cleanup.Request{Finished: finished, Branches: branches, Prune: prune, Force: force}
			if len(args) == 1 {
				req.RunID = args[0]
			}
			if err := req.Check(); err != nil {
				return usageErr("%s", err)
			}
			// The temporary folders of lemmings processes that were killed
			// (SIGKILL runs no cleanup): sandboxes, coding CLIs' homes.
			if gone := tempdir.Sweep(tempdir.All...); len(gone) > 0 {
				if a.jsonOut {
					a.printJSON(map[string]any{"kind": "clean_temp", "removed": gone})
				} else {
					fmt.Fprintf(a.stdout, "removed %s left by killed lemmings processes\n", textutil.Count(len(gone), "temporary folder"))
				}
			}
			ctx := cmd.Context()
			repo, err := workspace.OpenRepo(ctx, a.dir)
			if err != nil {
				return err
			}
			root := repo.Root()
			store, err := run.Store(root)
			if err != nil {
				if req.RunID != "" {
					return usageErr("no such run %q in %s: %v", req.RunID, root, err)
				}
				return err
			}
			cleaned := 0
			err = cleanup.Run(ctx, repo, store, req,
				func(w string) { fmt.Fprintf(a.stderr, "warning: %s\n", w) },
				func(c cleanup.Cleaned) {
					cleaned++
					if a.jsonOut {
						a.printJSON(map[string]any{"kind": "clean", "run_id": c.RunID, "branch": c.Branch,
							"worktree_removed": c.WorktreeRemoved, "branch_deleted": c.BranchDeleted, "records_pruned": c.RecordsPruned})
						return
					}
					a.printCleaned(c.RunID, c.WorktreeRemoved, c.BranchDeleted, c.RecordsPruned)
				})
			var refused *cleanup.RequestError
			if errors.As(err, &refused) {
				return usageErr("%s", refused)
			}
			if err == nil && cleaned == 0 && req.Finished && !a.jsonOut {
				fmt.Fprintln(a.stdout, "no finished run to clean")
			}
			return err
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
