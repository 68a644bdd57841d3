package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lemmings-dev/lemmings/workspace"
)

// Attempt is one try at an exercise: the solver changes Repo (a git
// repository on branch main, clean) and leaves its answer committed on main.
type Attempt struct {
	Exercise Exercise
	Language Language
	// Number is 1 or 2; the second attempt carries the first one's failing
	// test output in Feedback (and in Remit).
	Number   int
	Repo     string
	Remit    string
	Feedback string
}

// Outcome is what a solver reports about an attempt.
type Outcome struct {
	RunID            string  `json:"run_id,omitempty"`
	Status           string  `json:"status,omitempty"`  // the run's end: done, failed, interrupted…
	Outcome          string  `json:"outcome,omitempty"` // the workflow's verdict: done, failed, limit
	StopReason       string  `json:"stop_reason,omitempty"`
	TasksCompleted   int     `json:"tasks_completed"`
	TasksFailed      int     `json:"tasks_failed"`
	PromptTokens     int     `json:"prompt_tokens"`
	PromptCached     int     `json:"prompt_cached,omitempty"` // of PromptTokens, served by the server's cache
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// Calls and ModelSeconds are the model calls the run made and the time
	// they took (retries and waits included), as docs/costs.md compares them.
	Calls        int     `json:"calls,omitempty"`
	ModelSeconds float64 `json:"model_seconds,omitempty"`
	// Error is a run that ended in error (not interrupted): the attempt
	// counts as failed and the error is shown.
	Error string `json:"error,omitempty"`
}

// Solver works on an exercise. An error means the attempt could not be made
// at all (the model server is down, the repository is broken); a run that
// tried and failed is an Outcome.
type Solver interface {
	// Name names the solver in the results ("lemmings", "oracle").
	Name() string
	Solve(ctx context.Context, a Attempt) (Outcome, error)
}

// Preflighter is a Solver that can check, once before an eval, that it can
// work at all (the model is there), so a dead server stops the eval instead
// of failing every exercise.
type Preflighter interface {
	Preflight(ctx context.Context) error
}

// Oracle is the Solver that puts each exercise's reference solution
// (files.example) in place of the stub, and a task's real change in place:
// it checks the harness and the machine's toolchains, so every exercise
// must pass.
type Oracle struct{}

// Name implements Solver.
func (Oracle) Name() string { return OracleName }

// OracleName is the oracle's name in results.
const OracleName = "oracle"

// Solve implements Solver.
func (Oracle) Solve(ctx context.Context, a Attempt) (Outcome, error) {
	if t := a.Exercise.Task; t != nil {
		// A task's reference is the real change's files.
		for _, rel := range t.Changed {
			dst := filepath.Join(a.Repo, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return Outcome{}, err
			}
			if err := workspace.CopyFile(filepath.Join(a.Exercise.Dir, OracleDir, filepath.FromSlash(rel)), dst); err != nil {
				return Outcome{}, err
			}
		}
		if err := commitAll(ctx, a.Repo, "oracle: the real change"); err != nil {
			return Outcome{}, err
		}
		return Outcome{Status: "done", Outcome: "done", TasksCompleted: 1}, nil
	}
	files, err := a.Exercise.exampleFiles()
	if err != nil {
		return Outcome{Outcome: "failed", Error: err.Error()}, nil
	}
	for sol, ex := range files {
		data, err := os.ReadFile(filepath.Join(a.Exercise.Dir, filepath.FromSlash(ex)))
		if err != nil {
			return Outcome{}, err
		}
		if err := os.WriteFile(filepath.Join(a.Repo, filepath.FromSlash(sol)), data, 0o644); err != nil {
			return Outcome{}, err
		}
	}
	if err := commitAll(ctx, a.Repo, "oracle: reference solution"); err != nil {
		return Outcome{}, err
	}
	return Outcome{Status: "done", Outcome: "done", TasksCompleted: 1}, nil
}

// Remit is what the solver is asked to do on an exercise; feedback, for a
// second attempt, is the failing test output of the first. The wording
// follows Aider's benchmark prompts.
func Remit(ex Exercise, lang Language, feedback string) string {
	var b strings.Builder
	files := strings.Join(ex.Solution, ", ")
	fmt.Fprintf(&b, "Solve the programming exercise %q (%s) described below by editing %s.\n", ex.ID, ex.Language, files)
	fmt.Fprintf(&b, "Make the tests in %s pass (they run with `%s`); do not change the tests.\n", strings.Join(ex.Test, ", "), lang.Test)
	b.WriteString("Don't change the names of existing functions or classes, as the tests use them. Only use the standard library; don't install packages.\n\n")
	b.WriteString("# Instructions\n\n")
	b.WriteString(ex.Instructions)
	b.WriteString("\n")
	if feedback != "" {
		fmt.Fprintf(&b, "\n# Test failures of the previous attempt\n\n`%s` failed:\n\n```\n%s\n```\n\n", lang.Test, strings.TrimSpace(feedback))
		fmt.Fprintf(&b, "The tests are correct; don't change them. Fix the code in %s to resolve the errors.\n", files)
	}
	return b.String()
}
