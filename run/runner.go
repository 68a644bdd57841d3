package run

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
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
	"github.com/lemmings-dev/lemmings/tracing"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Layout of .lemmings/ in the target repository.
const (
	DataDir        = ".lemmings"
	CheckpointsDir = "checkpoints"
	RunsDir        = "runs"
	IndexDir       = "index"
	HaltFile       = "halt"
	EventsFile     = "events.jsonl"
	PromptsFile    = "prompts.jsonl"
	BoardFile      = "board.md"
	ReportFile     = "report.md"
)

// Options say what to run and how.
type Options struct {
	RepoDir string
	Remit   string
	// PlanFile is an operator plan (YAML): milestones with tasks and
	// acceptance criteria; the ScopeAgent then does not plan.
	PlanFile string
	// RunID names the run to resume (empty: the latest resumable one). On
	// Start it names the new run when the caller must know it before the run
	// exists (lemmings mcp starts runs as detached processes); empty: a new id.
	RunID  string
	Config *config.Config
	// Approve pauses for a human: "", "milestones" or "tasks". On resume it
	// changes the run's mode ("none" turns approvals off); empty keeps it.
	Approve string
	// Decision answers a pause on resume. A paused run is not resumed
	// without one.
	Decision *runstate.Approval
	// Choices are recorded with the run (ChoicesOf the configuration it
	// runs with) so a later resume can go on with them; nil records none.
	Choices Choices
	Sinks   []graph.Sink
	// Warn receives warnings meant for the user before the run starts.
	Warn io.Writer
	// HTTPClient is used for every model call (tests).
	HTTPClient *http.Client
	// Backend keeps the run in a shared store (backend.go); nil: .lemmings/.
	Backend *Backend
	// BaseCommit is where Start branches the run from (default: HEAD).
	BaseCommit string
	// Demo marks the run as lemmings demo's (runstate.State.Demo).
	Demo bool
	// Redactor is the redaction every output of the run goes through (its
	// checkpoints, event log, files and the remit it keeps); the run teaches
	// it the environment's keys and the repository's .env values. Nil: the
	// process's (redact.Default), which the leaves of lemmings (the prompt
	// log, clipped texts, gate output) use too.
	Redactor *redact.Redactor
	// Stopping, when set, is called once when a halt request or the wall
	// time stops the run (not when ctx is cancelled): the caller may bound
	// how long the process then takes to end (lemmings run exits within
	// seconds whatever a node is stuck in).
	Stopping func(cause error)
}

// redactor is the run's redaction.
func (o Options) redactor() *redact.Redactor {
	if o.Redactor != nil {
		return o.Redactor
	}
	return redact.Default()
}

// Result is how a run (or one stretch of it) ended.
type Result struct {
	RunID string
	// Status is the stored (graph) status; Standing says it in the one
	// vocabulary, with the reason and the next step.
	Status   graph.Status
	Standing runstate.Standing
	State    runstate.State
	Branch   string
	RunDir   string
}

