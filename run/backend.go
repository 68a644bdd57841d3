package run

// Where a run keeps its state when it is not the repository's .lemmings/
// folder alone: a shared store (PostgreSQL) and a git remote, for runs that
// lemmings workers on several machines take over from each other
// (docs/distributed.md). The local run folder stays the box's cache (events,
// prompts, report); the backend carries what other machines must see.

import (
	"context"
	"maps"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Backend replaces the run store, the halt file and what a checkpoint
// records. Set it in Options; nil keeps everything in .lemmings/.
type Backend struct {
	// Checkpointer stores the run's checkpoints instead of .lemmings/checkpoints.
	Checkpointer graph.Checkpointer
	// Halted says whether the run must stop before its next step (a halt
	// request, or the box handing the run back); it replaces the halt file.
	Halted func(runID string) bool
	// BeforeCheckpoint runs before each checkpoint is stored, given the work
	// tree and its HEAD; it returns metadata to store besides git_head (the
	// ref it pushed HEAD to). An error stores no checkpoint: the run fails at
	// the step before and is resumed from there.
	BeforeCheckpoint func(ctx context.Context, wt *workspace.Worktree, head string) (map[string]string, error)
}

// storeOf opens the run store: the backend's, or the repository's.
func storeOf(o Options, root string) (*graph.Reader[runstate.State], error) {
	if o.Backend != nil {
		return StoreOn(o.Backend.Checkpointer)
	}
	return Store(root)
}

// StoreOn opens the runs cp stores for reading (status, log) and pruning:
// the state type is enough, no workflow is compiled.
func StoreOn(cp graph.Checkpointer) (*graph.Reader[runstate.State], error) {
	return graph.NewReader[runstate.State](cp)
}

// checkpointMeta is what each checkpoint records of the work tree.
func checkpointMeta(b *Backend, wt *workspace.Worktree) func(context.Context, runstate.State) (map[string]string, error) {
	return func(ctx context.Context, _ runstate.State) (map[string]string, error) {
		// Not cancelled with the run: a checkpoint written as Ctrl-C
		// arrives must still record the HEAD its step left.
		ctx = context.WithoutCancel(ctx)
		head, err := wt.Head(ctx)
		if err != nil {
			head = "" // resume then leaves the work tree as it finds it
		}
		meta := map[string]string{MetaGitHead: head, "branch": wt.Branch()}
		if b != nil && b.BeforeCheckpoint != nil && head != "" {
			more, err := b.BeforeCheckpoint(ctx, wt, head)
			if err != nil {
				return nil, err
			}
			maps.Copy(meta, more)
		}
		return meta, nil
	}
}
