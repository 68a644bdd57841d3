// Package cleanup is lemmings clean's policy: which runs may have their
// worktree removed (and on request their branch and records), and the
// removal itself. A finished run is cleaned on request; one that can still
// be resumed only when named with Force; one in progress never; a damaged
// one (its status unreadable) only when named with Force.
package cleanup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Request says what to clean: the run named by RunID, or every finished
// run (Finished), and what besides the worktree.
type Request struct {
	RunID    string
	Finished bool
	// Branches deletes the runs' branches; Prune their checkpoints and logs.
	Branches, Prune bool
	// Force cleans a named run that could still be resumed, or is damaged.
	Force bool
}

// Cleaned is what became of one run.
type Cleaned struct {
	RunID           string `json:"run_id"`
	Branch          string `json:"branch"`
	WorktreeRemoved bool   `json:"worktree_removed"`
	BranchDeleted   bool   `json:"branch_deleted"`
	RecordsPruned   bool   `json:"records_pruned"`
}

// RequestError: the request cannot be done as asked; the person must ask
// otherwise (the command's usage error).
type RequestError struct{ msg string }

func (e *RequestError) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &RequestError{fmt.Sprintf(format, args...)} }

// Check says whether the request is one lemmings clean takes.
func (r Request) Check() error {
	if r.Finished == (r.RunID != "") {
		return refuse("name one run or give --finished (lemmings runs lists them)")
	}
	if r.Force && r.Finished {
		return refuse("--force applies to a run named, not to --finished")
	}
	return nil
}

// Select picks the runs the request cleans from the stored runs and the
// damaged ones (whose status cannot be read). warnings name the damaged
// runs --finished leaves alone.
func Select(req Request, runs []graph.RunInfo, damaged map[string]error) (todo []graph.RunInfo, warnings []string, err error) {
	for id, derr := range damaged {
		switch {
		case req.RunID != "" && id == req.RunID:
			if !req.Force {
				return nil, nil, refuse("run %s is damaged (%v) and its status cannot be read: lemmings clean %s --force (--prune removes its records too)", id, derr, id)
			}
			runs = append(runs, graph.RunInfo{ID: id})
		case req.RunID == "":
			warnings = append(warnings, fmt.Sprintf("run %s is damaged, left alone (%v): %s", id, derr, run.DamagedAdvice(id)))
		}
	}
	for _, r := range runs {
		switch {
		case req.RunID != "" && r.ID == req.RunID:
			if r.Active {
				return nil, warnings, fmt.Errorf("run %s is in progress: lemmings halt %s stops it first", r.ID, r.ID)
			}
			if r.Status != graph.StatusDone && !req.Force {
				// In the words status uses (a fork not run is "forked", a halted run "stopped").
				st := runstate.StandingOf(runstate.Stored{Status: r.Status, Active: r.Active, Reason: r.Reason, Error: r.Error}, &runstate.State{RunID: r.ID})
				return nil, warnings, refuse("run %s is %s (%s) and can still be resumed; --force cleans it anyway", r.ID, st.Status, st.Reason)
			}
			todo = append(todo, r)
		case req.Finished && r.Status == graph.StatusDone && !r.Active:
			todo = append(todo, r)
		}
	}
	return todo, warnings, nil
}

// Run cleans what the request selects in repo, whose run store is store,
// and reports each run as it is cleaned (report may be nil); warnings
// go to warn.
func Run(ctx context.Context, repo *workspace.Repo, store *graph.Reader[runstate.State], req Request, warn func(string), report func(Cleaned)) error {
	if err := req.Check(); err != nil {
		return err
	}
	root := repo.Root()
	runs, damaged, err := run.Runs(ctx, store)
	if err != nil {
		return err
	}
	todo, warnings, err := Select(req, runs, damaged)
	for _, w := range warnings {
		if warn != nil {
			warn(w)
		}
	}
	if err != nil {
		return err
	}
	if req.RunID != "" && len(todo) == 0 {
		return refuse("no such run %q in %s (lemmings runs lists them)", req.RunID, root)
	}
	for _, r := range todo {
		c := Cleaned{RunID: r.ID, Branch: workspace.BranchPrefix + r.ID}
		_, statErr := os.Stat(repo.WorktreeDir(r.ID))
		if err := repo.RemoveWorktree(ctx, r.ID); err != nil {
			return err
		}
		c.WorktreeRemoved = statErr == nil
		if req.Branches {
			if err := repo.DeleteBranch(ctx, r.ID); err != nil {
				return err
			}
		}
		c.BranchDeleted = req.Branches
		if req.Prune {
			if err := store.DeleteRun(ctx, r.ID); err != nil {
				return err
			}
			if err := os.RemoveAll(filepath.Join(root, run.DataDir, run.RunsDir, r.ID)); err != nil {
				return err
			}
		}
		c.RecordsPruned = req.Prune
		if report != nil {
			report(c)
		}
	}
	return nil
}
