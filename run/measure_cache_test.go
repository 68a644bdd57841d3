package run_test

// The share of prompt tokens the real Ollama server served from its cache over
// whole runs with SmolLM2, read from its debug log (`loading cache slot …
// prompt=N used=M`). A measurement, not a check, so it runs only when asked,
// under the machine's model lock:
//
//	flock /tmp/lemmings-model.lock env LEMMINGS_MEASURE_RUN=1 go test ./run -run TestMeasureRunCacheShare -v -timeout 30m
//
// docs/costs.md quotes the numbers.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/run"
)

func TestMeasureRunCacheShare(t *testing.T) {
	if os.Getenv("LEMMINGS_MEASURE_RUN") != "1" {
		t.Skip("a measurement: LEMMINGS_MEASURE_RUN=1 (see the file's comment)")
	}
	s := realollama.Start(t, realollama.WithTrainedModels(), realollama.WithEnv("OLLAMA_DEBUG", "1"))
	for _, tc := range []struct{ name, mode string }{{"quick", "quick"}, {"full", "full"}} {
		t.Run(tc.name, func(t *testing.T) {
			repo := filepath.Join(t.TempDir(), "repo")
			if err := os.MkdirAll(repo, 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				"go.mod":        "module example.com/hello\n\ngo 1.22\n",
				"hello.go":      "package hello\n\n// Hello returns the greeting.\nfunc Hello() string {\n\treturn \"Hello, World\"\n}\n",
				"hello_test.go": "package hello\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif got := Hello(); got != \"Hello, Lemmings\" {\n\t\tt.Errorf(\"Hello() = %q\", got)\n\t}\n}\n",
				"README.md":     "# hello\n\nA greeting.\n",
			}
			for p, body := range files {
				if err := os.WriteFile(filepath.Join(repo, p), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=m", "-c", "user.email=m@m", "commit", "-q", "-m", "init"}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = repo
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git: %v %s", err, out)
				}
			}
			cfg := config.Default()
			cfg.Ollama.Host = s.URL
			for _, role := range []string{config.RolePrimary, config.RoleSummarizer} {
				r := cfg.Roles[role]
				r.Model = s.Trained.Chat
				cfg.Roles[role] = r
			}
			cfg.Offline, cfg.RAG.Enabled, cfg.Supervisors.Enabled = true, false, false
			cfg.Limits.MaxWallTime = 6 * time.Minute
			cfg.Pipeline.Mode = tc.mode
			mark := s.LogMark()
			start := time.Now()
			res, err := run.Start(context.Background(), run.Options{RepoDir: repo, Remit: `Make Hello in hello.go return "Hello, Lemmings" so TestHello passes.`, Config: cfg})
			share := s.CacheSince(mark)
			calls := 0
			for _, u := range res.State.Usage {
				calls += u.Calls
			}
			t.Logf("%s run: %v, outcome %q, %d calls in %s; cache served %d of %d prompt tokens over %d requests: share %.2f",
				tc.name, err, res.State.Outcome, calls, time.Since(start).Round(time.Second), share.Used, share.Prompt, share.Requests, share.Share())
		})
	}
}