// Start begins a new run on a fresh worktree and branch.
func Start(ctx context.Context, o Options) (_ Result, err error) {
	if o.Remit == "" && o.PlanFile == "" {
		return Result{}, errors.New("a remit is required: lemmings run \"what to do\" (or --plan plan.yaml)")
	}
	if o.Config == nil {
		o.Config = config.Default()
	}
	if err := CheckRemit(o.Remit, o.Config.Limits.RemitBytes); err != nil {
		return Result{}, err
	}
	var plan *runstate.Plan
	if o.PlanFile != "" {
		p, err := nodes.LoadPlan(o.PlanFile)
		if err != nil {
			return Result{}, err
		}
		plan = p
	}
	repo, err := workspace.OpenRepo(ctx, o.RepoDir)
	if err != nil {
		return Result{}, err
	}
	// Refusals that need no run: a .lemmings that is not lemmings' own, a
	// prompt template that would fail mid-run.
	if _, err := DataRoot(repo.Root()); err != nil {
		return Result{}, err
	}
	if _, err := CheckPrompts(repo.Root(), o.Config); err != nil {
		return Result{}, err
	}
	learnSecrets(o.redactor(), repo.Root(), o.Config)
	remit := o.Remit
	if red := o.redactor().String(remit); red != remit {
		// The run works with the redacted remit from its first step: no
		// model, log, checkpoint or page ever sees the secret.
		fmt.Fprintf(orDiscard(o.Warn), "warning: the remit holds a secret; the run works with %s in its place (give the agents a file or an environment variable name instead)\n", redactedMarks(red))
		remit = red
	}
	runID := cmp.Or(o.RunID, NewRunID()) // CreateWorktreeAt checks a given one
	ctx, tr, err := startTracing(ctx, o, runID, cmp.Or(o.Remit, o.PlanFile), "")
	if err != nil {
		return Result{}, err
	}
	defer tr.Close(ctx)
	wt, err := repo.CreateWorktreeAt(ctx, runID, o.BaseCommit)
	if err != nil {
		return Result{}, err
	}
	base, err := wt.Head(ctx)
	if err != nil {
		return Result{}, err
	}
	env, err := prepare(ctx, o, repo.Root(), wt)
	if err != nil {
		// The run never started: leave no worktree, branch or run folder behind.
		cctx := context.WithoutCancel(ctx)
		if cerr := errors.Join(repo.RemoveWorktree(cctx, runID), repo.DeleteBranch(cctx, runID),
			os.RemoveAll(filepath.Join(repo.Root(), DataDir, RunsDir, runID))); cerr != nil {
			err = fmt.Errorf("%w\n(cleaning up the run that did not start also failed: %v)", err, cerr)
		}
		return Result{}, err
	}
	defer closeInto(env, &err)
	initial := runstate.State{
		RunID: runID, Remit: remit, Phase: runstate.PhaseExecute, Plan: plan, Approve: o.Approve,
		ReviewInterval: o.Config.Limits.ReviewInterval, StartedAt: time.Now().UTC(),
		BaseCommit: base, Branch: wt.Branch(), Demo: o.Demo,
	}
	if initial.Remit == "" {
		initial.Remit = "carry out the plan in " + filepath.Base(o.PlanFile)
	}
	env.noteTrace(runID, tr, o)
	actx, stop := env.watch(ctx, o.Config, o.Stopping)
	final, err := env.app.Run(actx, runID, initial)
	stop()
	return env.result(ctx, runID, final, err)
}

