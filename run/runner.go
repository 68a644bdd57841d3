package run

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/sandbox"
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
	Decision *nodes.Approval
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
}

// Result is how a run (or one stretch of it) ended.
type Result struct {
	RunID string
	// Status is the stored (graph) status; Standing says it in the one
	// vocabulary, with the reason and the next step.
	Status   graph.Status
	Standing nodes.Standing
	State    nodes.WorkflowState
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
	var plan *nodes.Plan
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
	learnSecrets(repo.Root(), o.Config)
	remit := o.Remit
	if red := redact.String(remit); red != remit {
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
	initial := nodes.WorkflowState{
		RunID: runID, Remit: remit, Phase: nodes.PhaseExecute, Plan: plan, Approve: o.Approve,
		ReviewInterval: o.Config.Limits.ReviewInterval, StartedAt: time.Now().UTC(),
		BaseCommit: base, Branch: wt.Branch(),
	}
	if initial.Remit == "" {
		initial.Remit = "carry out the plan in " + filepath.Base(o.PlanFile)
	}
	env.noteTrace(runID, tr, o)
	actx, stop := env.watch(ctx, o.Config)
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
	learnSecrets(repo.Root(), o.Config)
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
		env.note(o.RunID, "world_reset", map[string]any{"to": to, "from": reset, "step": snap.Step, "rescue": rescue}, o.Sinks)
		fmt.Fprintf(orDiscard(o.Warn), "warning: the work tree was put back at %s, where the last checkpoint left it: the step that was cut off runs again from its start. What it had left (%s) is kept on branch %s: git diff %s %s shows it\n",
			to[:min(len(to), 10)], shortFrom(reset), rescue, to[:min(len(to), 10)], rescue)
	}
	var opts []graph.ResumeOption
	if o.Decision != nil || o.Approve != "" {
		opts = append(opts, graph.WithUpdate(func(s nodes.WorkflowState) (nodes.WorkflowState, error) {
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
	actx, stop := env.watch(ctx, o.Config)
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

// runEnv is everything one process needs to advance a run.
type runEnv struct {
	box    *sandbox.Box
	app    *graph.Compiled[nodes.WorkflowState]
	router *llm.Router
	pool   *nodes.SupervisorPool
	index  *rag.Index
	events *graph.JSONLSink
	runDir string
	branch string
	wt     *workspace.Worktree
	deps   *nodes.Deps
	views  *views
	// halted says whether a halt was requested (the halt file, or the
	// backend's check), polled every haltEvery while the run works.
	halted    func() bool
	haltEvery time.Duration
}

// close releases what the process held; an error means the event or prompt
// log may have lost its last lines.
func (e *runEnv) close() error {
	var errs []error
	if e.pool != nil {
		e.pool.Close()
	}
	if e.box != nil {
		errs = append(errs, e.box.Close())
	}
	if e.index != nil {
		errs = append(errs, e.index.Close())
	}
	if e.events != nil {
		errs = append(errs, e.events.Close())
	}
	if e.router != nil {
		errs = append(errs, e.router.Close())
	}
	return errors.Join(errs...)
}

// closeInto closes env and adds a failure to close to *err.
func closeInto(env *runEnv, err *error) {
	if cerr := env.close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("closing the run's logs and index: %w", cerr))
	}
}

func (e *runEnv) result(ctx context.Context, runID string, final nodes.WorkflowState, runErr error) (Result, error) {
	res := Result{RunID: runID, State: final, Branch: e.branch, RunDir: e.runDir}
	wctx := context.WithoutCancel(ctx)
	snap, err := e.app.State(wctx, runID)
	if err == nil {
		res.Status, res.State = snap.Status, snap.State
	} else {
		snap = graph.Snapshot[nodes.WorkflowState]{RunID: runID, State: final}
	}
	res.Standing = standingOf(snap, runErr)
	if res.Status == graph.StatusHalted {
		// The step a halt or the wall time cut off runs again from its start
		// on resume: put the work tree back where the last checkpoint left
		// it now, as resume would, so a stopped run leaves no half-made
		// change. (After Ctrl-C the tree stays as it was, for a look;
		// resume puts it back.)
		if reset, _, rerr := resetToCheckpoint(wctx, e.wt, snap.Metadata[MetaGitHead], false); rerr != nil {
			runErr = errors.Join(runErr, fmt.Errorf("put the work tree back at the last checkpoint: %w", rerr))
		} else if reset != "" {
			e.note(runID, "world_reset", map[string]any{"to": snap.Metadata[MetaGitHead], "from": reset, "step": snap.Step, "why": "the step was cut off"}, nil)
		}
	}
	if res.Status != graph.StatusDone && e.views != nil {
		// The Report node did not run: the run still leaves a report that
		// says where it stands, why, and how to go on.
		st := res.State
		if st.RunID == "" {
			st.RunID = runID
		}
		if path, rerr := e.views.endReport(wctx, st, res.Standing); rerr == nil && path != "" {
			res.State.ReportPath = path
		} else if rerr != nil {
			runErr = errors.Join(runErr, rerr)
		}
	}
	return res, runErr
}

// shortFrom abbreviates the commit resetToCheckpoint moved away from.
func shortFrom(from string) string {
	sha, rest, _ := strings.Cut(from, " ")
	if len(sha) > 10 {
		sha = sha[:10]
	}
	return strings.TrimSpace(sha + " " + rest)
}

// watch returns the context this process advances the run with: a halt
// request or the wall time (counted from now, for this stretch of the run)
// cancel it with their cause. The nodes see the same deadline.
func (e *runEnv) watch(ctx context.Context, cfg *config.Config) (context.Context, func()) {
	var limit time.Duration
	if cfg != nil {
		limit = cfg.Limits.MaxWallTime
	}
	if limit > 0 && e.deps != nil {
		e.deps.WallDeadline = time.Now().Add(limit)
	}
	return watchStops(nodes.ObserveModels(ctx), e.halted, e.haltEvery, limit)
}

// prepare opens everything a process needs to advance the run on wt: the
// models, the gates, the index, the logs, and the compiled graph over the
// run store.
func prepare(ctx context.Context, o Options, root string, wt *workspace.Worktree) (*runEnv, error) {
	cfg := o.Config
	if cfg == nil {
		cfg = config.Default()
	}
	runDir := filepath.Join(root, DataDir, RunsDir, wt.RunID())
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return nil, err
	}
	wt.FS().LimitWrites(int64(cfg.Limits.WriteBytes))
	env := &runEnv{runDir: runDir, branch: wt.Branch(), wt: wt, haltEvery: haltPoll}
	env.halted = func() bool { return fileExists(filepath.Join(runDir, HaltFile)) }
	if o.Backend != nil && o.Backend.Halted != nil {
		id := wt.RunID()
		env.halted, env.haltEvery = func() bool { return o.Backend.Halted(id) }, backendHaltPoll // a query of the shared store
	}
	ok := false
	defer func() {
		if !ok {
			_ = env.close() // the error that stopped prepare is the one to report
		}
	}()
	// Warnings before the run starts go to the user and, once the event log
	// is open, into it too.
	var startup warningLog
	warn := io.MultiWriter(&startup, orDiscard(o.Warn))

	if err := CheckCLI(cfg); err != nil {
		return nil, err // before any model call: the CLI is missing or not set up
	}
	gates := GatesFrom(cfg, wt.Dir())
	box, err := OpenSandbox(cfg, root, gates, warn)
	if err != nil {
		return nil, err // before any model call: sandbox.mode is required and there is none
	}
	env.box = box
	set, err := env.openModels(ctx, o, cfg, warn)
	if err != nil {
		return nil, err
	}
	composer, err := CheckPrompts(root, cfg)
	if err != nil {
		return nil, err
	}
	search, index := env.openIndex(ctx, root, wt, cfg, warn)
	if set.Supervisors.Enabled {
		env.pool = nodes.NewSupervisorPool(ctx, env.router)
	}
	deps := &nodes.Deps{Model: env.router, Composer: composer, Work: wt, Gates: gates, Sandbox: env.box, Search: search, Index: index,
		Settings: set, Supervisors: env.pool, RunDir: runDir}
	env.views = &views{deps: deps, dir: runDir}
	deps.Hooks = env.views.hooks()

	logged, err := env.openLog(wt.RunID(), o, &startup, warn)
	if err != nil {
		return nil, err
	}
	inner := append([]graph.Sink{logged}, o.Sinks...)
	tr := tracing.FromContext(ctx)
	if tr != nil {
		inner = append(inner, tr)
	}
	// Every sink, the trace included, hears the run's end in the one vocabulary.
	sinks := []graph.Sink{&endSink{runID: wt.RunID(), sinks: inner}}
	app, err := compile(deps, o.Backend, filepath.Join(root, DataDir, CheckpointsDir), wt, filepath.Join(runDir, HaltFile), sinks, tr)
	if err != nil {
		return nil, err
	}
	env.views.mermaid = app.Mermaid()
	env.app, env.deps = app, deps
	ok = true
	return env, nil
}

// openModels opens the model router and returns the run's settings, fitted
// to what the models can do: prompt budgets within their windows, the
// supervisors off when the cloud does not answer, the planner's role.
func (env *runEnv) openModels(ctx context.Context, o Options, cfg *config.Config, warn io.Writer) (nodes.Settings, error) {
	set := SettingsFrom(cfg)
	rc := RouterConfigFrom(cfg, set.Supervisors.Enabled)
	if cfg.Log.Prompts {
		rc.PromptLog = filepath.Join(env.runDir, PromptsFile)
	}
	var ropts []llm.Option
	if o.HTTPClient != nil {
		ropts = append(ropts, llm.WithHTTPClient(o.HTTPClient))
	}
	router, err := llm.NewRouter(rc, ropts...)
	if err != nil {
		return set, fmt.Errorf("models: %w", err)
	}
	env.router = router
	if err := router.Check(ctx, nodes.RolePrimary); err != nil {
		return set, err
	}
	fitBudgets(ctx, &set, router)
	if set.Supervisors.Enabled {
		if err := router.Check(ctx, nodes.RoleSupervisor); err != nil {
			fmt.Fprintf(warn, "warning: supervisors off for this run: %v (or turn them off with --no-supervisors or supervisors.enabled: false)\n", err)
			set.Supervisors.Enabled = false
		}
	}
	configurePlanner(ctx, &set, router, warn)
	return set, nil
}

// openIndex opens the retrieval index and brings it up to date with the
// work tree; a run goes on without retrieval when it cannot.
func (env *runEnv) openIndex(ctx context.Context, root string, wt *workspace.Worktree, cfg *config.Config, warn io.Writer) (nodes.Searcher, nodes.Indexer) {
	if !cfg.RAG.Enabled {
		return nil, nil
	}
	idx, err := OpenIndex(ctx, filepath.Join(root, DataDir, IndexDir), cfg, env.router, warn)
	if err != nil {
		fmt.Fprintf(warn, "warning: retrieval off for this run: %v\n", err)
		return nil, nil
	}
	env.index = idx
	if _, err := idx.Update(ctx, wt.Dir(), rag.UpdateOptions{MaxFileSize: int64(cfg.RAG.MaxFileBytes), KnowledgeDir: cfg.Knowledge.Dir}); err != nil {
		fmt.Fprintf(warn, "warning: index not updated: %v\n", err)
	}
	return idx, idx
}

// openLog opens the run's event log, records the run's choices, and writes
// the warnings given before the log was open into it; it returns the sink
// the graph logs to (secrets redacted).
func (env *runEnv) openLog(runID string, o Options, startup *warningLog, warn io.Writer) (graph.Sink, error) {
	events, err := graph.OpenJSONLSink(filepath.Join(env.runDir, EventsFile))
	if err != nil {
		return nil, err
	}
	env.events = events
	changed, err := saveChoices(env.runDir, o.Choices)
	if err != nil {
		return nil, fmt.Errorf("record the run's choices: %w", err)
	}
	for _, k := range changed {
		fmt.Fprintf(warn, "warning: %s is now %s for this run (recorded for later resumes)\n", k, o.Choices[k])
	}
	logged := redactingSink{events}
	for _, w := range startup.lines() {
		ev := graph.Event{Kind: graph.EventCustom, Name: "warning", RunID: runID, Time: time.Now().UTC()}
		// startup: the warning was written to o.Warn already, when it arose.
		ev.Data, _ = json.Marshal(map[string]any{"message": w, "startup": true})
		for _, sink := range append([]graph.Sink{logged}, o.Sinks...) {
			sink.Handle(ev)
		}
	}
	return logged, nil
}

// compile builds the workflow over the run store in checkpoints: each
// checkpoint records the branch's HEAD after its step, and a halt file stops
// the run between steps.
func compile(deps *nodes.Deps, backend *Backend, checkpoints string, wt *workspace.Worktree, haltPath string, sinks []graph.Sink, tr *tracing.Run) (*graph.Compiled[nodes.WorkflowState], error) {
	halted := func(string) bool {
		_, err := os.Stat(haltPath)
		return err == nil
	}
	var store graph.Checkpointer
	if backend != nil {
		store = backend.Checkpointer
		if backend.Halted != nil {
			halted = backend.Halted
		}
	} else {
		fs, err := graph.NewFileCheckpointer(checkpoints)
		if err != nil {
			return nil, err
		}
		store = fs
	}
	app, err := nodes.Build(deps).Compile(
		graph.WithCheckpointer(store),
		// Checkpoints keep no secret, and the run goes on with what they keep.
		graph.WithRedact(redact.Default().JSON),
		graph.WithSinks(sinks...),
		graph.WithCheckedMetadata(withTraceMetadata(tr, checkpointMeta(backend, wt))),
		graph.WithStopCheck(halted),
	)
	if err != nil {
		return nil, fmt.Errorf("workflow graph: %w", err)
	}
	return app, nil
}

// NewRunID names a run by its start time, with a random suffix so two runs in
// the same second never collide.
func NewRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// localLabels are the prompts each local role serves.
var localLabels = map[string][]string{
	nodes.RolePrimary:    {nodes.NodeScope, nodes.NodePlanner, nodes.NodeImplementor, nodes.NodeQA, nodes.NodeAssessor},
	nodes.RolePlanner:    {nodes.NodeScope, nodes.NodePlanner},
	nodes.RoleSummarizer: {"summarizer"},
}

// fitBudgets caps each local prompt budget at what the role's model window
// holds, so prompts are packed to fit instead of being refused (or, worse,
// cut by the server).
func fitBudgets(ctx context.Context, set *nodes.Settings, router *llm.Router) {
	for role, labels := range localLabels {
		limit, err := router.PromptLimit(ctx, role)
		if err != nil || limit <= 0 {
			continue
		}
		if set.TokenBudgets == nil {
			set.TokenBudgets = map[string]int{}
		}
		for _, l := range labels {
			set.TokenBudgets[l] = min(set.Budget(l), limit)
		}
	}
}
