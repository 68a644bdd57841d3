package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// End to end against a real Ollama server (make ollama) with tiny
// random-weight models: the built binary, run as a user runs it, finds the
// server through OLLAMA_HOST and the models through --model and
// --embed-model. Every reply is noise, so what is tested is that lemmings
// copes: clear errors, bounded work, clean ends. They skip when the server
// binary is absent (docs/testing-real-ollama.md).

// demoRepo writes the demo's sample repository (one commit) into a new folder.
func demoRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := demo.PrepareRepo(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// jsonLines decodes every line of out that is a JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			lines = append(lines, m)
		}
	}
	return lines
}

// loadedModels lists the models the server has loaded (/api/ps).
func loadedModels(t *testing.T, s *realollama.Server) []string {
	t.Helper()
	ps, err := s.Client().ListRunning(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ps.Models {
		names = append(names, m.Name)
	}
	return names
}

func TestRealOllamaDoctor(t *testing.T) {
	s := realollama.Start(t, realollama.WithoutModels())
	dir := demoRepo(t)
	c := newCLI(t, "OLLAMA_HOST="+s.Host)
	doctor := func() (int, map[string]map[string]any, string) {
		r := c.run(dir, "--json", "doctor", "--no-supervisors", "--model", s.Models.Chat, "--embed-model", s.Models.Embed)
		checks := map[string]map[string]any{}
		for _, l := range jsonLines(t, r.stdout) {
			name, _ := l["check"].(string)
			checks[name] = l
		}
		return r.code, checks, r.stdout + r.stderr
	}

	code, checks, out := doctor()
	primary := checks["model primary"]
	if code != exitFailed || primary["status"] != "fail" || !strings.Contains(out, "ollama pull "+s.Models.Chat) {
		t.Errorf("model missing: exit %d, primary %v\n%s", code, primary, out)
	}
	// A missing embedding model is no failure: retrieval uses the offline embedder, and no
	// download is asked for (offline it could not work).
	if emb := checks["model embedding"]; emb["status"] != "ok" || !strings.Contains(fmt.Sprint(emb["detail"]), s.Models.Embed+" cannot be asked") ||
		!strings.Contains(fmt.Sprint(emb["detail"]), "offline embedder") || emb["fix"] != nil {
		t.Errorf("embedding model missing: %v", emb)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.CreateModels(ctx); err != nil {
		t.Fatal(err)
	}
	code, checks, out = doctor()
	// The details name the model and the server OLLAMA_HOST points at.
	for role, model := range map[string]string{"primary": s.Models.Chat, "embedding": s.Models.Embed} {
		ch := checks["model "+role]
		if ch["status"] != "ok" || ch["detail"] != model+" on "+s.URL {
			t.Errorf("model present: %s: %v", role, ch)
		}
	}
	for name, ch := range checks {
		if ch["status"] == "fail" {
			t.Errorf("%s failed: %v", name, ch)
		}
	}
	if code != exitOK {
		t.Errorf("model present: exit %d\n%s", code, out)
	}
	// One short call measures the primary's speed on the real server.
	if sp := checks["speed"]; (sp["status"] != "ok" && sp["status"] != "warn") || !strings.Contains(fmt.Sprint(sp["detail"]), s.Models.Chat+": ") ||
		!strings.Contains(fmt.Sprint(sp["detail"]), " tokens/s (") {
		t.Errorf("speed: %v", sp)
	} else {
		t.Logf("speed: %s: %v", sp["status"], sp["detail"])
	}
}

func TestRealOllamaRunWithANoiseModel(t *testing.T) {
	s := realollama.Start(t)
	dir := demoRepo(t)
	c := newCLI(t, "OLLAMA_HOST="+s.Host)
	// Tight limits; prompt budgets a 4096-token model can hold; a seed so
	// the noise is the same on every run. Two actions: by its third the
	// implementor's conversation outgrows the 4096-token window, and the
	// workflow (nodes) then stops the run instead of failing the task.
	c.config(`roles:
  primary:
    options: {seed: 7}
  summarizer:
    model: ` + s.Models.Chat + `
    options: {seed: 7}
limits:
  max_actions: 2
  max_retries: 1
  max_tasks: 3
  max_consecutive_failures: 2
  token_budgets: {scope_agent: 2000, task_planner: 2000, implementor: 1500, qa: 2000, assessor: 2000, summarizer: 1000}
`)
	start := time.Now()
	r := c.run(dir, "--json", "run", "--no-supervisors", "--model", s.Models.Chat, "--embed-model", s.Models.Embed, "add a Multiply function with a test")
	elapsed := time.Since(start)
	t.Logf("lemmings run: exit %d after %v", r.code, elapsed.Round(time.Millisecond))

	if r.code != exitFailed {
		t.Errorf("exit %d, want %d (failed)\nstdout:\n%s\nstderr:\n%s", r.code, exitFailed, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "not available") {
		t.Errorf("--embed-model was not used:\n%s", r.stderr)
	}
	if elapsed > 2*time.Minute {
		t.Errorf("the run took %v", elapsed)
	}
	var result map[string]any
	for _, l := range jsonLines(t, r.stdout) {
		if l["kind"] == "result" {
			result = l
		}
	}
	if result == nil {
		t.Fatalf("no result line:\n%s\n%s", r.stdout, r.stderr)
	}
	if result["outcome"] != "failed" || result["error"] != nil || jsonNum(result["tasks_failed"]) < 1 || jsonNum(result["tasks_completed"]) != 0 {
		t.Errorf("result %v", result)
	}
	// A limit ends it, or the noise's claim that the work is done is
	// overruled for want of evidence (the quick attempts failed, then its
	// plan declared the milestones done with no task).
	if reason, _ := result["stop_reason"].(string); !strings.Contains(reason, "max_consecutive_failures") && !strings.Contains(reason, "max_tasks") &&
		!strings.Contains(reason, "declared done without any work") {
		t.Errorf("stopped for %q, neither by a limit nor for want of evidence", reason)
	}

	report, err := os.ReadFile(fmt.Sprint(result["report"]))
	if err != nil {
		t.Fatal(err)
	}
	failures := strings.TrimSpace(llmtest.Section(string(report), "Failures"))
	var reasons []string
	for _, line := range strings.Split(failures, "\n") {
		if _, reason, ok := strings.Cut(line, "): "); ok && strings.HasPrefix(line, "- **t") && strings.TrimSpace(reason) != "" {
			reasons = append(reasons, reason)
		}
	}
	if len(reasons) == 0 || len(reasons) != int(jsonNum(result["tasks_failed"])) {
		t.Errorf("the report's failures give no reasons:\n%s", failures)
	}

	id := fmt.Sprint(result["run_id"])
	wt := filepath.Join(dir, ".lemmings", "worktrees", id)
	out, err := exec.Command("git", "-C", wt, "status", "--porcelain").CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("work tree %s not clean: %v\n%s", wt, err, out)
	}
	out, err = exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("the user's checkout changed: %v\n%s", err, out)
	}

	// The models the flags named are the ones the server at OLLAMA_HOST ran.
	if loaded := loadedModels(t, s); !slices.Contains(loaded, s.Models.Chat+":latest") || !slices.Contains(loaded, s.Models.Embed+":latest") {
		t.Errorf("loaded models %v", loaded)
	}
	prompts, err := os.ReadFile(filepath.Join(dir, ".lemmings", "runs", id, "prompts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, p := range jsonLines(t, string(prompts)) {
		if p["model"] != s.Models.Chat || p["provider"] != "ollama" {
			t.Errorf("a call went to %v %v", p["provider"], p["model"])
		}
		if p["error"] == nil {
			answered++
		}
	}
	if n := strings.Count(s.Log(), `POST     "/api/chat"`); answered == 0 || n < answered {
		t.Errorf("%d calls answered as lemmings logged them, %d chat requests in the server log", answered, n)
	}
}

func TestRealOllamaRunWithAMissingModel(t *testing.T) {
	s := realollama.Start(t)
	dir := demoRepo(t)
	c := newCLI(t, "OLLAMA_HOST="+s.Host)
	r := c.run(dir, "run", "--offline", "--model", "qwen2.5-coder:14b", "anything")
	if r.code != exitFailed || !strings.Contains(r.stderr, "ollama pull qwen2.5-coder:14b") || strings.Contains(r.stderr, "panic") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".lemmings", "worktrees")); len(entries) != 0 {
		t.Errorf("a run that could not start left %d work trees", len(entries))
	}
}

