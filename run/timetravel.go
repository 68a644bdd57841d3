package run

// Time travel and steering from outside a run (docs/time-travel.md): the
// steps a run can be forked from (History), a new run from one of them
// (Fork), a finished task taken back (Undo) and a message for the run
// (Tell).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Step is one checkpoint of a run a user can fork from.
type Step struct {
	Step   int       `json:"step"`
	Node   string    `json:"node"` // the node(s) that ran in the step; "start" for a run's first checkpoint
	Next   string    `json:"next,omitempty"`
	Task   string    `json:"task,omitempty"` // the task in progress after the step
	Title  string    `json:"title,omitempty"`
	Done   int       `json:"tasks_done"` // tasks finished by then
	Commit string    `json:"commit"`     // the run branch's HEAD after the step
	Time   time.Time `json:"time"`
}

// openStore opens the run store of root as a run writes it (secrets
// redacted), to fork or edit a run without running it.
func openStore(root string, red *redact.Redactor) (*graph.Compiled[runstate.State], error) {
	if _, err := Store(root); err != nil { // says why there is none
		return nil, err
	}
	fs, err := graph.NewFileCheckpointer(filepath.Join(root, DataDir, CheckpointsDir), refusing(root))
	if err != nil {
		return nil, err
	}
	return nodes.Build(&nodes.Deps{Settings: nodes.DefaultSettings()}).Compile(
		graph.WithCheckpointer(fs), graph.WithRedact(red.JSON))
}

// MetaBy, in a checkpoint's metadata, names the command that wrote it from
// outside the run ("undo", "fork"); history shows it as the step's node.
const MetaBy = "by"

// ErrNoStep: a fork named a step its run does not have (a usage error, as a
// run id that does not exist is).
var ErrNoStep = errors.New("no such step to fork from")

// RunHistory is a run's steps a fork can start from.
type RunHistory struct {
	RunID string `json:"run_id"`
	// ForkedFrom is RUN@STEP for a fork ("" for a run started anew).
	ForkedFrom string `json:"forked_from,omitempty"`
	Steps      []Step `json:"steps"`
}

// History lists the steps of run runID a fork can start from, oldest first:
// the run's own checkpoints that recorded the branch's HEAD.
func History(ctx context.Context, root, runID string) (RunHistory, error) {
	h := RunHistory{RunID: runID}
	app, err := Store(root)
	if err != nil {
		return h, err
	}
	infos, err := app.History(ctx, runID)
	if err != nil {
		return h, err
	}
	if len(infos) > 0 {
		if p, step, ok := graph.ForkOrigin(infos[len(infos)-1].Metadata); ok {
			h.ForkedFrom = fmt.Sprintf("%s@%d", p, step)
		}
	}
	var out []Step
	for _, in := range infos {
		head := in.Metadata[MetaGitHead]
		if in.Namespace != "" || head == "" {
			continue
		}
		st := Step{Step: in.Step, Node: strings.Join(in.Nodes, ","), Next: strings.Join(in.Next, ","), Commit: head, Time: in.Time}
		switch st.Node {
		case "", graph.Start:
			st.Node = "start"
		case graph.UpdateNode: // the graph's name for a state written from outside: say who wrote it
			st.Node = cmp.Or(in.Metadata[MetaBy], "update")
		}
		s, err := app.StateAt(ctx, runID, in.Step)
		if err != nil {
			return h, err
		}
		if t := s.CurrentTask; t != nil {
			st.Task, st.Title = t.ID, t.Title
		}
		st.Done = len(s.DoneList)
		out = append(out, st)
	}
	if len(out) == 0 {
		return h, fmt.Errorf("run %s has no step to fork from yet", runID)
	}
	h.Steps = out
	return h, nil
}

// ForkOptions say where a fork starts and what it changes first.
type ForkOptions struct {
	Parent string
	Step   int
	// RejectTask is a task (done, or in progress at the step) the fork takes
	// back first, with Reason as its feedback.
	RejectTask, Reason string
	// Remit replaces the run's remit.
	Remit string
	// Run: the fork is run at once (Fork). Its log then gets the forked
	// event only; its run writes its standing and report as any run does.
	Run bool
}

