package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// scriptedConfig points every role at a scripted model server. Its limits
// block comes last so that a test may append more limits to it.
func scriptedConfig(url, mode string) string {
	return fmt.Sprintf(`ollama:
  host: %[1]s
openrouter:
  base_url: %[1]s/v1
  api_key: test-key
roles:
  primary: {model: %[2]s, edit_protocol: json}
  summarizer: {model: %[3]s}
  embedding: {model: %[4]s}
  supervisor: {model: %[5]s}
supervisors:
  mode: %[6]s
retry:
  initial_backoff: 10ms
limits:
  fix_rounds: 0
`, url, demo.PrimaryModel, demo.SummarizerModel, demo.EmbeddingModel, demo.SupervisorModel, mode)
}

func prepared(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := demo.PrepareRepo(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// lastJSON decodes the result line --json prints last.
func lastJSON(t *testing.T, stdout string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil || m["kind"] != "result" {
		t.Fatalf("no result line at the end of the output:\n%s", stdout)
	}
	return m
}

// branchLog lists the run branch's commits as subject, tree and task trailer.
func branchLog(t *testing.T, repo, branch string) []string {
	out := git(t, repo, "log", "--reverse", "--format=%s|%T|%(trailers:key=Lemmings-Task,valueonly,separator=%x2C)", "main.."+branch)
	return strings.Split(out, "\n")
}

func readEvents(t *testing.T, path string) []graph.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []graph.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev graph.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

func TestDemoCommandRunsTheWorkflowOnARealRepository(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	c := newCLI(t)
	r := c.run(t.TempDir(), "demo", "--dir", dir, "--json")
	if r.code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	res := lastJSON(t, r.stdout)
	if res["outcome"] != "done" || res["tasks_completed"].(float64) != 4 {
		t.Fatalf("result %v", res)
	}
	branch := res["branch"].(string)
	runID := res["run_id"].(string)

	// One commit per task, with run and task trailers; knowledge committed on the branch.
	log := branchLog(t, dir, branch)
	var tasks []string
	knowledgeCommits := 0
	for _, l := range log {
		parts := strings.Split(l, "|")
		if parts[2] != "" {
			tasks = append(tasks, parts[2])
		}
		if strings.HasPrefix(parts[0], "knowledge:") {
			knowledgeCommits++
		}
	}
	if !slices.Equal(tasks, []string{"t1", "t2", "t3", "t4"}) {
		t.Errorf("task commits %v, want t1..t4 once each\n%s", tasks, strings.Join(log, "\n"))
	}
	if knowledgeCommits == 0 {
		t.Errorf("no knowledge commit on the branch:\n%s", strings.Join(log, "\n"))
	}
	files := git(t, dir, "ls-tree", "-r", "--name-only", branch)
	for _, want := range []string{"topwords.go", "topwords_test.go", "docs/knowledge/conventions/doc-comments.md", "docs/knowledge/_index.md"} {
		if !strings.Contains(files, want) {
			t.Errorf("branch lacks %s:\n%s", want, files)
		}
	}
	if trailers := git(t, dir, "log", "-1", "--format=%(trailers)", branch+"~0"); !strings.Contains(git(t, dir, "log", "--format=%(trailers)", "main.."+branch), "Lemmings-Run: "+runID) {
		t.Errorf("commits lack the run trailer: %s", trailers)
	}
	// The user's checkout is untouched.
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("user checkout changed:\n%s", st)
	}

	runDir := filepath.Join(dir, ".lemmings", "runs", runID)
	report, err := os.ReadFile(filepath.Join(runDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Status:** done", "**Evidence:** 4 tasks committed; the gates (build, vet, test) passed at the branch's last commit", "| t2 | m2 | Add TopWords with a test | passed | 2 |", "| d1 | code_style | completed | t4 |",
		"conventions/doc-comments.md", "## Tokens and cost", "## Time per node", "```mermaid"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	board, err := os.ReadFile(filepath.Join(runDir, "board.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- [x] t1 Fix MeanWordLength integer division", "- [x] t4 Add a doc comment"} {
		if !strings.Contains(string(board), want) {
			t.Errorf("board lacks %q:\n%s", want, board)
		}
	}
	// The first attempt at t2 failed a real go test gate; QA fed it back.
	var sawFail, sawPass bool
	for _, ev := range readEvents(t, filepath.Join(runDir, "events.jsonl")) {
		if ev.Kind == graph.EventCustom && ev.Name == "qa" {
			var d map[string]any
			_ = json.Unmarshal(ev.Data, &d)
			if d["task"] == "t2" && d["passed"] == false && strings.Contains(fmt.Sprint(d["feedback"]), "TestTopWords") {
				sawFail = true
			}
			if d["task"] == "t2" && d["passed"] == true && sawFail {
				sawPass = true
			}
		}
	}
	if !sawFail || !sawPass {
		t.Errorf("events do not show t2 failing go test then passing (fail %v pass %v)", sawFail, sawPass)
	}
}

// reportForComparison drops what legitimately differs between two runs:
// ids, hashes, times and durations.
func reportForComparison(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if i := strings.Index(text, "## Time per node"); i >= 0 {
		if j := strings.Index(text[i:], "## Graph"); j >= 0 {
			text = text[:i] + text[i+j:]
		}
	}
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "- **Started:**") || strings.HasPrefix(line, "# lemmings report") || strings.HasPrefix(line, "- **Branch:**") {
			continue
		}
		if strings.HasPrefix(line, "| ") && strings.Count(line, "|") == 7 && strings.Contains(line, "$") {
			// Usage rows: keep who and how many calls. Token counts include gate
			// output, whose timings and Go test cache markers differ between runs;
			// model time is wall time.
			cells := strings.Split(line, "|")
			line = strings.Join(cells[:3], "|")
		}
		keep = append(keep, line)
	}
	text = strings.Join(keep, "\n")
	text = regexp.MustCompile(`\b[0-9a-f]{10}\b`).ReplaceAllString(text, "<sha>")
	text = regexp.MustCompile(`\b\d{8}-\d{6}-[0-9a-f]{6}\b`).ReplaceAllString(text, "<run>")
	return text
}

func TestKilledMidTaskThenResumedEqualsAnUninterruptedRun(t *testing.T) {
	sc := &demo.Script{ImplementorLatency: 120 * time.Millisecond}
	srv := demo.NewServer(sc)
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))

	straight := prepared(t)
	r := c.run(straight, "run", demo.Remit, "--json")
	if r.code != 0 {
		t.Fatalf("uninterrupted run exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	want := lastJSON(t, r.stdout)

	killed := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, killed, "run", demo.Remit, "--json")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once the implementor is in the middle of t2 (its first attempt has
	// written a file, so the work tree holds uncommitted work).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the run never reached t2's implementor")
		}
		matches, _ := filepath.Glob(filepath.Join(killed, ".lemmings", "runs", "*", "events.jsonl"))
		if len(matches) == 1 && midTask(t, matches[0], "t2") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	st := c.run(killed, "status", "--json")
	var status map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(st.stdout)), &status); err != nil || status["status"] != "crashed" ||
		status["stored_status"] != "running" || status["resumable"] != true {
		t.Fatalf("after the kill the run should be crashed (stored as running, cut off): %s %s", st.stdout, st.stderr)
	}
	r2 := c.run(killed, "resume", "--json")
	if r2.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", r2.code, r2.stdout, r2.stderr)
	}
	got := lastJSON(t, r2.stdout)

	wantLog := branchLog(t, straight, want["branch"].(string))
	gotLog := branchLog(t, killed, got["branch"].(string))
	if !slices.Equal(wantLog, gotLog) {
		t.Errorf("branches differ\nuninterrupted:\n%s\nkilled+resumed:\n%s", strings.Join(wantLog, "\n"), strings.Join(gotLog, "\n"))
	}
	seen := map[string]bool{}
	for _, l := range gotLog {
		task := strings.Split(l, "|")[2]
		if task != "" && seen[task] {
			t.Errorf("task %s committed twice", task)
		}
		seen[task] = true
	}
	wt := filepath.Join(killed, ".lemmings", "worktrees", got["run_id"].(string))
	if s := git(t, wt, "status", "--porcelain", "--untracked-files=all"); s != "" {
		t.Errorf("stray files in the work tree after resume:\n%s", s)
	}
	wantReport := reportForComparison(t, want["report"].(string))
	gotReport := reportForComparison(t, got["report"].(string))
	if wantReport != gotReport {
		t.Errorf("reports differ\n--- uninterrupted\n%s\n--- killed+resumed\n%s", wantReport, gotReport)
	}
}

