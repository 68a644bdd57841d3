package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// End to end with trained models (docs/testing-real-models.md): the built binary runs
// `lemmings run --offline --model smollm2` (and gemma3-270m) on micro-remits in small real Go
// and Python repositories. A 135M model is weak; what is asserted is what must hold whatever
// it does: the run ends by itself within its limits, never panics, writes its report, leaves
// the user's checkout untouched, every commit on the run branch passes the gates, and every
// failed task is rolled back with a reason. Whether the remit was carried out is recorded
// (t.Log and the summary line), not asserted.
//
// `make test` runs TestRealTrainedRun (one run per model); `make test-models` sets
// LEMMINGS_TRAINED_FULL=1 and TestRealTrainedRunAll runs every remit, language, model and seed.

// EnvTrainedFull turns on the full matrix of trained-model runs.
const EnvTrainedFull = "LEMMINGS_TRAINED_FULL"

// microRemit is a repository and a remit so small a good model does it in one task.
type microRemit struct {
	name  string
	lang  string            // "go" or "python"
	files map[string]string // the repository's one commit
	remit string
	// done says whether the run branch's tree (checked out in dir) carries out the remit.
	done func(dir string) bool
}

const goMod = "module calc\n\ngo 1.22\n"

const pyGate = `gates:
  - {name: test, command: "python3 -m unittest -q", timeout: 2m}
`

func fileHas(dir, name, want string) bool {
	data, err := os.ReadFile(filepath.Join(dir, name))
	return err == nil && strings.Contains(string(data), want)
}

func passes(dir, name string, args ...string) bool {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd.Run() == nil
}

