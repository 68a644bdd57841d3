package eval

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// The random-weight model of the real Ollama server (make ollama) can solve
// nothing: the eval must score 0% and still give every exercise a complete
// row — attempts, tokens, time and why it failed. Skips without the server
// binary; make test-ollama requires it.
func TestRealOllamaEvalWithANoiseModelScoresZero(t *testing.T) {
	s := realollama.Start(t)
	dirs := builtin(t)
	cfg := config.Default()
	cfg.Ollama.Host = s.URL
	cfg.Supervisors.Enabled = false
	cfg.RAG.Enabled = false
	for _, role := range []string{config.RolePrimary, config.RoleSummarizer} {
		r := cfg.Roles[role]
		r.Model, r.Options, r.MaxTokens = s.Models.Chat, map[string]any{"seed": 7}, 600
		cfg.Roles[role] = r
	}
	// Tight limits and prompt budgets a 4096-token model holds (as the
	// CLI's real-server test sets them), short replies: one task per run.
	cfg.Limits.MaxActions, cfg.Limits.MaxRetries, cfg.Limits.MaxTasks, cfg.Limits.MaxConsecutiveFailures = 2, 1, 1, 1
	cfg.Limits.TokenBudgets = map[string]int{"scope_agent": 2000, "task_planner": 2000, "implementor": 2400, "qa": 2000, "assessor": 2000, "summarizer": 1000}
	cfg.Retry.InitialBackoff = 10 * time.Millisecond

	out := t.TempDir()
	if d := os.Getenv("LEMMINGS_EVAL_KEEP"); d != "" { // keep the eval's folder to look at
		out = d
	}
	start := time.Now()
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: &Lemmings{Config: cfg}, Out: out, Label: s.Models.Chat, Model: s.Models.Chat,
		Filter: regexp.MustCompile(`^(go|python)/hello-world$`), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("eval of 2 exercises with the noise model: %v", time.Since(start).Round(time.Millisecond))
	if len(f.Results) != 2 || f.Totals.Scored != 2 || f.Totals.Pass2 != 0 || f.Totals.Rate2() != 0 {
		t.Fatalf("totals %+v of %d results", f.Totals, len(f.Results))
	}
	for _, r := range f.Results {
		if r.Status != StatusFailed || r.Attempts != 2 || len(r.Runs) != 2 || r.Tokens() == 0 || r.WallSeconds <= 0 ||
			!strings.HasPrefix(r.Reason, "tests failed: ") || r.TestOutput == "" || r.WorkDir == "" {
			t.Errorf("%s: incomplete row %+v", r.ID, r)
		}
		for _, run := range r.Runs {
			if run.RunID == "" || run.Outcome == "done" {
				t.Errorf("%s: run %+v", r.ID, run)
			}
		}
		// The failed exercise's work stays for inspection, with the runs' logs.
		if _, err := os.Stat(filepath.Join(r.WorkDir, "repo", ".lemmings", "runs", r.Runs[0].RunID, "events.jsonl")); err != nil {
			t.Errorf("%s: %v", r.ID, err)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**pass@1 0.0% · pass@2 0.0%** of 2 scored exercises", "| go | 1 | 1 | 0 (0.0%) | 0 (0.0%)", "| python/hello-world | ✗ | ✗ | 2 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
