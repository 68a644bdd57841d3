package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// Against the real server at temperature 0 the random model never ends its
// plan: it writes until the reply limit (done_reason "length") or repeats a
// token until the server stops it without done:true. Either way the reply is
// a bad reply, never repaired into a plan and never a transport fault: the
// ScopeAgent is asked once more, then the run ends "could not plan", exit 1,
// with a report, and events.jsonl records each re-ask. --full: the remit is
// one task, which would skip the ScopeAgent's call.
func TestRealOllamaRunOfAModelThatNeverEndsItsReply(t *testing.T) {
	s := realollama.Start(t)
	dir := demoRepo(t)
	c := newCLI(t, "OLLAMA_HOST="+s.Host)
	c.config(fmt.Sprintf(`roles:
  primary:
    temperature: 0
  summarizer:
    model: %s
limits:
  token_budgets: {scope_agent: 2000, task_planner: 2000, implementor: 1500, qa: 2000, assessor: 2000, summarizer: 1000}
`, s.Models.Chat))
	r := c.run(dir, "--json", "run", "--offline", "--full", "--model", s.Models.Chat, "add a Multiply function with a test")
	res := lastJSON(t, r.stdout)
	runDir := filepath.Join(dir, ".lemmings", "runs", fmt.Sprint(res["run_id"]))
	events, err := os.ReadFile(filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cut, runaway := strings.Count(string(events), `"reply_cut_off"`), strings.Count(string(events), `"reply_runaway"`)
	t.Logf("exit %d; re-asks: %d cut off, %d runaway; stop: %v", r.code, cut, runaway, res["stop_reason"])
	if cut+runaway == 0 {
		t.Skip("this build's model ended its reply: the case did not reproduce")
	}
	if r.code != exitFailed || res["error"] != nil {
		t.Fatalf("exit %d, error %v: a reply that never ends must fail the node in the workflow's terms\n%s", r.code, res["error"], r.stderr)
	}
	if reason, _ := res["stop_reason"].(string); !strings.Contains(reason, "could not produce a plan") {
		t.Errorf("stop reason %q", reason)
	}
	report, err := os.ReadFile(fmt.Sprint(res["report"]))
	if err != nil || !strings.Contains(string(report), "could not produce a plan") || !strings.Contains(string(report), "**How to go on:**") {
		t.Errorf("report %v:\n%s", err, report)
	}
	prompts, _ := os.ReadFile(filepath.Join(runDir, "prompts.jsonl"))
	if n := strings.Count(string(prompts), "\n"); n != 2 {
		t.Errorf("%d scope calls in the prompt log, want the call and one re-ask (no transport retries)", n)
	}
}