// midTask reports whether the event log shows task's implementor at work:
// planned, implementor started, and at least one model call answered.
func midTask(t *testing.T, path, task string) bool {
	planned, started := false, false
	for _, ev := range readEvents(t, path) {
		switch {
		case ev.Kind == graph.EventCustom && ev.Name == "task_planned" && strings.Contains(string(ev.Data), `"task":"`+task+`"`):
			planned = true
		case planned && ev.Kind == graph.EventNodeStart && ev.Node == "implementor":
			started = true
		case started && ev.Kind == graph.EventCustom && ev.Name == "llm_call" && ev.Node == "implementor":
			return true
		}
	}
	return false
}

// A halt stops the run within a second, cutting off the node in flight (a
// model call of the Implementor here), as stopped and resumable; resume
// runs that node again and finishes.
func TestHaltStopsTheRunNowAndResumeFinishes(t *testing.T) {
	sc := &demo.Script{ImplementorLatency: 100 * time.Millisecond}
	var slow atomic.Bool // the implementor's next answer takes 30 s: a halt must not wait for it
	srv := demo.NewServer(sc, llmtest.Step{Name: "slow-implementor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: `{"action":"finish"}`, Latency: 30 * time.Second},
		Match: func(c llmtest.Call) bool {
			return slow.Load() && len(c.Messages) > 0 && c.Role() == prompts.Implementor
		}})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "run", demo.Remit)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		matches, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl"))
		if len(matches) == 1 && midTask(t, matches[0], "t1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("run never started t1")
		}
	}
	slow.Store(true)
	time.Sleep(300 * time.Millisecond) // the implementor's next call is in flight
	haltAt := time.Now()
	if h := c.run(repo, "halt"); h.code != 0 || !strings.Contains(h.stdout, "halt requested") {
		t.Fatalf("halt: %d %s %s", h.code, h.stdout, h.stderr)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != exitPaused {
		t.Fatalf("halted run exit: %v, want %d\n%s", err, exitPaused, out.String())
	}
	if took := time.Since(haltAt); took > 10*time.Second {
		t.Errorf("the halt took %s: it waited for the call in flight", took)
	}
	for _, want := range []string{": stopped — ", "reason: halt requested\n", "how to go on: lemmings resume "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}
	st := c.run(repo, "status", "--json")
	if !strings.Contains(st.stdout, `"status":"stopped"`) || !strings.Contains(st.stdout, `"stored_status":"halted"`) || !strings.Contains(st.stdout, `"reason":"halt requested"`) {
		t.Fatalf("status after halt: %s", st.stdout)
	}
	slow.Store(false)
	if r := c.run(repo, "resume"); r.code != 0 || !strings.Contains(r.stdout, ": done — ") {
		t.Fatalf("resume after halt: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestApproveMilestonesPausesAndRejectReplans(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	if r := c.run(repo, "run", demo.Remit, "--approve", "milestones", "--no-supervisors"); r.code != exitPaused || !strings.Contains(r.stdout, "--approve") {
		t.Fatalf("run --approve milestones: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The run remembers its approval mode: the re-plan pauses again.
	if r := c.run(repo, "resume", "--reject", "split it smaller", "--no-supervisors"); r.code != exitPaused ||
		!regexp.MustCompile(`task_planner\n\[[\d:]+\]   milestones rejected \(split it smaller\): back to the ScopeAgent to plan them again\n`).MatchString(r.stdout) {
		t.Fatalf("resume --reject: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := c.run(repo, "resume", "--approve", "--no-supervisors"); r.code != 0 {
		t.Fatalf("resume --approve: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The rejection went back to the ScopeAgent: two scope calls, the second with the reason.
	scopes := 0
	for _, call := range srv.ChatCalls() {
		if call.Role() == prompts.ScopeAgent {
			scopes++
			if scopes == 2 && !strings.Contains(call.Prompt, "split it smaller") {
				t.Errorf("re-scope prompt lacks the operator's reason")
			}
		}
	}
	if scopes != 2 {
		t.Errorf("scope calls = %d, want 2 (plan, re-plan after the rejection)", scopes)
	}
}

func TestUsageAndEnvironmentErrorsSayWhatToDo(t *testing.T) {
	c := newCLI(t)
	notGit := t.TempDir()
	if r := c.run(notGit, "run", "do it"); r.code != exitFailed || !strings.Contains(r.stderr, "git init") {
		t.Errorf("outside a repository: exit %d, stderr %q", r.code, r.stderr)
	}
	repo := prepared(t)
	if r := c.run(repo, "run"); r.code != exitUsage {
		t.Errorf("run without a remit: exit %d, want %d", r.code, exitUsage)
	}
	if err := os.WriteFile(filepath.Join(repo, "lemmings.yaml"), []byte("limits:\n  max_taks: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.run(repo, "run", "do it"); r.code != exitUsage || !strings.Contains(r.stderr, "lemmings.yaml:2") || !strings.Contains(r.stderr, "limits.max_taks") {
		t.Errorf("bad config: exit %d, stderr %q (want file:line and key)", r.code, r.stderr)
	}
	os.Remove(filepath.Join(repo, "lemmings.yaml"))
	c.config("ollama:\n  host: http://127.0.0.1:9\n")
	r := c.run(repo, "run", "do it")
	if r.code != exitFailed || !strings.Contains(r.stderr, "ollama serve") {
		t.Errorf("Ollama down: exit %d, stderr %q", r.code, r.stderr)
	}
	if b := git(t, repo, "branch", "--list", "lemmings/*"); b != "" {
		t.Errorf("a run that could not start left a branch: %s", b)
	}
}

func errorsAs(err error, target **exec.ExitError) bool {
	ee, ok := err.(*exec.ExitError)
	if ok {
		*target = ee
	}
	return ok
}

func TestInspectionCommandsOnAFinishedRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	c := newCLI(t)
	r := c.run(t.TempDir(), "demo", "--dir", dir, "--json")
	if r.code != 0 {
		t.Fatalf("demo: %d %s", r.code, r.stderr)
	}
	res := lastJSON(t, r.stdout)
	id := res["run_id"].(string)
	wt := filepath.Join(dir, ".lemmings", "worktrees", id)

	expect := func(args []string, code int, wants ...string) string {
		t.Helper()
		got := c.run(dir, args...)
		if got.code != code {
			t.Errorf("lemmings %v: exit %d, want %d\n%s\n%s", args, got.code, code, got.stdout, got.stderr)
		}
		for _, w := range wants {
			if !strings.Contains(got.stdout, w) {
				t.Errorf("lemmings %v: output lacks %q:\n%s", args, w, got.stdout)
			}
		}
		return got.stdout
	}
	expect([]string{"runs"}, 0, id, "done")
	expect([]string{"status", id}, 0, "run "+id+": done", "tasks: 4 done, 0 failed")
	expect([]string{"report"}, 0, "# lemmings report — run "+id)
	expect([]string{"directives", "--json"}, 0, `"fate":"completed"`, `"directive_id":"d1"`)
	expect([]string{"log", id}, 0, "task t1 Fix MeanWordLength integer division", "QA failed t2", "commit")
	logJSON := expect([]string{"log", id, "--json"}, 0, `"kind":"run_start"`)
	if strings.Count(logJSON, "\n") < 50 {
		t.Errorf("the JSON log is too short: %d lines", strings.Count(logJSON, "\n"))
	}
	expect([]string{"graph"}, 0, "graph TD", "task_planner", "run_supervisors")
	expect([]string{"config"}, 0, "# from: default")
	expect([]string{"status", "no-such-run"}, exitUsage)
	expect([]string{"-C", wt, "knowledge", "list"}, 0, "conventions/doc-comments.md", "established")
	expect([]string{"-C", wt, "knowledge", "show", "conventions/doc-comments.md"}, 0, "## Rules", "doc comment")
	expect([]string{"-C", wt, "knowledge", "lint"}, 0, "no problems")
	expect([]string{"-C", wt, "index", "--offline"}, 0, "embedder: offline")
	hits := expect([]string{"-C", wt, "search", "most frequent words", "--json", "--offline", "-k", "3"}, 0, `"path":"topwords.go"`)
	for _, line := range strings.Split(strings.TrimSpace(hits), "\n") {
		var h map[string]any
		if err := json.Unmarshal([]byte(line), &h); err != nil || h["start_line"] == nil || h["end_line"] == nil || h["score"] == nil {
			t.Errorf("search hit is not a JSON object with path, lines and score: %q", line)
		}
	}
}

func TestKnowledgeLintFailsWithFileAndLine(t *testing.T) {
	repo := prepared(t)
	c := newCLI(t)
	if r := c.run(repo, "knowledge", "init"); r.code != 0 || !strings.Contains(r.stdout, "created") {
		t.Fatalf("knowledge init: %d %s %s", r.code, r.stdout, r.stderr)
	}
	bad := filepath.Join(repo, "docs", "knowledge", "conventions", "bad.md")
	if err := os.WriteFile(bad, []byte("# Bad\n\n_Status: sure_\n\n## Rules\n\n1. x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := c.run(repo, "knowledge", "lint")
	if r.code != exitFailed || !strings.Contains(r.stdout, "conventions/bad.md:3") {
		t.Errorf("lint: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestIndexWithOllamaDownSaysSoOnceAndUsesTheOfflineEmbedder(t *testing.T) {
	dir := t.TempDir() // any directory, git or not
	if err := os.WriteFile(filepath.Join(dir, "cookies.go"), []byte("package web\n\n// ParseCookie reads a cookie header.\nfunc ParseCookie(s string) string { return s }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	r := c.run(dir, "index")
	if r.code != 0 || strings.Count(r.stderr, "using the offline embedder") != 1 || !strings.Contains(r.stdout, "embedder: offline") {
		t.Fatalf("index: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	s := c.run(dir, "search", "parse a cookie header", "--json")
	if s.code != 0 || !strings.Contains(s.stdout, `"path":"cookies.go"`) {
		t.Fatalf("search: exit %d\n%s\n%s", s.code, s.stdout, s.stderr)
	}
}

func TestIndexInARepositoryKeepsItsDataOutOfGitStatus(t *testing.T) {
	repo := prepared(t)
	c := newCLI(t)
	if r := c.run(repo, "index", "--offline"); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	if r := c.run(filepath.Join(repo, "cmd"), "index", "--offline", "."); r.code != 0 {
		t.Fatalf("index of a subdirectory: %d %s", r.code, r.stderr)
	}
	if st := git(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("the index shows in git status:\n%s", st)
	}
}

// str is a decoded JSON value as text ("" for none).
func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}
