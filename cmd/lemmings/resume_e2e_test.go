package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

func roleCalls(srv *llmtest.Server, role string) int { return callsOf(srv, role) }

// A paused run stays paused until --approve or a non-empty --reject: a bare
// resume says what waits and exits 3 again; --reject "" is a usage error.
func TestABareResumeDoesNotWalkThroughAnApprovalPause(t *testing.T) {
	for _, mode := range []string{"milestones", "tasks"} {
		t.Run(mode, func(t *testing.T) {
			srv := demo.NewServer(&demo.Script{})
			defer srv.Close()
			c := newCLI(t)
			c.config(scriptedConfig(srv.URL(), "blocking"))
			repo := prepared(t)
			r := c.run(repo, "run", demo.Remit, "--approve", mode, "--no-supervisors")
			if r.code != exitPaused {
				t.Fatalf("run --approve %s: exit %d\n%s\n%s", mode, r.code, r.stdout, r.stderr)
			}
			calls := len(srv.ChatCalls())
			implementors := roleCalls(srv, "implementor")
			for _, args := range [][]string{{"resume"}, {"resume", "--no-supervisors"}} {
				b := c.run(repo, args...)
				if b.code != exitPaused || !strings.Contains(b.stdout, "waiting for a decision") || !strings.Contains(b.stdout, "--approve") {
					t.Fatalf("%v: exit %d, want %d\n%s\n%s", args, b.code, exitPaused, b.stdout, b.stderr)
				}
			}
			want := map[string]string{"milestones": "approve 2 milestones: m1 ", "tasks": "approve task t1"}[mode]
			if b := c.run(repo, "resume", "--json"); b.code != exitPaused || !strings.Contains(b.stdout, want) || !strings.Contains(b.stdout, "report.md") {
				t.Errorf("bare resume --json does not say what waits (%q): %d\n%s", want, b.code, b.stdout)
			}
			if e := c.run(repo, "resume", "--reject", ""); e.code != exitUsage || !strings.Contains(e.stderr, "--reject needs a reason") {
				t.Errorf(`resume --reject "": exit %d, want %d\n%s`, e.code, exitUsage, e.stderr)
			}
			if e := c.run(repo, "resume", "--reject", "  "); e.code != exitUsage {
				t.Errorf(`resume --reject "  ": exit %d, want %d`, e.code, exitUsage)
			}
			if n := len(srv.ChatCalls()); n != calls {
				t.Fatalf("%d model calls after the pause without a decision", n-calls)
			}
			st := c.run(repo, "status", "--json")
			if !strings.Contains(st.stdout, `"status":"paused"`) {
				t.Fatalf("status after the bare resumes: %s", st.stdout)
			}
			// Approving goes on; in tasks mode every task waits for its own approval.
			approvals := 0
			for {
				a := c.run(repo, "resume", "--approve", "--no-supervisors")
				approvals++
				if a.code == 0 {
					break
				}
				if a.code != exitPaused || approvals > 10 {
					t.Fatalf("resume --approve: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
				}
				if mode == "tasks" {
					if b := c.run(repo, "resume"); b.code != exitPaused {
						t.Fatalf("bare resume at a task pause: exit %d\n%s", b.code, b.stdout)
					}
				}
			}
			if mode == "tasks" && approvals < 4 {
				t.Errorf("%d approvals for the demo's 4 tasks", approvals)
			}
			if implementors != 0 && mode == "milestones" {
				t.Errorf("the implementor ran before the milestones were approved")
			}
		})
	}
}

// A resumed run goes on with the choices it was started with (model per
// role, offline, supervisors); a flag given to resume overrides and is
// recorded.
func TestAResumedRunRemembersHowItWasStarted(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	// The configured primary model is not on the server: only --model works.
	c.config(strings.Replace(scriptedConfig(srv.URL(), "blocking"), "primary: {model: "+demo.PrimaryModel+"}", "primary: {model: not-pulled:1b}", 1))
	repo := prepared(t)
	r := c.run(repo, "run", demo.Remit, "--model", demo.PrimaryModel, "--offline", "--approve", "tasks", "--json")
	if r.code != exitPaused {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	runID := lastJSON(t, r.stdout)["run_id"].(string)
	choices := func() map[string]string {
		var m map[string]string
		data, err := os.ReadFile(filepath.Join(repo, ".lemmings", "runs", runID, "choices.json"))
		if err != nil || json.Unmarshal(data, &m) != nil {
			t.Fatalf("choices.json: %v %s", err, data)
		}
		return m
	}
	if ch := choices(); ch["roles.primary.model"] != demo.PrimaryModel || ch["offline"] != "true" || ch["supervisors.enabled"] != "false" {
		t.Fatalf("recorded choices %v", ch)
	}
	// A bare resume (with the decision): the same model, still offline.
	a := c.run(repo, "resume", "--approve")
	if a.code != exitPaused {
		t.Fatalf("resume --approve: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	for _, call := range srv.Calls() {
		if call.API == llmtest.OpenAI {
			t.Fatalf("a resumed offline run called the cloud: %s", call.Path)
		}
		if call.Model == "not-pulled:1b" {
			t.Fatalf("the resumed run asked for the configured model instead of the one it was started with")
		}
	}
	// A flag given to resume overrides and is recorded.
	mark := len(srv.ChatCalls())
	a = c.run(repo, "resume", "--approve", "--model", demo.SummarizerModel)
	if a.code != exitPaused && a.code != 0 {
		t.Fatalf("resume --model: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	if !strings.Contains(a.stderr, "roles.primary.model is now "+demo.SummarizerModel) {
		t.Errorf("the override is not announced:\n%s", a.stderr)
	}
	used := false
	for _, call := range srv.ChatCalls()[mark:] {
		if call.Role() == prompts.Implementor && call.Model == demo.SummarizerModel {
			used = true
		}
	}
	if !used {
		t.Error("the override was not used")
	}
	if ch := choices(); ch["roles.primary.model"] != demo.SummarizerModel || ch["offline"] != "true" {
		t.Errorf("recorded choices after the override %v", ch)
	}
}