var microRemits = []microRemit{
	{name: "create-file", lang: "go",
		files: map[string]string{"go.mod": goMod, "calc.go": "package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int { return a + b }\n"},
		remit: "Create a new file named NOTES.md whose content is exactly this one line: lemmings was here",
		done:  func(d string) bool { return fileHas(d, "NOTES.md", "lemmings was here") }},
	{name: "change-string", lang: "go",
		files: map[string]string{"go.mod": goMod, "greet.go": "package calc\n\n// Greeting is shown to users.\nfunc Greeting() string { return \"Hello, World\" }\n"},
		remit: `In greet.go, change the string "Hello, World" to "Hello, Lemmings".`,
		done: func(d string) bool {
			return fileHas(d, "greet.go", `"Hello, Lemmings"`) && !fileHas(d, "greet.go", `"Hello, World"`)
		}},
	{name: "fix-operator", lang: "go",
		files: map[string]string{"go.mod": goMod,
			"calc.go":      "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n",
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"},
		remit: "TestAdd fails: Add(2, 3) = -1, want 5. Fix the bug in Add in calc.go.",
		done:  func(d string) bool { return passes(d, "go", "test", "./...") }},
	{name: "add-function", lang: "go",
		files: map[string]string{"go.mod": goMod,
			"calc.go":      "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n",
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif got := Double(4); got != 8 {\n\t\tt.Errorf(\"Double(4) = %d, want 8\", got)\n\t}\n}\n"},
		remit: "TestDouble calls Double, which does not exist. Add to calc.go a one-line function: func Double(n int) int { return n * 2 }",
		done:  func(d string) bool { return passes(d, "go", "test", "./...") }},

	{name: "create-file", lang: "python",
		files: map[string]string{"calc.py": "def add(a, b):\n    return a + b\n"},
		remit: "Create a new file named NOTES.md whose content is exactly this one line: lemmings was here",
		done:  func(d string) bool { return fileHas(d, "NOTES.md", "lemmings was here") }},
	{name: "change-string", lang: "python",
		files: map[string]string{"greet.py": "def greeting():\n    return \"Hello, World\"\n"},
		remit: `In greet.py, change the string "Hello, World" to "Hello, Lemmings".`,
		done: func(d string) bool {
			return fileHas(d, "greet.py", `"Hello, Lemmings"`) && !fileHas(d, "greet.py", `"Hello, World"`)
		}},
	{name: "fix-operator", lang: "python",
		files: map[string]string{"calc.py": "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a - b\n",
			"test_calc.py": "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"},
		remit: "test_add fails: add(2, 3) returns -1, want 5. Fix the bug in add in calc.py.",
		done:  func(d string) bool { return passes(d, "python3", "-m", "unittest", "-q") }},
	{name: "add-function", lang: "python",
		files: map[string]string{"calc.py": "def add(a, b):\n    return a + b\n",
			"test_calc.py": "import unittest\n\nfrom calc import double\n\n\nclass TestDouble(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(4), 8)\n"},
		remit: "test_double imports double from calc.py, which does not exist. Add to calc.py a one-line function: def double(n): return n * 2",
		done:  func(d string) bool { return passes(d, "python3", "-m", "unittest", "-q") }},
}

// trainedRunConfig keeps a run small: one or two short tasks, few actions, short replies,
// prompt budgets a 2-core machine reads in seconds, and a wall-time limit. The planner checks
// max_wall_time before each task, not during one: the calls' timeouts bound the rest
// (trainedRunBound).
func trainedRunConfig(model string, seed int, lang string) string {
	cfg := fmt.Sprintf(`roles:
  primary:
    max_tokens: 320
    timeout: 2m
    options: {seed: %[2]d}
  summarizer:
    model: %[1]s
    max_tokens: 200
    timeout: 2m
    options: {seed: %[2]d}
limits:
  max_tasks: 2
  max_actions: 3
  max_retries: 0
  max_consecutive_failures: 2
  max_wall_time: 4m
  polish_tasks: 0
  token_budgets: {scope_agent: 1500, task_planner: 1500, implementor: 2500, qa: 1500, assessor: 1200, summarizer: 800}
`, model, seed)
	if lang == "python" {
		cfg += pyGate
	}
	return cfg
}

// trainedRunBound is how long a run may take before the test calls it stuck: the wall-time
// limit, then at most a task's calls (scope or planner, three actions, QA, summary), each
// within its 2m timeout. On an idle 2-core machine a run takes a minute or two.
const trainedRunBound = 4*time.Minute + 7*2*time.Minute

// trainedRepo writes the remit's repository (one commit) into a new folder.
func trainedRepo(t *testing.T, m microRemit) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range m.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
	return dir
}

// trainedOutcome is what one run came to, for the record.
type trainedOutcome struct {
	Model, Remit, Lang  string
	Seed                int
	Exit                int
	Outcome, StopReason string
	Completed, Failed   int
	Done                bool // the remit is carried out on the run branch
	Wall                time.Duration
	Calls, PromptTokens int
	CompletionTokens    int
	KnownFault          string // the error of a run that ended without a report
}

func (o trainedOutcome) String() string {
	return fmt.Sprintf("%s %s/%s seed %d: exit %d, outcome %q, %d done %d failed, remit carried out %v, %v, %d calls, %d prompt + %d completion tokens, stop %q",
		o.Model, o.Lang, o.Remit, o.Seed, o.Exit, o.Outcome, o.Completed, o.Failed, o.Done, o.Wall.Round(time.Second),
		o.Calls, o.PromptTokens, o.CompletionTokens, o.StopReason) + map[bool]string{true: ", error: " + o.KnownFault, false: ""}[o.KnownFault != ""]
}

// runTrained runs one micro-remit end to end and asserts what must hold.
func runTrained(t *testing.T, s *realollama.Server, model string, m microRemit, seed int) trainedOutcome {
	t.Helper()
	dir := trainedRepo(t, m)
	head := git(t, dir, "rev-parse", "HEAD")
	c := newCLI(t, "OLLAMA_HOST="+s.Host)
	c.config(trainedRunConfig(model, seed, m.lang))

	ctx, cancel := context.WithTimeout(context.Background(), trainedRunBound)
	defer cancel()
	cmd := c.command(ctx, dir, "--json", "run", "--offline", "--model", model, m.remit)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	o := trainedOutcome{Model: model, Remit: m.name, Lang: m.lang, Seed: seed, Wall: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("the run did not end within its limits: killed after %v\n%s\n%s", o.Wall, stdout.String(), stderr.String())
	case errors.As(err, &ee):
		o.Exit = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "goroutine ") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if o.Exit != exitOK && o.Exit != exitFailed && o.Exit != 3 {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", o.Exit, stdout.String(), stderr.String())
	}

	// The user's checkout: same commit, same branch, no change to a tracked file.
	if got := git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("the user's HEAD moved: %s → %s", head, got)
	}
	if got := git(t, dir, "branch", "--show-current"); got != "main" {
		t.Errorf("the user's checkout is on %q", got)
	}
	if st := git(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("the user's checkout changed:\n%s", st)
	}

	var res map[string]any
	for _, l := range jsonLines(t, stdout.String()) {
		if l["kind"] == "result" {
			res = l
		}
	}
	if res == nil {
		t.Fatalf("no result line:\n%s\n%s", stdout.String(), stderr.String())
	}
	o.Outcome, _ = res["outcome"].(string)
	o.StopReason, _ = res["stop_reason"].(string)
	o.Completed, o.Failed = int(jsonNum(res["tasks_completed"])), int(jsonNum(res["tasks_failed"]))
	errText, _ := res["error"].(string)
	id, _ := res["run_id"].(string)
	branch, _ := res["branch"].(string)

	// The report, with a reason for every failed task.
	reportPath, _ := res["report"].(string)
	report, rerr := os.ReadFile(reportPath)
	switch {
	case rerr != nil:
		// Every run that ends, a system fault included, leaves its report.
		o.KnownFault = errText
		t.Errorf("the run ended without a report (%v); error: %s", rerr, errText)
	default:
		failures := strings.TrimSpace(llmtest.Section(string(report), "Failures"))
		reasons := 0
		for _, line := range strings.Split(failures, "\n") {
			if _, reason, ok := strings.Cut(line, "): "); ok && strings.HasPrefix(line, "- **t") && strings.TrimSpace(reason) != "" {
				reasons++
			}
		}
		if reasons != o.Failed {
			t.Errorf("%d failed tasks, %d reasons in the report:\n%s", o.Failed, reasons, failures)
		}
	}

	// The run's work tree holds nothing half-made: a failed task was rolled back.
	if id != "" {
		wt := filepath.Join(dir, ".lemmings", "worktrees", id)
		if _, err := os.Stat(wt); err == nil {
			if st := git(t, wt, "status", "--porcelain"); st != "" {
				t.Errorf("the run's work tree %s is not clean:\n%s", wt, st)
			}
		}
	}

	// Every finished commit on the run branch passes the gates, checked out
	// on its own. A run stopped at its wall time mid-task may end in a
	// work-in-progress commit ("lemmings wip:"), never offered for merge
	// (resume goes on from it).
	if branch != "" {
		commits := strings.Fields(git(t, dir, "rev-list", "--reverse", head+".."+branch))
		for _, sha := range commits {
			if strings.HasPrefix(git(t, dir, "log", "-1", "--format=%s", sha), wipPrefix) {
				continue
			}
			if msg := gatesFail(t, dir, sha, m.lang); msg != "" {
				t.Errorf("commit %s on %s fails the gates: %s", sha[:8], branch, msg)
			}
		}
		if len(commits) > 0 {
			o.Done = checkedOut(t, dir, branch, m.done)
		}
	}

	// What the run cost, from its prompt log.
	if id != "" {
		if data, err := os.ReadFile(filepath.Join(dir, ".lemmings", "runs", id, "prompts.jsonl")); err == nil {
			for _, p := range jsonLines(t, string(data)) {
				o.Calls++
				usage, _ := p["usage"].(map[string]any) // the prompt log nests the counts under "usage"
				o.PromptTokens += int(jsonNum(usage["prompt_tokens"]))
				o.CompletionTokens += int(jsonNum(usage["completion_tokens"]))
			}
		}
	}
	t.Log(o)
	return o
}

// gatesFail checks out commit sha in a scratch work tree and runs the language's gates;
// it returns what failed, or "".
func gatesFail(t *testing.T, repo, sha, lang string) string {
	t.Helper()
	var msg string
	checkedOut(t, repo, sha, func(dir string) bool {
		gates := [][]string{{"go", "build", "./..."}, {"go", "vet", "./..."}, {"go", "test", "-count=1", "./..."}}
		if lang == "python" {
			gates = [][]string{{"python3", "-m", "unittest", "-q"}}
		}
		for _, g := range gates {
			cmd := exec.Command(g[0], g[1:]...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				msg = fmt.Sprintf("%s: %v\n%s", strings.Join(g, " "), err, out)
				return false
			}
		}
		return true
	})
	return msg
}

// checkedOut runs f in a scratch detached work tree of rev and removes it after.
func checkedOut(t *testing.T, repo, rev string, f func(dir string) bool) bool {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "check")
	git(t, repo, "worktree", "add", "-q", "--detach", dir, rev)
	defer git(t, repo, "worktree", "remove", "--force", dir)
	return f(dir)
}

