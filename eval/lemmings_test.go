package eval

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/eval/evaltest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// scripted discovers the built-in suite and a scripted team that solves it.
func scripted(t *testing.T) ([]string, *evaltest.Script, []Exercise) {
	t.Helper()
	dirs := builtin(t)
	exs, skips := Discover(dirs, DefaultLanguages())
	if len(skips) != 0 {
		t.Fatalf("skips %+v", skips)
	}
	sc := &evaltest.Script{Solutions: map[string]map[string]string{}, FirstTry: map[string]map[string]string{}}
	for _, ex := range exs {
		sol, err := ex.ReferenceSolution()
		if err != nil {
			t.Fatal(err)
		}
		sc.Solutions[ex.ID] = sol
	}
	return dirs, sc, exs
}

func TestLemmingsSolvesTheSuiteWithAScriptedModel(t *testing.T) {
	t.Parallel()
	dirs, sc, _ := scripted(t)
	srv := evaltest.NewServer(sc)
	defer srv.Close()
	out := t.TempDir()
	solver := &Lemmings{Config: evaltest.Config(srv.URL())}
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: solver, Out: out, Label: "scripted", Model: "scripted",
		Filter: regexp.MustCompile(`^(go/(hello-world|acronym)|python/isogram)$`), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 3 {
		t.Fatalf("%d results", len(f.Results))
	}
	for _, r := range f.Results {
		if r.Status != StatusPassed || !r.Pass1 || r.Attempts != 1 || len(r.Runs) != 1 {
			t.Errorf("%s: %s after %d attempts: %s\n%s", r.ID, r.Status, r.Attempts, r.Reason, r.TestOutput)
			continue
		}
		run := r.Runs[0]
		if run.RunID == "" || run.Outcome != "done" || run.TasksCompleted != 1 || r.Tokens() == 0 || r.WallSeconds <= 0 {
			t.Errorf("%s: run %+v, %d tokens, %.2fs", r.ID, run, r.Tokens(), r.WallSeconds)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, ReportFile))
	if !strings.Contains(string(report), "**pass@1 100.0% · pass@2 100.0%** of 3 scored exercises") {
		t.Errorf("report:\n%s", report)
	}
}

// A first attempt that fails the tests is followed by a second one that is
// shown its failing code and their output: pass@2 but not pass@1.
func TestSecondAttemptSeesTheFailingTests(t *testing.T) {
	t.Parallel()
	dirs, sc, _ := scripted(t)
	sc.FirstTry["go/leap"] = map[string]string{"leap.go": "package leap\n\n// IsLeapYear reports whether year is a leap year.\nfunc IsLeapYear(year int) bool {\n\treturn year%4 == 0\n}\n"}
	srv := evaltest.NewServer(sc)
	defer srv.Close()
	cfg := evaltest.Config(srv.URL())
	cfg.Limits.MaxConsecutiveFailures = 1
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: &Lemmings{Config: cfg}, Out: t.TempDir(), Model: "scripted",
		Filter: regexp.MustCompile(`^go/leap$`)})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Results[0]
	if r.Status != StatusPassed || r.Pass1 || !r.Pass2 || r.PassedAttempt != 2 || r.Attempts != 2 || len(r.Runs) != 2 {
		t.Fatalf("%+v", r)
	}
	if r.Runs[0].Outcome == "done" || r.Runs[1].Outcome != "done" {
		t.Errorf("runs %+v", r.Runs)
	}
	// The second run's remit carried the failing test output.
	var remit2 string
	for _, c := range srv.Calls() {
		if strings.Contains(c.Prompt, "# Test failures of the previous attempt") {
			remit2 = c.Prompt
			break
		}
	}
	// It is the output of the first attempt's own code, which the second
	// starts from (as Aider's second try keeps its files), not the stub's.
	if !strings.Contains(remit2, "IsLeapYear(2100) = true, want false") || strings.Contains(remit2, "IsLeapYear(1996) = false, want true") {
		t.Errorf("the second remit does not carry the first attempt's failures:\n%s", remit2)
	}
	if !strings.Contains(remit2, "return year%4 == 0") {
		t.Errorf("the second attempt does not start from the first attempt's code:\n%s", remit2)
	}
}

// A server that fails mid-eval is not the model failing: the exercise is an
// error (retried on resume), not a failure.
func TestServerFailureIsAnErrorNotAFailure(t *testing.T) {
	t.Parallel()
	dirs, sc, _ := scripted(t)
	srv := evaltest.NewServer(sc, llmtest.Step{Name: "unauthorized", API: llmtest.Ollama, Times: -1, Contains: prompts.Marker(prompts.Implementor),
		Reply: llmtest.Reply{Status: 401, Body: `{"error":"unauthorized"}`}})
	defer srv.Close()
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: &Lemmings{Config: evaltest.Config(srv.URL())}, Out: t.TempDir(), Model: "scripted",
		Filter: regexp.MustCompile(`^go/hello-world$`)})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Results[0]
	if r.Status != StatusError || r.Scored() || !strings.Contains(r.Reason, "auth") || f.Totals.Errors != 1 || f.Totals.Scored != 0 {
		t.Errorf("%+v", r)
	}
}

func TestAnImplementorLemmingsLacksStopsTheEval(t *testing.T) {
	t.Parallel()
	dirs, _, _ := scripted(t)
	_, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: &Lemmings{Config: evaltest.Config("http://127.0.0.1:1"), Implementor: "cli:nothing"},
		Out: t.TempDir(), Implementor: "cli:nothing", Filter: regexp.MustCompile(`^go/leap$`)})
	if err == nil || !strings.Contains(err.Error(), `implementor "cli:nothing"`) {
		t.Errorf("err %v", err)
	}
}
