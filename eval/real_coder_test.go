package eval

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// The builtin suite with a real coder (issue 32): Qwen2.5-Coder-0.5B at temperature 0,
// configured as `make bench-aider`'s lemmings side, pass@1 only (the first attempt is
// the harness's own work; the second is measured by the bench). At temperature 0 with a
// fixed seed the server is deterministic for one build on one CPU; another CPU's
// -march=native build sums in another order and can flip an exercise the model solves
// by a hair. coderEvalMargin allows that many flips below what was measured
// (docs/eval.md: its measurement and the bench's). Under make test-ollama
// (LEMMINGS_REAL_OLLAMA=1) a missing model fails.
const (
	// pass@1 of the builtin suite with Qwen2.5-Coder-0.5B, make bench-aider MODEL=qwen05
	// on 2026-11-28 (9 of 24: go hello-world, leap, reverse-string, two-fer; python
	// hello-world, isogram, leap, reverse-string, two-fer); this test's own run on the same
	// machine, busier, passed 8 in 6m15s (32 calls, 8,288 + 2,956 tokens).
	coderEvalMeasured = 9
	coderEvalMargin   = 2
)

func TestRealCoderEvalOfTheBuiltinSuite(t *testing.T) {
	s := realollama.Start(t, realollama.WithCoderModels(realollama.CoderModels().Qwen05))
	model := s.Coder.Qwen05
	cfg := config.Default()
	cfg.Ollama.Host = s.URL
	cfg.Offline = true
	cfg.Supervisors.Enabled = false
	cfg.RAG.Enabled = false
	zero := 0.0
	for _, role := range []string{config.RolePrimary, config.RoleSummarizer} {
		r := cfg.Roles[role]
		r.Model, r.Temperature, r.Options = model, &zero, map[string]any{"seed": 1}
		cfg.Roles[role] = r
	}
	cfg.Limits.MaxWallTime = 5 * time.Minute
	// Two draws: the first candidate and its repair, so a real model's
	// repair is exercised here; the four of the default, on the fourteen
	// exercises Qwen-0.5B fails, would add minutes of CI for what
	// bench/bench-aider.sh measures (docs/eval.md).
	cfg.Implementor.Draws = 2
	out := t.TempDir()
	if d := os.Getenv("LEMMINGS_EVAL_KEEP"); d != "" {
		out = d
	}
	start := time.Now()
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: builtin(t), Solver: &Lemmings{Config: cfg, TestTimeout: time.Minute},
		Out: out, Label: model, Model: model, Parallel: 1, MaxAttempts: 1, TestTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var calls, prompt, completion int
	for _, r := range f.Results {
		calls, prompt, completion = calls+r.Calls, prompt+r.PromptTokens, completion+r.CompletionTokens
		if r.Status == "" || r.Attempts != 1 {
			t.Errorf("%s: incomplete row %+v", r.ID, r)
		}
	}
	t.Logf("Qwen2.5-Coder-0.5B, builtin suite: pass@1 %d of %d in %v; %d calls, %d prompt + %d completion tokens",
		f.Totals.Pass1, f.Totals.Scored, time.Since(start).Round(time.Second), calls, prompt, completion)
	if want := coderEvalMeasured - coderEvalMargin; f.Totals.Pass1 < want {
		t.Errorf("pass@1 %d, want at least %d (measured %d, margin %d); report: %s", f.Totals.Pass1, want,
			coderEvalMeasured, coderEvalMargin, out)
	}
}