// Fork makes a new run from step f.Step of run f.Parent, on a branch of its
// own from that step's commit, applies f's changes to its state, and runs it
// as Resume does (o.RunID names the fork; empty: a new id).
func Fork(ctx context.Context, o Options, f ForkOptions) (Result, error) {
	f.Run = true
	id, err := MakeFork(ctx, o.RepoDir, cmp.Or(o.RunID, NewRunID()), f, o.Config, o.Redactor, o.Warn)
	if err != nil {
		return Result{}, err
	}
	o.RunID = id
	return Resume(ctx, o)
}

// MakeFork stores run newID, forked from f, with its worktree and branch,
// without running it (lemmings resume runs it).
// red redacts what the fork's update adds (nil: the process's).
func MakeFork(ctx context.Context, repoDir, newID string, f ForkOptions, cfg *config.Config, red *redact.Redactor, warn io.Writer) (_ string, err error) {
	red = cmp.Or(red, redact.Default())
	repo, err := workspace.OpenRepo(ctx, repoDir)
	if err != nil {
		return "", err
	}
	root := repo.Root()
	if _, err := DataRoot(root); err != nil {
		return "", err
	}
	learnSecrets(red, root, cfg)
	store, err := openStore(root, red)
	if err != nil {
		return "", err
	}
	h, err := History(ctx, root, f.Parent)
	steps := h.Steps
	if err != nil {
		return "", fmt.Errorf("fork %s@%d: %w", f.Parent, f.Step, err)
	}
	var at *Step
	for i := range steps {
		if steps[i].Step == f.Step {
			at = &steps[i]
		}
	}
	if at == nil {
		return "", fmt.Errorf("fork %s@%d: %w: the run's steps go from %d to %d (lemmings history %s lists them)",
			f.Parent, f.Step, ErrNoStep, steps[0].Step, steps[len(steps)-1].Step, f.Parent)
	}
	s, err := store.StateAt(ctx, f.Parent, f.Step)
	if err != nil {
		return "", err
	}
	wt, err := repo.CreateWorktreeAt(ctx, newID, at.Commit)
	if err != nil {
		return "", fmt.Errorf("fork %s@%d: %w", f.Parent, f.Step, err)
	}
	defer func() {
		if err != nil { // no half-made fork: no worktree, branch or run folder
			cctx := context.WithoutCancel(ctx)
			_ = errors.Join(repo.RemoveWorktree(cctx, newID), repo.DeleteBranch(cctx, newID),
				os.RemoveAll(filepath.Join(root, DataDir, RunsDir, newID)))
		}
	}()
	s = s.Clone()
	// The fork's clock starts now: the parent's start would make a fork that never ran look long.
	s.RunID, s.Branch, s.ReportPath, s.StartedAt = newID, wt.Branch(), "", time.Now().UTC()
	opts := []graph.RunOption{}
	if r := strings.TrimSpace(f.Remit); r != "" {
		if red := red.String(r); red != r {
			fmt.Fprintf(orDiscard(warn), "warning: the remit holds a secret; the fork works with %s in its place\n", redactedMarks(red))
			r = red
		}
		s.Remit = r
		opts = append(opts, graph.Goto(runstate.NodePlanner)) // planned again for the new remit
	}
	if f.RejectTask != "" {
		if s.CurrentTask != nil && s.CurrentTask.ID != f.RejectTask {
			if err := shelveCurrent(ctx, wt, &s); err != nil {
				return "", err
			}
		}
		if _, err := nodes.UndoTask(ctx, wt, &s, nodes.UndoOptions{Task: f.RejectTask, Reason: red.String(f.Reason), By: "fork", Now: time.Now().UTC()}); err != nil {
			return "", fmt.Errorf("fork %s@%d --reject-task %s: %w", f.Parent, f.Step, f.RejectTask, err)
		}
		opts = append(opts, graph.Goto(runstate.NodePlanner))
	}
	head, err := wt.Head(ctx)
	if err != nil {
		return "", err
	}
	opts = append(opts, graph.WithUpdate(func(runstate.State) (runstate.State, error) { return s, nil }),
		graph.SetMetadata(map[string]string{MetaGitHead: head, "branch": wt.Branch(), MetaBy: "fork"}))
	if _, err := store.Fork(ctx, f.Parent, f.Step, newID, opts...); err != nil {
		return "", err
	}
	// The fork goes on with the choices its parent was started with.
	if ch, err := LoadChoices(root, f.Parent); err == nil && ch != nil {
		dir := filepath.Join(root, DataDir, RunsDir, newID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		if _, err := saveChoices(dir, ch); err != nil {
			return "", err
		}
	}
	forked := events.Forked{Parent: f.Parent, Step: f.Step, RejectTask: f.RejectTask, Remit: strings.TrimSpace(f.Remit) != ""}
	if f.RejectTask != "" {
		forked.Reason = clipText(red.String(f.Reason), 300)
	}
	// The fork is stored: a log or report that cannot be written is said, and the fork stays.
	var rerr error
	if f.Run {
		rerr = noteEvent(root, newID, forked, red)
	} else {
		_, rerr = recordStanding(ctx, root, newID, "fork", forked, wt, sandboxLineOf(root, f.Parent), red)
	}
	if rerr != nil {
		fmt.Fprintf(orDiscard(warn), "warning: fork %s made, but its log or report was not written: %v\n", newID, rerr)
	}
	return newID, nil
}

// forkStart reports whether snap is a fork not yet run: stored paused by
// Fork, not waiting for a human.
func forkStart(snap graph.Snapshot[runstate.State]) bool {
	parent, step, ok := graph.ForkOrigin(snap.Metadata)
	return ok && snap.Status == graph.StatusPaused && snap.Reason == fmt.Sprintf("fork of %s at step %d", parent, step)
}

// shelveCurrent puts the task in progress back at the head of the plan and
// the work tree back at its start: an undo of an earlier task on a stopped
// run starts it again.
func shelveCurrent(ctx context.Context, wt *workspace.Worktree, s *runstate.State) error {
	t := s.CurrentTask
	if t.StartCommit != "" {
		if err := wt.ResetHard(ctx, t.StartCommit); err != nil {
			return err
		}
	}
	back := runstate.PlannedTask{Title: t.Title, Instructions: t.Instructions, AcceptanceCriteria: t.AcceptanceCriteria,
		TargetFiles: t.TargetFiles, Operator: t.Operator, Placed: t.Placed, Tests: t.Tests, DirectiveID: t.DirectiveID, SplitFrom: t.SplitFrom, Feedback: t.Feedback}
	plan := []runstate.PlannedTask{back}
	for _, p := range s.CarryForward {
		if !strings.EqualFold(p.Title, t.Title) {
			plan = append(plan, p)
		}
	}
	s.CarryForward = plan
	s.CurrentTask, s.Implementation, s.QA = nil, nil, nil
	return nil
}

// UndoResult says what an undo did.
type UndoResult struct {
	RunID string `json:"run_id"`
	// Requested: the run is running; it takes the task back at its next task
	// boundary.
	Requested bool                 `json:"requested"`
	Undone    *runstate.UndoneTask `json:"undone,omitempty"`
	Branch    string               `json:"branch"`
	// Rescue is the branch that keeps what a cut-off step had left in the
	// work tree ("" when there was nothing).
	Rescue string `json:"rescue,omitempty"`
	// Standing is how the run stands after the undo (not for a request).
	Standing runstate.Standing `json:"standing"`
}

// Undo takes task back in run runID: the task's commit is reverted on the run
// branch (a new commit) and the task goes back to the plan with reason, as a
// new checkpoint; the run is left stopped, to be resumed. A running run is
// left a request it carries out at its next task boundary. The user's
// checkout is not touched: all of it happens in the run's worktree.
func Undo(ctx context.Context, repoDir, runID, task, reason string, cfg *config.Config, red *redact.Redactor) (UndoResult, error) {
	red = cmp.Or(red, redact.Default())
	res := UndoResult{RunID: runID}
	repo, err := workspace.OpenRepo(ctx, repoDir)
	if err != nil {
		return res, err
	}
	root := repo.Root()
	if _, err := DataRoot(root); err != nil {
		return res, err
	}
	learnSecrets(red, root, cfg)
	reason = red.String(strings.TrimSpace(reason))
	store, err := openStore(root, red)
	if err != nil {
		return res, err
	}
	snap, err := store.State(ctx, runID)
	if err != nil {
		return res, fmt.Errorf("undo %s: %w", task, err)
	}
	res.Branch = snap.State.Branch
	rd, err := Store(root)
	if err != nil {
		return res, err
	}
	active, err := runActive(ctx, rd, runID)
	if err != nil {
		return res, err
	}
	if active {
		if !knownTask(snap.State, task) {
			return res, fmt.Errorf("undo: run %s has no finished task %s (%s)", runID, task, doneIDs(snap.State))
		}
		if _, err := runstate.RequestUndo(filepath.Join(root, DataDir, RunsDir, runID), task, reason); err != nil {
			return res, err
		}
		res.Requested = true
		return res, nil
	}
	wt, err := repo.OpenWorktree(ctx, runID)
	if err != nil {
		return res, fmt.Errorf("undo %s in %s: %w (a run whose worktree was cleaned can be forked instead: lemmings history %s)", task, runID, err, runID)
	}
	before := snap.Metadata[MetaGitHead]
	// A step cut off left edits: they are kept on a rescue branch, as resume keeps them.
	if _, res.Rescue, err = resetToCheckpoint(ctx, wt, before, true); err != nil {
		return res, err
	}
	s := snap.State.Clone()
	if s.CurrentTask != nil && s.CurrentTask.ID != task {
		if err := shelveCurrent(ctx, wt, &s); err != nil {
			return res, err
		}
	}
	u, err := nodes.UndoTask(ctx, wt, &s, nodes.UndoOptions{Task: task, Reason: reason, By: "undo", Now: time.Now().UTC()})
	if err == nil {
		var head string
		if head, err = wt.Head(ctx); err == nil {
			_, err = store.Update(ctx, runID, fmt.Sprintf("undo of %s (lemmings undo): %s", task, clipText(u.Reason, 200)),
				graph.WithUpdate(func(runstate.State) (runstate.State, error) { return s, nil }),
				graph.Goto(runstate.NodePlanner), graph.SetMetadata(map[string]string{MetaGitHead: head, MetaBy: "undo"}))
		}
	}
	if err != nil {
		if !errors.Is(err, graph.ErrRunLocked) && before != "" {
			// Nothing recorded: the branch goes back to where the run's
			// last checkpoint has it.
			_ = wt.ResetHard(context.WithoutCancel(ctx), before)
		}
		return res, fmt.Errorf("undo %s in %s: %w", task, runID, err)
	}
	res.Undone = &u
	res.Standing, err = recordStanding(ctx, root, runID, "undo",
		events.TaskUndone{Commit: u.Commit, Reason: clipText(u.Reason, 300), Revert: u.Revert, Task: u.TaskID}, wt, sandboxLineOf(root, runID), red)
	if err != nil {
		return res, fmt.Errorf("undo %s in %s: done, but its record in the run's log and report: %w", task, runID, err)
	}
	return res, nil
}

func knownTask(s runstate.State, id string) bool {
	for _, e := range s.DoneList {
		if e.TaskID == id {
			return true
		}
	}
	return false
}

func doneIDs(s runstate.State) string {
	var ids []string
	for _, e := range s.DoneList {
		ids = append(ids, e.TaskID)
	}
	if len(ids) == 0 {
		return "none finished yet"
	}
	return "finished: " + strings.Join(ids, ", ")
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Tell leaves message for run runID, which files it as a directive of the
// user's at its next checkpoint (a running run within a node; a stopped or
// paused one when it is resumed). A run that has ended takes no message.
func Tell(ctx context.Context, root, runID, message, priority string, cfg *config.Config, red *redact.Redactor) (runstate.TellRequest, error) {
	red = cmp.Or(red, redact.Default())
	learnSecrets(red, root, cfg)
	store, err := Store(root)
	if err != nil {
		return runstate.TellRequest{}, err
	}
	snap, err := store.State(ctx, runID)
	if err != nil {
		return runstate.TellRequest{}, fmt.Errorf("tell %s: %w", runID, err)
	}
	if snap.Status == graph.StatusDone {
		st := standingOf(snap, nil)
		return runstate.TellRequest{}, fmt.Errorf("run %s has ended %s: it takes no message (lemmings undo takes a task back and reopens it; lemmings fork %s@STEP --remit \"…\" starts again from a step)", runID, st.Status, runID)
	}
	return runstate.RequestTell(filepath.Join(root, DataDir, RunsDir, runID), red.String(message), priority)
}
