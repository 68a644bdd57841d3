package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// roleStep answers every call of one role (by its system prompt) with rep.
func roleStep(role string, rep llmtest.Reply) llmtest.Step {
	return llmtest.Step{Name: role + "-fault", API: llmtest.Ollama, Times: -1, Reply: rep, Match: func(c llmtest.Call) bool {
		return len(c.Messages) > 0 && c.Role() == role
	}}
}

// runaway is what the real server sends when it stops a model that repeats
// one token: content, then the stream ends without done:true.
var runaway = llmtest.Reply{Content: strings.Repeat(" of", 224), NoDone: true}

func callsOf(srv *llmtest.Server, role string) int {
	n := 0
	for _, c := range srv.ChatCalls() {
		if len(c.Messages) > 0 && c.Role() == role {
			n++
		}
	}
	return n
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A scope agent whose model runs away is a bad reply, not a broken network:
// one re-ask with varied sampling and no backoff retries, then the run ends
// "could not plan" with a report.
func TestRunawayScopeAgentEndsTheRunCouldNotPlanWithAReport(t *testing.T) {
	srv := demo.NewServer(&demo.Script{}, roleStep("scope_agent", runaway))
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	r := c.run(repo, "run", demo.Remit, "--json", "--no-supervisors")
	if r.code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", r.code, exitFailed, r.stdout, r.stderr)
	}
	res := lastJSON(t, r.stdout)
	if reason, _ := res["stop_reason"].(string); !strings.Contains(reason, "could not produce a plan") || res["error"] != nil {
		t.Fatalf("result %v", res)
	}
	if n := callsOf(srv, "scope_agent"); n != 2 {
		t.Errorf("scope agent asked %d times, want 2 (the call and one varied re-ask, no transport retries)", n)
	}
	var first, second map[string]any
	for _, call := range srv.ChatCalls() {
		if call.Role() == prompts.ScopeAgent {
			if first == nil {
				first = call.Options
			} else {
				second = call.Options
			}
		}
	}
	if second["seed"] == first["seed"] || second["repeat_penalty"] == nil {
		t.Errorf("the re-ask did not vary the sampling: %v then %v", first, second)
	}
	report := readFile(t, res["report"].(string))
	for _, want := range []string{"**Status:** failed", "**Reason:** the ScopeAgent could not produce a plan", "**How to go on:** nothing was committed"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	evs := readFile(t, filepath.Join(filepath.Dir(res["report"].(string)), "events.jsonl"))
	if !strings.Contains(evs, `"reply_runaway"`) {
		t.Errorf("events.jsonl does not record the runaway reply")
	}
}

// An implementor whose model runs away ends its attempts (the task fails in
// the workflow's terms); a QA reviewer whose model runs away fails the
// review. Either way the run goes on to its report.
func TestRunawayImplementorAndQAFailInTheWorkflowsTerms(t *testing.T) {
	for _, role := range []string{"implementor", "qa"} {
		t.Run(role, func(t *testing.T) {
			srv := demo.NewServer(&demo.Script{}, roleStep(role, runaway))
			defer srv.Close()
			c := newCLI(t)
			c.config(scriptedConfig(srv.URL(), "blocking") + "  max_retries: 0\n  max_consecutive_failures: 1\n")
			repo := prepared(t)
			r := c.run(repo, "run", demo.Remit, "--json", "--no-supervisors")
			if r.code != exitFailed {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.code, exitFailed, r.stdout, r.stderr)
			}
			res := lastJSON(t, r.stdout)
			if res["error"] != nil || res["tasks_failed"].(float64) < 1 {
				t.Fatalf("result %v", res)
			}
			report := readFile(t, res["report"].(string))
			want := map[string]string{"implementor": "were not valid actions", "qa": "review could not be completed"}[role]
			if !strings.Contains(report, want) {
				t.Errorf("report's failures lack %q:\n%s", want, report)
			}
		})
	}
}