// Resume continues a stored run from its last checkpoint.
func Resume(ctx context.Context, o Options) (_ Result, err error) {
	repo, err := workspace.OpenRepo(ctx, o.RepoDir)
	if err != nil {
		return Result{}, err
	}
	if _, err := DataRoot(repo.Root()); err != nil {
		return Result{}, err
	}
	learnSecrets(o.redactor(), repo.Root(), o.Config)
	if o.RunID == "" {
		id, err := LatestResumable(ctx, repo.Root())
		if err != nil {
			return Result{}, err
		}
		o.RunID = id
	}
	if d := o.Decision; d != nil && !d.Approved && strings.TrimSpace(d.Reason) == "" {
		return Result{}, errors.New("a rejection needs a reason: lemmings resume --reject \"why\"")
	}
	store, err := storeOf(o, repo.Root())
	if err != nil {
		return Result{}, err
	}
	snap, err := store.State(ctx, o.RunID)
	if err != nil {
		return Result{}, fmt.Errorf("resume %s: %w", o.RunID, err)
	}
	if snap.Status == graph.StatusDone {
		st := standingOf(snap, nil)
		return Result{}, fmt.Errorf("run %s has ended %s (%s) and cannot be resumed: %s", o.RunID, st.Status, st.Reason, st.Next)
	}
	if o.Decision == nil && snap.Status == graph.StatusPaused && !forkStart(snap) {
		// An approval that a bare resume walks through is no approval.
		res := Result{RunID: o.RunID, Status: snap.Status, Standing: standingOf(snap, nil), State: snap.State, Branch: snap.State.Branch,
			RunDir: filepath.Join(repo.Root(), DataDir, RunsDir, o.RunID)}
		if report := filepath.Join(res.RunDir, ReportFile); fileExists(report) {
			res.State.ReportPath = report
		}
		return res, &PausedError{RunID: o.RunID, Reason: snap.Reason}
	}
	if active, err := runActive(ctx, store, o.RunID); err != nil || active {
		if err == nil {
			err = fmt.Errorf("run %s is being run by another lemmings process (lemmings halt %s stops it)", o.RunID, o.RunID)
		}
		return Result{}, err
	}
	wt, err := repo.OpenWorktree(ctx, o.RunID)
	if err != nil {
		return Result{}, fmt.Errorf("resume %s: %w", o.RunID, err)
	}
	// The step that runs next starts from the world as it was when it first
	// started: a process killed inside a step may have committed (work in
	// progress, knowledge documents, a task) or left files behind, and none
	// of that may be visible to the step's re-run. Before prepare, so the
	// index is brought up to date with that world too.
	head := snap.Metadata[MetaGitHead]
	if snap.Status == graph.StatusDone {
		head = "" // nothing runs again
	}
	reset, rescue, err := resetToCheckpoint(ctx, wt, head, true)
	if err != nil {
		return Result{}, fmt.Errorf("resume %s: %w", o.RunID, err)
	}
	ctx, tr, err := startTracing(ctx, o, o.RunID, snap.State.Remit, snap.Metadata[tracing.MetaTraceparent])
	if err != nil {
		return Result{}, err
	}
	defer tr.Close(ctx)
	env, err := prepare(ctx, o, repo.Root(), wt)
	if err != nil {
		return Result{}, err
	}
	defer closeInto(env, &err)
	env.noteTrace(o.RunID, tr, o)
	if err := os.Remove(filepath.Join(env.runDir, HaltFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Result{}, fmt.Errorf("resume %s: clear the halt request: %w", o.RunID, err)
	}
	if reset != "" {
		to := snap.Metadata[MetaGitHead]
		env.note(o.RunID, events.WorldReset{To: to, From: reset, Step: snap.Step, Rescue: rescue}, o.Sinks)
		fmt.Fprintf(orDiscard(o.Warn), "warning: the work tree was put back at %s, where the last checkpoint left it: the step that was cut off runs again from its start. What it had left (%s) is kept on branch %s: git diff %s %s shows it\n",
			to[:min(len(to), 10)], shortFrom(reset), rescue, to[:min(len(to), 10)], rescue)
	}
	var opts []graph.RunOption
	if o.Decision != nil || o.Approve != "" {
		opts = append(opts, graph.WithUpdate(func(s runstate.State) (runstate.State, error) {
			if o.Decision != nil {
				dec := *o.Decision
				s.Approval = &dec
			}
			if o.Approve != "" {
				s.Approve = strings.TrimPrefix(o.Approve, "none")
			}
			return s, nil
		}))
	}
	actx, stop := env.watch(ctx, o.Config, o.Stopping)
	final, err := env.app.Resume(actx, o.RunID, opts...)
	stop()
	return env.result(ctx, o.RunID, final, err)
}

// MetaGitHead is the checkpoint metadata key of the run branch's HEAD after
// the step: where a resumed run's next step starts from.
const MetaGitHead = "git_head"

// PausedError: a paused run was resumed without a decision; it stays paused.
type PausedError struct {
	RunID  string
	Reason string // what waits for a decision
}

func (e *PausedError) Error() string {
	return fmt.Sprintf("run %s is still paused, waiting for a decision: %s", e.RunID, e.Reason)
}

// Unwrap makes a PausedError a graph.ErrPaused.
func (e *PausedError) Unwrap() error { return graph.ErrPaused }

// shortFrom abbreviates the commit resetToCheckpoint moved away from.
func shortFrom(from string) string {
	sha, rest, _ := strings.Cut(from, " ")
	if len(sha) > 10 {
		sha = sha[:10]
	}
	return strings.TrimSpace(sha + " " + rest)
}

// NewRunID names a run by its start time, with a random suffix so two runs in
// the same second never collide.
func NewRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
