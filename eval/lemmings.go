package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/runview"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Lemmings is the Solver that carries out the exercise's remit with lemmings
// in-process, through the same run.Start that `lemmings run` calls. Its one
// gate is the exercise's test command, so the team sees the tests it must
// pass; the eval still runs them itself on the result.
type Lemmings struct {
	Config     *config.Config
	HTTPClient *http.Client
	// Warn receives the runs' start-up warnings (nil: dropped).
	Warn io.Writer
	// Sinks, when set, gives the sinks of one attempt's run (progress).
	Sinks func(a Attempt) []graph.Sink
	// FixRounds are the fix rounds inside each run (limits.fix_rounds).
	// 0 makes a run one try, as in Aider's harness: the failing tests come
	// back only in the eval's second attempt, so pass@1 and pass@2 mean
	// what they mean there.
	FixRounds int
	// Implementor names who does the implementor's work in each run: ""
	// or "lemmings" (lemmings' own Implementor node), "cli" (the configured
	// implementor.cli) or "cli:<preset>" (a coding CLI preset).
	Implementor string
	// TestTimeout bounds the run's test gate (0: the gate's default). The
	// eval's own check of the tests has the same bound: a small coder's
	// endless loop should cost minutes of CPU once, not ten.
	TestTimeout time.Duration
}

// takeAttempted commits the exercise's solution files as the last failed
// attempt left them, when it left any.
func takeAttempted(ctx context.Context, a Attempt, failures []runstate.Failure) error {
	if len(failures) == 0 || failures[len(failures)-1].Attempted == "" {
		return nil
	}
	wip := failures[len(failures)-1].Attempted
	files := a.Exercise.Solution
	if a.Exercise.Task != nil {
		// A task's answer is wherever the attempt wrote.
		out, err := git(ctx, a.Repo, "diff", "--name-only", "--no-renames", "--diff-filter=AM", "-z", "HEAD", wip)
		if err != nil {
			return err
		}
		files = nil
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				files = append(files, p)
			}
		}
		if len(files) == 0 {
			return nil
		}
	}
	args := append([]string{"checkout", wip, "--"}, files...)
	if _, err := git(ctx, a.Repo, args...); err != nil {
		return err
	}
	return commitAll(ctx, a.Repo, fmt.Sprintf("eval: attempt %d's code (its tests failed)", a.Number))
}

// Name implements Solver.
func (l *Lemmings) Name() string { return "lemmings" }

// notTheModel are the model-call failures that say nothing about the model's
// skill: the server or the account failed, not the answer.
var notTheModel = map[llm.ErrorKind]bool{
	llm.KindUnavailable: true, llm.KindAuth: true, llm.KindQuota: true, llm.KindModelNotFound: true,
}

// Preflight checks that the primary model answers before any exercise runs.
func (l *Lemmings) Preflight(ctx context.Context) error {
	if err := l.checkImplementor(); err != nil {
		return err
	}
	var opts []llm.Option
	if l.HTTPClient != nil {
		opts = append(opts, llm.WithHTTPClient(l.HTTPClient))
	}
	router, err := llm.NewRouter(run.RouterConfigFrom(l.Config, false), opts...)
	if err != nil {
		return fmt.Errorf("models: %w", err)
	}
	defer router.Close()
	return router.Check(ctx, nodes.RolePrimary)
}

func (l *Lemmings) checkImplementor() error {
	_, err := l.config()
	return err
}

// config is the runs' configuration with the implementor applied; a coding
// CLI that cannot run stops the eval before any exercise.
func (l *Lemmings) config() (*config.Config, error) {
	cfg, err := l.Config.WithImplementor(l.Implementor)
	if err != nil {
		return nil, err
	}
	if err := run.CheckCLI(cfg); err != nil {
		return nil, fmt.Errorf("implementor %q: %w", l.Implementor, err)
	}
	return cfg, nil
}

// Solve implements Solver: one lemmings run on a.Repo, whose branch is then
// fast-forwarded onto main.
func (l *Lemmings) Solve(ctx context.Context, a Attempt) (Outcome, error) {
	base, err := l.config()
	if err != nil {
		return Outcome{}, err
	}
	cfg := *base
	timeout := workspace.DefaultTestTimeout
	if l.TestTimeout > 0 {
		timeout = l.TestTimeout
	}
	cfg.Gates = []config.Gate{{Name: "test", Command: a.Language.Test, Timeout: timeout}}
	cfg.Limits.FixRounds = l.FixRounds
	// A task is run as `lemmings run` runs on a user's repository: its test
	// command as the gate, the pipeline lemmings' own choice.
	if a.Exercise.Task == nil && (cfg.Pipeline.Mode == "" || cfg.Pipeline.Mode == nodes.PipelineAuto) {
		// An exercise is one task: its solution file(s) against its tests.
		// One attempt per run: the eval's second attempt is the retry with
		// the failing tests, as in Aider's harness (docs/costs.md).
		cfg.Pipeline.Mode = nodes.PipelineQuick
		cfg.Pipeline.QuickAttempts = 1
	}
	o := run.Options{RepoDir: a.Repo, Remit: a.Remit, Config: &cfg, Warn: l.Warn, HTTPClient: l.HTTPClient}
	if l.Sinks != nil {
		o.Sinks = l.Sinks(a)
	}
	res, err := run.Start(ctx, o)
	if res.RunID == "" && err != nil {
		return Outcome{}, err // the run could not start: not the model's doing
	}
	if ctx.Err() != nil {
		return Outcome{}, context.Cause(ctx)
	}
	var le *llm.Error
	if errors.As(err, &le) && notTheModel[le.Kind] {
		return Outcome{RunID: res.RunID}, err // the attempt is void: a resumed eval makes it again
	}
	v := runview.Of(&res.State, res.Standing)
	out := Outcome{RunID: res.RunID, Status: string(v.Standing.Status), Outcome: string(v.Outcome), StopReason: v.StopReason,
		TasksCompleted: v.Tasks.Completed, TasksFailed: v.Tasks.Failed,
		PromptTokens: v.Total.PromptTokens, PromptCached: v.Total.PromptCached, CompletionTokens: v.Total.CompletionTokens, CostUSD: v.Total.CostUSD,
		Calls: v.Total.Calls, ModelSeconds: v.Total.Elapsed.Seconds()}
	if err != nil {
		out.Error = err.Error()
		if out.Outcome == "" {
			out.Outcome = "failed"
		}
	}
	// Whatever the run committed is its answer.
	if res.Branch != "" {
		if _, gerr := git(ctx, a.Repo, "merge", "-q", "--ff-only", res.Branch); gerr != nil {
			return out, fmt.Errorf("take the run's answer: %w", gerr)
		}
	}
	// A run whose last task failed rolled its branch back; its last attempt's
	// code is the answer the tests judge and the next attempt starts from, as
	// in Aider's harness (where the files keep the failed try): otherwise the
	// second attempt is shown the stub's failures, not its own.
	if v.Outcome != "done" {
		if err := takeAttempted(ctx, a, res.State.Failures); err != nil {
			return out, fmt.Errorf("take the failed attempt's code: %w", err)
		}
	}
	if repo, rerr := workspace.OpenRepo(ctx, a.Repo); rerr == nil {
		_ = repo.RemoveWorktree(context.WithoutCancel(ctx), res.RunID) // a copy of main now; its logs stay in .lemmings/runs
	}
	if errors.Is(err, context.Canceled) {
		return out, err
	}
	return out, nil
}
