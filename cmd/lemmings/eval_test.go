package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/eval"
	"github.com/lemmings-dev/lemmings/eval/evaltest"
)

// evalLine is the closing JSON line of lemmings eval --json.
func evalLine(t *testing.T, stdout string) map[string]any {
	t.Helper()
	for _, l := range jsonLines(t, stdout) {
		if l["kind"] == "eval" {
			return l
		}
	}
	t.Fatalf("no eval line in:\n%s", stdout)
	return nil
}

// suiteScript is a scripted team that solves the built-in suite with its
// reference solutions.
func suiteScript(t *testing.T) *evaltest.Script {
	t.Helper()
	dirs, err := eval.WriteBuiltin(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exs, skips := eval.Discover(dirs, eval.DefaultLanguages())
	if len(skips) > 0 {
		t.Fatalf("skips %+v", skips)
	}
	sc := &evaltest.Script{Solutions: map[string]map[string]string{}}
	for _, ex := range exs {
		if sc.Solutions[ex.ID], err = ex.ReferenceSolution(); err != nil {
			t.Fatal(err)
		}
	}
	return sc
}

func TestEvalBuiltinSuiteWithAScriptedModelScoresEverything(t *testing.T) {
	srv := evaltest.NewServer(suiteScript(t))
	defer srv.Close()
	c := newCLI(t)
	c.config(fmt.Sprintf(`ollama: {host: %s}
roles:
  primary: {model: %s, edit_protocol: json}
  summarizer: {model: %s}
supervisors: {enabled: false}
rag: {enabled: false}
concurrency: {local: 3}
limits: {max_retries: 1, fix_rounds: 0}
retry: {initial_backoff: 10ms}
`, srv.URL(), demo.PrimaryModel, demo.SummarizerModel))
	dir := t.TempDir()
	r := c.run(dir, "--json", "eval", "--builtin")
	if r.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	sum := evalLine(t, r.stdout)
	if sum["scored"] != 24.0 || sum["pass1_rate"] != 100.0 || sum["pass2_rate"] != 100.0 || sum["model"] != demo.PrimaryModel || sum["tokens"].(float64) <= 0 {
		t.Errorf("summary %v", sum)
	}
	out := filepath.Join(dir, "lemmings-eval", "qwen2.5-coder-14b")
	report, err := os.ReadFile(filepath.Join(out, eval.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**pass@1 100.0% · pass@2 100.0%** of 24 scored exercises", "| go | 15 | 15 | 15 (100.0%)", "| python | 9 | 9 | 9 (100.0%)", "| go/sum-of-multiples | ✓ | ✓ | 1 |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// Every exercise was a real lemmings run against the scripted server.
	var exercises int
	for _, l := range jsonLines(t, r.stdout) {
		if l["kind"] == "exercise" {
			exercises++
			runs, _ := l["runs"].([]any)
			if len(runs) != 1 || runs[0].(map[string]any)["outcome"] != "done" {
				t.Errorf("%v: runs %v", l["id"], runs)
			}
		}
	}
	if exercises != 24 || len(srv.Calls()) < 24*4 {
		t.Errorf("%d exercise lines, %d model calls", exercises, len(srv.Calls()))
	}

	// compare: the same eval against the oracle's changes nothing.
	r = c.run(dir, "eval", "--builtin", "--oracle")
	if r.code != exitOK {
		t.Fatalf("oracle: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The oracle makes one attempt: its chart says pass@1 and gives one number per bar.
	chart, err := os.ReadFile(filepath.Join(dir, "lemmings-eval", "oracle", eval.ChartFile))
	if err != nil || !strings.Contains(string(chart), "pass rate (%): pass@1<") || strings.Contains(string(chart), "% / ") || !strings.Contains(string(chart), ">100%<") {
		t.Errorf("the pass@1 chart (%v):\n%s", err, chart)
	}
	r = c.run(dir, "eval", "compare", out, filepath.Join(dir, "lemmings-eval", "oracle", eval.ResultsFile))
	if r.code != exitOK || !strings.Contains(r.stdout, "0 fixed, 0 broken, 0 better, 0 worse, 24 the same") {
		t.Errorf("compare: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestEvalKilledGoesOnWhereItStopped(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, dir, "--json", "eval", "--builtin", "--oracle", "--filter", "^go/")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	finished := 0
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["kind"] == "exercise" {
			finished++
			if finished == 2 {
				_ = cmd.Process.Kill() // no chance to clean up, as after a crash
				break
			}
		}
	}
	_ = cmd.Wait()
	if finished != 2 {
		t.Fatalf("%d exercises finished before the kill", finished)
	}

	r := c.run(dir, "--json", "eval", "--builtin", "--oracle", "--filter", "^go/")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var plan map[string]any
	ran := 0
	for _, l := range jsonLines(t, r.stdout) {
		switch l["kind"] {
		case "plan":
			plan = l
		case "exercise":
			ran++
		}
	}
	resumed := int(jsonNum(plan["resumed"]))
	if plan["exercises"] != 15.0 || resumed < 2 || ran != 15-resumed {
		t.Errorf("plan %v, %d exercises run after the resume", plan, ran)
	}
	if sum := evalLine(t, r.stdout); sum["pass1"] != 15.0 || sum["exercises"] != 15.0 {
		t.Errorf("summary %v", sum)
	}
}

func TestEvalUsageErrors(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	notResults := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notResults, []byte("{\"a\":\n  1,,}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval"}, "give the folders of exercises"},
		{[]string{"eval", "--builtin", "--attempts", "3"}, "--attempts takes 1 or 2"},
		{[]string{"eval", "--builtin", "--filter", "("}, "--filter"},
		{[]string{"eval", "--builtin", "--test-command", "go"}, "LANGUAGE=COMMAND"},
		{[]string{"eval", "--builtin", "--implementor", "cli:nope"}, `--implementor: implementor "cli:nope": unknown value "nope"`},
		{[]string{"eval", "--builtin", "--implementor", "aider"}, "accepted: lemmings, cli, cli:<preset>"},
		{[]string{"eval", "compare", notResults, notResults}, "x.json: line 2"},
	} {
		r := c.run(dir, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// A model that is not there stops the eval before any exercise, with the fix.
func TestEvalWithAMissingModelStopsBeforeTheFirstExercise(t *testing.T) {
	srv := evaltest.NewServer(&evaltest.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(fmt.Sprintf("ollama: {host: %s}\nsupervisors: {enabled: false}\nrag: {enabled: false}\n", srv.URL()))
	dir := t.TempDir()
	r := c.run(dir, "eval", "--builtin", "--model", "nosuch:1b", "--out", "out")
	if r.code != exitFailed || !strings.Contains(r.stderr, "ollama pull nosuch:1b") || strings.Contains(r.stdout, "pass@1") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", eval.WorkDir)); !os.IsNotExist(err) {
		t.Errorf("an exercise was started: %v", err)
	}
}
