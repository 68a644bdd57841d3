package run

// Reading the run store, and putting a work tree back where a checkpoint
// left it.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// ErrNoRuns: the repository has no run stored yet.
var ErrNoRuns = errors.New("no lemmings runs")

// Store opens the run store of a repository for reading (status, runs, log).
// With no run stored it returns an error wrapping ErrNoRuns, or outside a git
// repository the error lemmings run gives there (runs need one).
func Store(root string) (*graph.Reader[runstate.State], error) {
	if err := CheckDataDir(root); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dir := filepath.Join(root, DataDir, CheckpointsDir)
	if _, err := os.Stat(dir); err != nil {
		if _, gerr := workspace.OpenRepo(context.Background(), root); gerr != nil {
			return nil, gerr
		}
		return nil, fmt.Errorf("%w in %s (start one with lemmings run \"remit\")", ErrNoRuns, root)
	}
	store, err := graph.NewFileCheckpointer(dir, refusing(root))
	if err != nil {
		return nil, err
	}
	return graph.NewReader[runstate.State](store)
}

// LatestResumable finds the most recent run that is not done (a damaged run,
// whose checkpoints cannot be read, is not one).
func LatestResumable(ctx context.Context, root string) (string, error) {
	app, err := Store(root)
	if err != nil {
		return "", err
	}
	runs, _, err := Runs(ctx, app)
	if err != nil {
		return "", err
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Updated.After(runs[j].Updated) })
	for _, r := range runs {
		if r.Status != graph.StatusDone && !r.Active {
			return r.ID, nil
		}
	}
	return "", errors.New("no run to resume (lemmings runs lists them)")
}

// runActive reports whether a process holds the run now.
func runActive(ctx context.Context, store *graph.Reader[runstate.State], runID string) (bool, error) {
	runs, damaged, err := Runs(ctx, store)
	if err != nil {
		return false, err
	}
	if derr := damaged[runID]; derr != nil {
		return false, fmt.Errorf("run %s: %w (%s)", runID, derr, DamagedAdvice(runID))
	}
	for _, r := range runs {
		if r.ID == runID {
			return r.Active, nil
		}
	}
	return false, nil
}

// resetToCheckpoint puts the work tree and branch back at head, the HEAD
// recorded with the last checkpoint, dropping commits and files a killed step
// left. With keep, what it drops is kept first on a rescue branch (HEAD with
// the uncommitted changes as one commit): a resume after a crash or Ctrl-C
// finds a tree it did not see being left. It returns the HEAD it moved away
// from and the rescue branch ("" when nothing moved: the same HEAD and a
// clean tree, or no HEAD recorded).
func resetToCheckpoint(ctx context.Context, wt *workspace.Worktree, head string, keep bool) (from, rescue string, err error) {
	if head == "" {
		return "", "", nil
	}
	cur, err := wt.Head(ctx)
	if err != nil {
		return "", "", err
	}
	clean, err := wt.IsClean(ctx)
	if err != nil {
		return "", "", err
	}
	if cur == head && clean {
		return "", "", nil
	}
	if keep {
		rescue, _, err = wt.Rescue(ctx, wt.Branch()+"-rescue",
			fmt.Sprintf("lemmings rescue: the work tree of %s when its run was resumed (put back at %s)", wt.Branch(), head))
		if err != nil {
			return "", "", err
		}
	}
	if err := wt.ResetHard(ctx, head); err != nil {
		return "", "", fmt.Errorf("reset the work tree to the checkpoint's HEAD: %w", err)
	}
	from = cur
	if !clean {
		from += " with uncommitted changes"
	}
	return from, rescue, nil
}