// A write_file cut off at the length limit never reaches the disk: the
// implementor is asked again with "cut off at N tokens", the cut reply is
// recorded in events.jsonl, and no file holds the half-written function.
func TestAWriteFileCutAtTheLengthLimitIsNeverWritten(t *testing.T) {
	cut := llmtest.Reply{Content: `{"thought":"write it","action":"write_file","path":"cut.go","content":"package textstats\n\nfunc A() int {\n\treturn 1`, DoneReason: "length", CompletionTokens: 40}
	srv := demo.NewServer(&demo.Script{}, roleStep("implementor", cut))
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking") + "  max_retries: 0\n  max_consecutive_failures: 1\n")
	repo := prepared(t)
	r := c.run(repo, "run", demo.Remit, "--json", "--no-supervisors")
	res := lastJSON(t, r.stdout)
	runID := res["run_id"].(string)
	wt := filepath.Join(repo, ".lemmings", "worktrees", runID)
	if _, err := os.Stat(filepath.Join(wt, "cut.go")); err == nil {
		t.Fatal("the cut-off write_file reached the work tree")
	}
	if out := git(t, repo, "log", "--all", "--format=%H", "--", "cut.go"); out != "" {
		t.Fatalf("a commit holds the cut-off file: %s", out)
	}
	var reasked bool
	for _, call := range srv.ChatCalls() {
		if strings.Contains(call.LastUser(), "cut off at 40 tokens") && strings.Contains(call.LastUser(), "smaller change") {
			reasked = true
		}
	}
	if !reasked {
		t.Error("the implementor was never told its reply was cut off")
	}
	evs := readFile(t, filepath.Join(repo, ".lemmings", "runs", runID, "events.jsonl"))
	if !strings.Contains(evs, `"reply_cut_off"`) || !strings.Contains(evs, `"tokens":40`) {
		t.Errorf("events.jsonl does not record the cut-off reply")
	}
}

// Every run that ends leaves a report.md with its status, the reason and
// how to go on: failed (a model call refused), interrupted (Ctrl-C), halted.
func TestEveryEndedRunLeavesAReport(t *testing.T) {
	cases := []struct {
		name   string
		first  []llmtest.Step
		stop   func(t *testing.T, c *cli, repo string, cmd *exec.Cmd)
		code   int
		status string
		next   string
	}{
		{name: "failed", first: []llmtest.Step{roleStep("qa", llmtest.Reply{Status: 400, Content: "the reviewer refuses"})},
			code: exitFailed, status: "failed", next: "fix the cause, then lemmings resume"},
		{name: "interrupted", stop: func(t *testing.T, c *cli, repo string, cmd *exec.Cmd) {
			_ = cmd.Process.Signal(os.Interrupt)
		}, code: exitInterrupted, status: "interrupted", next: "continues from the last checkpoint"},
		{name: "halted", stop: func(t *testing.T, c *cli, repo string, cmd *exec.Cmd) {
			if h := c.run(repo, "halt"); h.code != 0 {
				t.Errorf("halt: %d %s", h.code, h.stderr)
			}
		}, code: exitPaused, status: "stopped", next: "continues"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := demo.NewServer(&demo.Script{ImplementorLatency: 150 * time.Millisecond}, tc.first...)
			defer srv.Close()
			c := newCLI(t)
			c.config(scriptedConfig(srv.URL(), "blocking"))
			repo := prepared(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := c.command(ctx, repo, "run", demo.Remit, "--json", "--no-supervisors")
			var out strings.Builder
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.stop != nil {
				for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
					matches, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl"))
					if len(matches) == 1 && midTask(t, matches[0], "t1") {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the run never started t1")
					}
				}
				tc.stop(t, c, repo, cmd)
			}
			err := cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, out.String())
			}
			res := lastJSON(t, out.String())
			path, _ := res["report"].(string)
			if path == "" {
				t.Fatalf("no report named in the result: %v", res)
			}
			report := readFile(t, path)
			for _, want := range []string{"**Status:** " + tc.status, "**Reason:** ", "**How to go on:** ", tc.next, "## Tasks done"} {
				if !strings.Contains(report, want) {
					t.Errorf("report lacks %q:\n%s", want, report)
				}
			}
			if strings.Contains(report, "**Reason:** (none recorded)") {
				t.Errorf("report gives no reason:\n%s", report)
			}
		})
	}
}
