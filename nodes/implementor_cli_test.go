package nodes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/buildtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// buildFakeCLI builds internal/fakecli for the in-process tests.
func buildFakeCLI(t *testing.T) string {
	t.Helper()
	return buildtest.Binary(t, "github.com/lemmings-dev/lemmings/internal/fakecli")
}

// One attempt in-process (under -race in make test): the first CLI run
// leaves a gate failing, a fresh run is shown it and fixes it, the attempt
// finishes with the gates' results for QA and the CLI's usage counted.
func TestACLIAttemptRunsTheGatesAndSendsAFailureToAFreshRun(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo})
	script := filepath.Join(t.TempDir(), "script.json")
	record := filepath.Join(t.TempDir(), "record")
	writeScript := `{"record": ` + strconvQuote(record) + `, "runs": [
	  {"write": {"NOTES.md": "todo\n"}, "input_tokens": 100, "output_tokens": 10, "cost_usd": 0.001, "final": "Looked."},
	  {"replace": [{"path": "stats.go", "old": "float64(total / len(xs))", "new": "float64(total) / float64(len(xs))"}], "input_tokens": 200, "output_tokens": 20, "cost_usd": 0.002, "final": "Fixed the division."}]}`
	if err := os.WriteFile(script, []byte(writeScript), 0o644); err != nil {
		t.Fatal(err)
	}
	r.d.Settings.CLI = &implementor.CLISettings{Command: []string{buildFakeCLI(t), "--script", script, "--prompt-file", "{prompt_file}"}, Format: "qwen-stream-json", Timeout: time.Minute}
	r.d.Settings.FixRounds = 2
	r.d.Gates = []workspace.Gate{{Name: "divides-as-floats", Command: "grep -q 'float64(total) / float64' stats.go"}}
	if err := os.MkdirAll(record, 0o755); err != nil {
		t.Fatal(err)
	}
	r.d.Sandbox = sandboxWith(t, record, filepath.Dir(script)) // the fake CLI records what it saw, and counts its runs next to its script
	out, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Implementation
	if res.Status != runstate.ImplFinished || res.FixRounds != 1 || res.Summary != "Fixed the division." || res.Commit == "" || len(res.Gates) != 1 || res.GatesDiffHash != res.DiffHash {
		t.Fatalf("result %+v", res)
	}
	u := out.Usage[implementor.LabelCLI]
	if u.Calls != 2 || u.PromptTokens != 300 || u.CompletionTokens != 30 || u.CostUSD < 0.0029 {
		t.Errorf("usage %+v", u)
	}
	data, err := os.ReadFile(filepath.Join(record, "prompt-2.txt"))
	if err != nil || !strings.Contains(string(data), "fix round 1 of 2") || !strings.Contains(string(data), "divides-as-floats") {
		t.Errorf("the second run's prompt lacks the failing check (%v):\n%s", err, data)
	}
	if !strings.Contains(r.file(t, "stats.go"), "float64(total) / float64(len(xs))") {
		t.Error("the fix is not in the work tree")
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// The run's wall time bounds a coding CLI's run too: with 2 s of
// limits.max_wall_time left, a CLI that would work for a minute under a
// 20-minute implementor.cli.timeout is stopped when the run's time is up.
func TestACLIRunStopsWhenTheRunsWallTimeIsUp(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo})
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"runs": [{"sleep": "60s", "final": "never"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r.d.Settings.CLI = &implementor.CLISettings{Command: []string{buildFakeCLI(t), "--script", script, "--prompt-file", "{prompt_file}"}, Format: "qwen-stream-json", Timeout: 20 * time.Minute}
	r.d.Settings.MaxWallTime = time.Hour
	start := time.Now()
	out, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task, StartedAt: start.Add(-time.Hour + 2*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Implementation
	if res.Status != runstate.ImplExhausted || !strings.Contains(res.Summary, "limits.max_wall_time") {
		t.Errorf("result %+v", res)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the attempt took %s: the CLI ran past the run's wall time", took)
	}
}
