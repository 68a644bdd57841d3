package run

// What one process opens to advance a run: the models, the sandbox and
// gates, the index, the event log, the compiled workflow over the run
// store; and what it closes when the stretch ends.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/tracing"
	"github.com/lemmings-dev/lemmings/workspace"
)

// runEnv is everything one process needs to advance a run.
type runEnv struct {
	box    *sandbox.Box
	app    *graph.Compiled[runstate.State]
	router *llm.Router
	pool   *supervisors.Jobs
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

func (e *runEnv) result(ctx context.Context, runID string, final runstate.State, runErr error) (Result, error) {
	res := Result{RunID: runID, State: final, Branch: e.branch, RunDir: e.runDir}
	wctx := context.WithoutCancel(ctx)
	snap, err := e.app.State(wctx, runID)
	if err == nil {
		res.Status, res.State = snap.Status, snap.State
	} else {
		snap = graph.Snapshot[runstate.State]{RunID: runID, State: final}
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
			e.note(runID, events.WorldReset{To: snap.Metadata[MetaGitHead], From: reset, Step: snap.Step, Why: "the step was cut off"}, nil)
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

// watch returns the context this process advances the run with: a halt
// request or the wall time (counted from now, for this stretch of the run)
// cancel it with their cause. The nodes see the same deadline.
func (e *runEnv) watch(ctx context.Context, cfg *config.Config, stopping func(error)) (context.Context, func()) {
	var limit time.Duration
	if cfg != nil {
		limit = cfg.Limits.MaxWallTime
	}
	if limit > 0 && e.deps != nil {
		e.deps.WallDeadline = time.Now().Add(limit)
	}
	return watchStops(nodes.ObserveModels(ctx), e.halted, e.haltEvery, limit, stopping)
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
	// The caches are the repository's, by its identity, not its path.
	scope, err := wt.Repo().CacheScope()
	if err != nil {
		return nil, err
	}
	box, err := OpenSandbox(cfg, scope, gates, warn)
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
		env.pool = supervisors.NewJobs(ctx, env.router)
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
	app, err := compile(deps, o.Backend, filepath.Join(root, DataDir, CheckpointsDir), wt, filepath.Join(runDir, HaltFile), sinks, tr, o.redactor())
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
	router = summarizerOrPrimary(ctx, router, rc, ropts, warn)
	env.router = router
	fitBudgets(ctx, &set, router)
	if set.Supervisors.Enabled {
		if err := router.Check(ctx, supervisors.Role); err != nil {
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
	file, err := graph.OpenJSONLSink(filepath.Join(env.runDir, EventsFile))
	if err != nil {
		return nil, err
	}
	env.events = file
	changed, err := saveChoices(env.runDir, o.Choices)
	if err != nil {
		return nil, fmt.Errorf("record the run's choices: %w", err)
	}
	for _, k := range changed {
		fmt.Fprintf(warn, "warning: %s is now %s for this run (recorded for later resumes)\n", k, o.Choices[k])
	}
	logged := redactingSink{next: file, red: o.redactor()}
	for _, w := range startup.lines() {
		ev := events.Event(runID, events.Warning{Message: w, Startup: true})
		ev.Time = time.Now().UTC()
		for _, sink := range append([]graph.Sink{logged}, o.Sinks...) {
			sink.Handle(ev)
		}
	}
	return logged, nil
}

// compile builds the workflow over the run store in checkpoints: each
// checkpoint records the branch's HEAD after its step, and a halt file stops
// the run between steps.
func compile(deps *nodes.Deps, backend *Backend, checkpoints string, wt *workspace.Worktree, haltPath string, sinks []graph.Sink, tr *tracing.Run, red *redact.Redactor) (*graph.Compiled[runstate.State], error) {
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
		fs, err := graph.NewFileCheckpointer(checkpoints, refusing(filepath.Dir(filepath.Dir(checkpoints))))
		if err != nil {
			return nil, err
		}
		store = fs
	}
	app, err := nodes.Build(deps).Compile(
		graph.WithCheckpointer(store),
		// Checkpoints keep no secret, and the run goes on with what they keep.
		graph.WithRedact(red.JSON),
		graph.WithSinks(sinks...),
		graph.WithCheckedMetadata(withTraceMetadata(tr, checkpointMeta(backend, wt))),
		graph.WithStopCheck(halted),
	)
	if err != nil {
		return nil, fmt.Errorf("workflow graph: %w", err)
	}
	return app, nil
}

// localLabels are the prompts each local role serves.
var localLabels = map[string][]string{
	nodes.RolePrimary:    {runstate.NodeScope, runstate.NodePlanner, runstate.NodeImplementor, runstate.NodeQA, runstate.NodeAssessor},
	nodes.RolePlanner:    {runstate.NodeScope, runstate.NodePlanner},
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
		largest := 0
		for _, l := range labels {
			set.TokenBudgets[l] = min(set.Budget(l), limit)
			largest = max(largest, set.TokenBudgets[l])
		}
		// One window for the run, fit to the role's largest prompt: a window
		// that grows mid-run reloads the model and drops its cache.
		_ = router.ReserveWindow(ctx, role, largest)
	}
}