// trainedServer starts one server with the trained models for a test.
func trainedServer(t *testing.T) *realollama.Server {
	return realollama.Start(t, realollama.WithTrainedModels())
}

// TestRealTrainedRun is the short subset `make test` runs: one Go run with SmolLM2.
func TestRealTrainedRun(t *testing.T) {
	s := trainedServer(t)
	for _, tc := range []struct {
		model string
		remit microRemit
	}{
		{s.Trained.Chat, microRemits[2]}, // go fix-operator
		// Gemma 3 270M (a base model, minutes per grammar-constrained call on 2 cores) runs in
		// TestRealTrainedRunAll, under make test-models: two runs would double make test's
		// trained-model time.
	} {
		t.Run(tc.model+"/"+tc.remit.lang+"/"+tc.remit.name, func(t *testing.T) {
			runTrained(t, s, tc.model, tc.remit, 1)
		})
	}
}

// TestRealTrainedRunAll is the full matrix (make test-models): every micro-remit in both
// languages, both models, several seeds. It prints the success counts per remit.
func TestRealTrainedRunAll(t *testing.T) {
	if os.Getenv(EnvTrainedFull) != "1" {
		t.Skipf("the full matrix of trained-model runs runs under `make test-models` (%s=1)", EnvTrainedFull)
	}
	seeds := 3
	if n, err := strconv.Atoi(os.Getenv("LEMMINGS_TRAINED_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	s := trainedServer(t)
	var mu sync.Mutex
	var all []trainedOutcome
	for _, model := range []string{s.Trained.Chat, s.Trained.Gemma} {
		for _, m := range microRemits {
			for seed := 1; seed <= seeds; seed++ {
				t.Run(fmt.Sprintf("%s/%s/%s/seed%d", model, m.lang, m.name, seed), func(t *testing.T) {
					o := runTrained(t, s, model, m, seed)
					mu.Lock()
					all = append(all, o)
					mu.Unlock()
				})
			}
		}
	}
	type key struct{ model, lang, remit string }
	done, runs := map[key]int{}, map[key]int{}
	var order []key
	for _, o := range all {
		k := key{o.Model, o.Lang, o.Remit}
		if runs[k] == 0 {
			order = append(order, k)
		}
		runs[k]++
		if o.Done {
			done[k]++
		}
	}
	for _, k := range order {
		t.Logf("SUCCESS %s %s/%s: %d of %d seeds", k.model, k.lang, k.remit, done[k], runs[k])
	}
}
