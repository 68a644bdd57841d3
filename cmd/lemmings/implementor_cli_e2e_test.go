package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/eval"
	"github.com/lemmings-dev/lemmings/eval/evaltest"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/buildtest"
	"github.com/lemmings-dev/lemmings/internal/proctest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// These tests drive `lemmings run` with implementor.backend: cli and a fake
// coding CLI (internal/fakecli): a real process that prints a Qwen Code-like
// stream-json and edits files as its script says. Planner, QA and assessor
// are the demo's scripted models.

// fakeCLIBin builds internal/fakecli once per test process.
func fakeCLIBin(t *testing.T) string {
	t.Helper()
	return buildtest.Binary(t, "github.com/lemmings-dev/lemmings/internal/fakecli")
}

const (
	meanBug = "\treturn float64(total / len(words))"
	meanFix = "\treturn float64(total) / float64(len(words))"
)

// fixMean is a CLI run that fixes the demo's failing test.
func fixMean() map[string]any {
	return map[string]any{"replace": []map[string]string{{"path": "textstats.go", "old": meanBug, "new": meanFix}},
		"input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.0123, "final": "MeanWordLength converts before dividing."}
}

// cliCase is one scripted run of lemmings with the fake CLI.
type cliCase struct {
	t      *testing.T
	repo   string
	script string
	record string
	plan   string
	srv    *llmtest.Server
	c      *cli
	// config is the user file without its sandbox section; writable are
	// the test's folders the fake CLI writes in.
	config   string
	writable []string
}

// allowWrite lets the fake CLI write in dir too (a pid file, say).
func (k *cliCase) allowWrite(dir string) {
	k.writable = append(k.writable, dir)
	k.writeConfig()
}

func (k *cliCase) writeConfig() {
	var list []string
	for _, w := range k.writable {
		list = append(list, strconv.Quote(w))
	}
	k.c.config(k.config + "sandbox:\n  writable: [" + strings.Join(list, ", ") + "]\n")
}

// newCLICase prepares the demo repository, a one-task plan, the fake CLI's
// script and the configuration; extra is appended to the config's limits
// block, cli to implementor.cli.
func newCLICase(t *testing.T, runs []map[string]any, limits, cliExtra string, env ...string) *cliCase {
	t.Helper()
	k := &cliCase{t: t, repo: prepared(t)}
	tmp := t.TempDir()
	k.script, k.record, k.plan = filepath.Join(tmp, "script.json"), filepath.Join(tmp, "record"), filepath.Join(tmp, "plan.yaml")
	data, _ := json.Marshal(map[string]any{"runs": runs, "record": k.record})
	writeFile(t, k.script, string(data))
	writeFile(t, k.plan, `milestones:
  - goal: The test suite passes.
    tasks:
      - title: Fix MeanWordLength integer division
        instructions: MeanWordLength in textstats.go divides two ints before converting to float64, so TestMeanWordLength fails. Convert before dividing.
        acceptance_criteria: ["MeanWordLength returns the exact mean", "go test ./... passes"]
        target_files: [textstats.go]
`)
	k.srv = demo.NewServer(&demo.Script{})
	t.Cleanup(k.srv.Close)
	k.c = newCLI(t, env...)
	k.config = scriptedConfig(k.srv.URL(), "blocking") + limits + fmt.Sprintf(`implementor:
  backend: cli
  cli:
    command: [%q, --script, %q, --prompt-file, "{prompt_file}"]
    format: qwen-stream-json
%s`, fakeCLIBin(t), k.script, cliExtra)
	// The fake CLI keeps its run counter next to its script and records
	// what it saw there.
	k.allowWrite(tmp)
	return k
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (k *cliCase) run() (result, map[string]any) {
	k.t.Helper()
	r := k.c.run(k.repo, "run", "--plan", k.plan, "--no-supervisors", "--json")
	if !strings.Contains(r.stdout, `"kind":"result"`) {
		k.t.Fatalf("exit %d and no result:\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return r, lastJSON(k.t, r.stdout)
}

// recorded is what the fake CLI's nth run saw ("prompt" or "env").
func (k *cliCase) recorded(kind string, n int) string {
	k.t.Helper()
	data, err := os.ReadFile(filepath.Join(k.record, fmt.Sprintf("%s-%d.txt", kind, n)))
	if err != nil {
		k.t.Fatalf("the fake CLI did not run a %s time: %v", ordinalWord(n), err)
	}
	return string(data)
}

func ordinalWord(n int) string { return strconv.Itoa(n) + "th" }

// events returns the run's custom events of one name, decoded.
func (k *cliCase) events(res map[string]any, name string) []map[string]any {
	k.t.Helper()
	var out []map[string]any
	path := filepath.Join(k.repo, ".lemmings", "runs", res["run_id"].(string), "events.jsonl")
	for _, ev := range readEvents(k.t, path) {
		if ev.Kind == graph.EventCustom && ev.Name == name {
			var d map[string]any
			_ = json.Unmarshal(ev.Data, &d)
			out = append(out, d)
		}
	}
	return out
}

func (k *cliCase) report(res map[string]any) string {
	k.t.Helper()
	data, err := os.ReadFile(res["report"].(string))
	if err != nil {
		k.t.Fatal(err)
	}
	return string(data)
}

func TestACodingCLIImplementsATaskThatLemmingsGatesReviewsAndCommits(t *testing.T) {
	k := newCLICase(t, []map[string]any{fixMean()}, "", `    env: {FAKE_KEY: "${MY_CLI_KEY}", FAKE_MODE: plain}
`, "OPENROUTER_API_KEY=sk-or-v1-secret-of-lemmings", "MY_CLI_KEY=cli-key-123", "ANTHROPIC_API_KEY=sk-ant-not-for-the-cli")
	r, res := k.run()
	if r.code != 0 || res["outcome"] != "done" || res["tasks_completed"] != float64(1) {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	// One commit for the task, made by lemmings, with the CLI's change.
	log := branchLog(t, k.repo, res["branch"].(string))
	if len(log) != 1 || !strings.HasSuffix(log[0], "|t1") {
		t.Errorf("branch log %q, want one commit for t1", log)
	}
	if got := git(t, k.repo, "show", res["branch"].(string)+":textstats.go"); !strings.Contains(got, meanFix) {
		t.Errorf("the committed textstats.go lacks the fix:\n%s", got)
	}
	// The prompt: the task, its criteria, the checks lemmings will run.
	prompt := k.recorded("prompt", 1)
	for _, want := range []string{"Fix MeanWordLength integer division", "Acceptance: MeanWordLength returns the exact mean", "go test", "Do not commit"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the CLI's prompt lacks %q:\n%s", want, prompt)
		}
	}
	// Its environment: what was configured, none of lemmings' keys.
	env := k.recorded("env", 1)
	for _, want := range []string{"FAKE_KEY=cli-key-123\n", "FAKE_MODE=plain\n", "PATH="} {
		if !strings.Contains(env, want) {
			t.Errorf("the CLI's environment lacks %q", want)
		}
	}
	for _, leak := range []string{"OPENROUTER_API_KEY", "sk-or-v1-secret", "ANTHROPIC_API_KEY", "MY_CLI_KEY", "XDG_CONFIG_HOME"} {
		if strings.Contains(env, leak) {
			t.Errorf("the CLI's environment has %s:\n%s", leak, env)
		}
	}
	// Tokens, cost and tool calls in the event log, the report and the progress.
	runs := k.events(res, "cli_run")
	if len(runs) != 1 || runs[0]["tool_calls"] != float64(1) || runs[0]["input_tokens"] != float64(1200) ||
		runs[0]["output_tokens"] != float64(80) || runs[0]["cost_usd"] != 0.0123 || runs[0]["exit_code"] != float64(0) {
		t.Errorf("cli_run events %v", runs)
	}
	if tools := k.events(res, "cli_event"); len(tools) != 1 || tools[0]["tool"] != "edit" {
		t.Errorf("cli_event events %v", tools)
	}
	if rep := k.report(res); !strings.Contains(rep, "| implementor_cli | 1 | 1200 | 80 | $0.0123 |") {
		t.Errorf("the report's usage lacks the CLI's row:\n%s", rep)
	}
	var sawCost bool
	for _, p := range k.events(res, "progress") {
		sawCost = sawCost || p["cost_usd"] == 0.0123
	}
	if !sawCost {
		t.Error("no progress event counts the CLI's cost")
	}
	if st := git(t, k.repo, "status", "--porcelain"); st != "" {
		t.Errorf("the user's checkout changed:\n%s", st)
	}
	// The progress lines (replayed by lemmings log) show the CLI's run.
	if l := k.c.run(k.repo, "log", res["run_id"].(string)); !strings.Contains(l.stdout, "cli fakecli done: 1 tool calls, 1200/80 tokens, $0.0123") {
		t.Errorf("lemmings log lacks the CLI's line:\n%s", l.stdout)
	}
}

func TestAFailingGateGoesBackToAFreshCLIRunThenTheTaskIsRolledBack(t *testing.T) {
	noop := map[string]any{"write": map[string]string{"NOTES.md": "looked at it\n"}, "input_tokens": 10, "output_tokens": 5}
	k := newCLICase(t, []map[string]any{noop, noop}, "  max_retries: 0\n  max_consecutive_failures: 1\n", "", "LEMMINGS_LIMITS__FIX_ROUNDS=1")
	r, res := k.run()
	if r.code != exitFailed || res["tasks_failed"] != float64(1) {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	// The second run was a fresh one shown the failing test.
	second := k.recorded("prompt", 2)
	if !strings.Contains(second, "fix round 1 of 1") || !strings.Contains(second, "TestMeanWordLength") {
		t.Errorf("the fix round's prompt lacks the failing check:\n%s", second)
	}
	// Rolled back: the branch has no commit, the failure says why.
	if log := git(t, k.repo, "log", "--format=%s", "main.."+res["branch"].(string)); log != "" {
		t.Errorf("the failed task left commits:\n%s", log)
	}
	failed := k.events(res, "task_failed")
	if len(failed) != 1 || !strings.Contains(fmt.Sprint(failed[0]["reason"]), "test") {
		t.Errorf("task_failed %v", failed)
	}
}

func TestACLIThatWritesOutsideTheWorkTreeFailsTheAttemptAndTheNextOneIsTold(t *testing.T) {
	escape := fixMean()
	escape["write"] = map[string]string{"../escaped.txt": "next to the work tree\n", "../../../outside.txt": "in the user's checkout\n"}
	// Unconfined (no sandbox on this machine, or sandbox.mode: off), the
	// writes land and lemmings detects them.
	k := newCLICase(t, []map[string]any{escape, fixMean()}, "  max_retries: 1\n", "", "LEMMINGS_SANDBOX__MODE=off")
	r, res := k.run()
	if r.code != 0 || res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	outside := k.events(res, "cli_outside")
	if len(outside) != 1 {
		t.Fatalf("cli_outside events %v", outside)
	}
	changes := fmt.Sprint(outside[0]["changes"])
	for _, want := range []string{"new next to the work tree: escaped.txt", "outside.txt"} {
		if !strings.Contains(changes, want) {
			t.Errorf("the changes outside lack %q: %s", want, changes)
		}
	}
	var statuses []string
	for _, ev := range k.events(res, "implementation") {
		statuses = append(statuses, fmt.Sprint(ev["status"]))
	}
	if strings.Join(statuses, ",") != "error,finished" {
		t.Errorf("attempts ended %v, want error then finished", statuses)
	}
	if second := k.recorded("prompt", 2); !strings.Contains(second, "outside the work tree") {
		t.Errorf("the next attempt is not told why the last one failed:\n%s", second)
	}
}

func TestACLIThatOverrunsItsTimeoutIsKilledWithTheProcessesItStarted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.cmdline")
	hang := map[string]any{"child": pidFile, "sleep": "60s"}
	k := newCLICase(t, []map[string]any{hang}, "  max_retries: 0\n  max_consecutive_failures: 1\n", "    timeout: 2s\n")
	k.allowWrite(filepath.Dir(pidFile))
	start := time.Now()
	r, res := k.run()
	if r.code != exitFailed || res["tasks_failed"] != float64(1) {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	if took := time.Since(start); took > 50*time.Second {
		t.Errorf("the run took %s: the CLI was not cut at its 2s timeout", took)
	}
	runs := k.events(res, "cli_run")
	if len(runs) != 1 || runs[0]["timed_out"] != true {
		t.Errorf("cli_run %v", runs)
	}
	impl := k.events(res, "implementation")
	if len(impl) != 1 || impl[0]["status"] != "exhausted" {
		t.Errorf("implementation %v", impl)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	// Found by its command line: inside the sandbox the CLI has a pid
	// namespace of its own, so the pid it would see is not the host's.
	child := strings.TrimSpace(string(data))
	if !proctest.GoneWithin(child, 0) {
		t.Errorf("the CLI's child %q outlived the timeout", child)
	}
}

// In the sandbox the CLI cannot write outside the work tree: its writes
// fail as tool errors, nothing lands, and the attempt goes on.
func TestACLIsWritesOutsideTheWorkTreeAreDeniedInTheSandbox(t *testing.T) {
	requireSandbox(t)
	escape := fixMean()
	escape["write"] = map[string]string{"../escaped.txt": "next to the work tree\n", "../../../outside.txt": "in the user's checkout\n"}
	k := newCLICase(t, []map[string]any{escape}, "", "")
	r, res := k.run()
	if r.code != 0 || res["outcome"] != "done" || res["tasks_completed"] != float64(1) {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	wt := filepath.Join(k.repo, ".lemmings", "worktrees", res["run_id"].(string))
	for _, p := range []string{filepath.Join(filepath.Dir(wt), "escaped.txt"), filepath.Join(k.repo, "outside.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the CLI wrote %s", p)
		}
	}
	if ev := k.events(res, "cli_outside"); len(ev) != 0 {
		t.Errorf("cli_outside %v: nothing should have landed outside", ev)
	}
}

// A CLI that commits anyway: in the sandbox the repository's git directory
// is read-only, so its commit fails and lemmings makes the one commit.
func TestACLIsOwnCommitFailsInTheSandbox(t *testing.T) {
	requireSandbox(t)
	commit := fixMean()
	commit["commit"] = "fake: fix the mean"
	k := newCLICase(t, []map[string]any{commit, fixMean()}, "  max_retries: 1\n", "")
	r, res := k.run()
	if r.code != 0 || res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	runs := k.events(res, "cli_run")
	if len(runs) == 0 || runs[0]["exit_code"] == float64(0) || !strings.Contains(fmt.Sprint(runs[0]["stderr"]), "git") {
		t.Errorf("the CLI's commit did not fail: cli_run %v", runs)
	}
	if subjects := git(t, k.repo, "log", "--format=%s", "main.."+res["branch"].(string)); strings.Contains(subjects, "fake:") {
		t.Errorf("the CLI's commit is on the branch:\n%s", subjects)
	}
}

// Unconfined, a CLI's own commits are dropped and its changes kept.
func TestTheCLIsOwnCommitsAreDroppedAndItsChangesKept(t *testing.T) {
	commit := fixMean()
	commit["commit"] = "fake: fix the mean"
	k := newCLICase(t, []map[string]any{commit}, "", "", "LEMMINGS_LIMITS__FIX_ROUNDS=1", "LEMMINGS_SANDBOX__MODE=off")
	r, res := k.run()
	if r.code != 0 || res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	subjects := git(t, k.repo, "log", "--format=%s", "main.."+res["branch"].(string))
	if strings.Contains(subjects, "fake:") || strings.Count(subjects, "\n") != 0 {
		t.Errorf("the branch keeps the CLI's commit or more than one:\n%s", subjects)
	}
	if got := git(t, k.repo, "show", res["branch"].(string)+":textstats.go"); !strings.Contains(got, meanFix) {
		t.Errorf("the CLI's change was lost:\n%s", got)
	}
	if ev := k.events(res, "cli_commits_dropped"); len(ev) != 1 || ev[0]["commits"] != float64(1) {
		t.Errorf("cli_commits_dropped %v", ev)
	}
	// The gates ran inside the attempt on the CLI's change; QA took their
	// results for the same tree.
	if ev := k.events(res, "implementor_gate"); len(ev) == 0 || ev[0]["from"] != "cli" {
		t.Errorf("implementor_gate %v", ev)
	}
	if ev := k.events(res, "gates_reused"); len(ev) != 1 {
		t.Errorf("QA ran the gates again (gates_reused %v)", ev)
	}
}

func TestAMissingCLIFailsTheRunBeforeAnyModelCallAndDoctorSaysHowToInstall(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	repo := prepared(t)
	c := newCLI(t, "PATH=/usr/bin:/bin") // no qwen there
	c.config(scriptedConfig(srv.URL(), "blocking") + "implementor:\n  backend: cli\n  cli:\n    preset: qwen\n")
	r := expectExit(t, c, repo, exitFailed, []string{"run", "fix the mean"}, "coding CLI qwen", "not on PATH", "npm install -g @qwen-code/qwen-code")
	if calls := srv.ChatCalls(); len(calls) != 0 {
		t.Errorf("%d model calls before failing", len(calls))
	}
	if _, err := os.Stat(filepath.Join(repo, ".lemmings", "worktrees")); err == nil {
		t.Error("a worktree was made for a run that cannot start")
	}
	_ = r
	d := c.run(repo, "doctor")
	if d.code != exitFailed || !strings.Contains(d.stdout, "FAIL  coding CLI") || !strings.Contains(d.stdout, "fix: npm install -g @qwen-code/qwen-code") {
		t.Errorf("doctor exit %d:\n%s", d.code, d.stdout)
	}
	// A preset this build lacks, or a key reference that is not set, is the
	// configuration's fault: exit 2.
	c.config(scriptedConfig(srv.URL(), "blocking") + "implementor:\n  backend: cli\n  cli:\n    command: [fakecli, '{prompt_file}']\n    env: {K: '${NOT_SET_ANYWHERE}'}\n")
	expectExit(t, c, repo, exitUsage, []string{"run", "fix the mean"}, "implementor.cli.env.K: ${NOT_SET_ANYWHERE} is not set")
}

// A preset found on PATH whose key variables are all unset: doctor warns
// with the login advice (it cannot see a login kept in the CLI's files).
func TestDoctorWarnsWhenAPresetSeesNoneOfItsKeys(t *testing.T) {
	bin := t.TempDir()
	if err := os.Symlink(fakeCLIBin(t), filepath.Join(bin, "qwen")); err != nil {
		t.Fatal(err)
	}
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=")
	c.config(scriptedConfig(srv.URL(), "blocking") + "implementor:\n  backend: cli\n  cli: {preset: qwen}\n")
	d := c.run(prepared(t), "doctor")
	for _, want := range []string{"ok    coding CLI", "qwen at " + filepath.Join(bin, "qwen"), "warn  coding CLI login", "sees none of OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL", "fix: set OPENAI_API_KEY"} {
		if !strings.Contains(d.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, d.stdout)
		}
	}
}

func TestDoctorShowsAWorkingCLI(t *testing.T) {
	k := newCLICase(t, []map[string]any{fixMean()}, "", "")
	d := k.c.run(k.repo, "doctor")
	if !strings.Contains(d.stdout, "ok    coding CLI") || !strings.Contains(d.stdout, "fakecli at "+fakeCLIBin(t)+" (qwen-stream-json)") {
		t.Errorf("doctor:\n%s", d.stdout)
	}
}

func TestEvalWithACodingCLIImplementorScoresAndRecordsIt(t *testing.T) {
	sc := suiteScript(t)
	srv := evaltest.NewServer(sc)
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "script.json")
	data, _ := json.Marshal(map[string]any{"runs": []map[string]any{{"input_tokens": 300, "output_tokens": 40, "cost_usd": 0.002}}, "solutions": sc.Solutions})
	writeFile(t, script, string(data))
	c := newCLI(t)
	c.config(fmt.Sprintf(`ollama: {host: %s}
roles:
  primary: {model: %s, edit_protocol: json}
  summarizer: {model: %s}
supervisors: {enabled: false}
rag: {enabled: false}
concurrency: {local: 2}
limits: {max_retries: 1, fix_rounds: 0}
retry: {initial_backoff: 10ms}
implementor:
  cli:
    command: [%q, --script, %q]
    format: qwen-stream-json
    model: fake-model
`, srv.URL(), demo.PrimaryModel, demo.SummarizerModel, fakeCLIBin(t), script))
	dir := t.TempDir()
	r := c.run(dir, "--json", "eval", "--builtin", "--implementor", "cli", "--filter", `^(go/(leap|hello-world|two-fer)|python/leap)$`)
	if r.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	sum := evalLine(t, r.stdout)
	if sum["scored"] != 4.0 || sum["pass1_rate"] != 100.0 || sum["model"] != "fake-model" || sum["cost_usd"].(float64) < 0.008 {
		report, _ := os.ReadFile(filepath.Join(dir, "lemmings-eval", "cli-fake-model", "report.md"))
		t.Errorf("summary %v\n%s", sum, report)
	}
	f, err := eval.Load(filepath.Join(dir, "lemmings-eval", "cli-fake-model", eval.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if f.Implementor != "cli" || f.Label != "cli:fake-model" {
		t.Errorf("results record implementor %q, label %q", f.Implementor, f.Label)
	}
	// No implementor model call: the CLI did the implementing.
	for _, call := range srv.ChatCalls() {
		if len(call.Messages) > 0 && call.Role() == prompts.Implementor {
			t.Fatal("the primary model was asked to implement")
		}
	}
	// An unknown preset is a usage error naming the accepted ones.
	expectExit(t, c, dir, exitUsage, []string{"eval", "--builtin", "--implementor", "cli:qwne"}, `did you mean "qwen"`)
}

// The CLI's reported cost counts against implementor.cli.budget_usd: once
// spent, the task in flight goes on to QA and commit, and no new task starts.
func TestTheCLIBudgetStopsTheRunAfterTheTaskThatSpentIt(t *testing.T) {
	k := newCLICase(t, []map[string]any{fixMean(), fixMean()}, "", "    budget_usd: 0.01\n")
	writeFile(t, k.plan, `milestones:
  - goal: The test suite passes and is documented.
    tasks:
      - title: Fix MeanWordLength integer division
        instructions: MeanWordLength in textstats.go divides two ints before converting to float64. Convert before dividing.
        acceptance_criteria: ["MeanWordLength returns the exact mean"]
        target_files: [textstats.go]
      - title: Add a doc comment to MeanWordLength
        instructions: Add a one-line doc comment above MeanWordLength in textstats.go.
        acceptance_criteria: ["MeanWordLength has a doc comment"]
        target_files: [textstats.go]
`)
	r, res := k.run()
	if r.code != exitPaused || res["status"] != "stopped" || res["resumable"] != false || res["tasks_completed"] != float64(1) ||
		!strings.Contains(fmt.Sprint(res["reason"]), "implementor.cli.budget_usd") || !strings.Contains(fmt.Sprint(res["next"]), "git merge ") {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	if runs := k.events(res, "cli_run"); len(runs) != 1 {
		t.Errorf("%d CLI runs after the budget was spent by the first", len(runs))
	}
	if rep := k.report(res); !strings.Contains(rep, "$0.0123") || !strings.Contains(rep, "implementor.cli.budget_usd") {
		t.Errorf("the report lacks the CLI's spend or the stop:\n%s", rep)
	}
}