func TestRealOllamaIndexAndSearch(t *testing.T) {
	s := realollama.Start(t)
	dir := demoRepo(t)
	c := newCLI(t, "OLLAMA_HOST="+s.Host)

	r := c.run(dir, "index", "--no-supervisors", "--embed-model", s.Models.Embed)
	if r.code != exitOK || !strings.Contains(r.stdout, "embedder: ollama:"+s.Models.Embed) || r.stderr != "" {
		t.Fatalf("index: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = c.run(dir, "--json", "--no-supervisors", "search", "--embed-model", s.Models.Embed, "-k", "3", "count the words of a text")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("search: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	hits := jsonLines(t, r.stdout)
	if len(hits) == 0 || len(hits) > 3 || len(hits) != strings.Count(strings.TrimSpace(r.stdout), "\n")+1 {
		t.Fatalf("hits:\n%s", r.stdout)
	}
	for _, h := range hits {
		path, _ := h["path"].(string)
		start, end, score := jsonNum(h["start_line"]), jsonNum(h["end_line"]), h["score"]
		if _, err := os.Stat(filepath.Join(dir, path)); err != nil || start < 1 || end < start || score == nil || jsonNum(score) <= 0 {
			t.Errorf("hit %v", h)
		}
	}
	if loaded := loadedModels(t, s); !slices.Equal(loaded, []string{s.Models.Embed + ":latest"}) {
		t.Errorf("loaded models %v", loaded)
	}

	// --embed-model is for one invocation: without it the configured model
	// (absent here) is asked for, and lemmings says it falls back.
	r = c.run(dir, "index", "--no-supervisors")
	if r.code != exitOK || !strings.Contains(r.stderr, "nomic-embed-text not available") || !strings.Contains(r.stdout, "embedder: offline") {
		t.Errorf("index without the flag: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

func jsonNum(v any) float64 {
	f, _ := v.(float64)
	return f
}
