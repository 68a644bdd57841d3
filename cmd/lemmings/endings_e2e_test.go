package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// onePlan and twoPlan are operator plans for quick runs: the ScopeAgent and
// the planner's model are not consulted for their tasks.
const onePlan = `milestones:
  - goal: The test suite passes.
    tasks:
      - title: Fix MeanWordLength integer division
        instructions: MeanWordLength in textstats.go divides two ints before converting to float64, so TestMeanWordLength fails. Convert before dividing.
        acceptance_criteria: ["MeanWordLength returns the exact mean (7/3 for \"go is fun\")", "go test ./... passes"]
        target_files: [textstats.go]
`

const twoPlan = onePlan + `      - title: Add a doc comment to MeanWordLength in textstats.go
        instructions: Add a one-line doc comment above MeanWordLength in textstats.go.
        acceptance_criteria: ["MeanWordLength has a doc comment"]
        target_files: [textstats.go]
`

// roleReply answers every call of role with the JSON of v.
func roleReply(role string, v any) llmtest.Step {
	body, _ := json.Marshal(v)
	return roleStep(role, llmtest.Reply{Content: string(body)})
}

// ending is one way a run can end, and what every place must say of it.
type ending struct {
	name   string
	script demo.Script
	steps  []llmtest.Step
	limits string   // appended to the config's limits block
	args   []string // after "run"
	// stop, when set, acts once the run is in the middle of task t1.
	stop   func(t *testing.T, c *cli, repo string, cmd *exec.Cmd)
	killed bool // SIGKILL: no exit code, summary, report or run_end of its own
	// after checks what resume says of the run.
	after func(t *testing.T, c *cli, repo, id string)

	status, reason, next string
	exit                 int
}

// TestEveryWayARunEndsReadsTheSameEverywhere runs the binary to each ending
// a run can have and checks that the exit code, the closing summary,
// `status`, `runs`, report.md, the run_end event and serve's badge say the
// same status, with a reason and the next step that works.
func TestEveryWayARunEndsReadsTheSameEverywhere(t *testing.T) {
	lemmingsBin(t) // its cases make their clis in subtests, and it goes on with the last one: under -race it skips here
	slow := demo.Script{ImplementorLatency: 150 * time.Millisecond}
	signal := func(sig os.Signal) func(*testing.T, *cli, string, *exec.Cmd) {
		return func(t *testing.T, _ *cli, _ string, cmd *exec.Cmd) { _ = cmd.Process.Signal(sig) }
	}
	cases := []ending{
		{name: "done", args: []string{"--plan", "one"},
			status: "done", exit: exitOK, reason: "the gates (build, vet, test) passed at the branch's last commit", next: "git merge lemmings/"},
		{name: "failed: no plan", steps: []llmtest.Step{roleStep("scope_agent", runaway)},
			status: "failed", exit: exitFailed, reason: "the ScopeAgent could not produce a plan", next: "start a new run"},
		{name: "failed: done claimed without work", limits: "  max_retries: 0\n  max_consecutive_failures: 5\n",
			steps: []llmtest.Step{
				roleReply("task_planner", map[string]any{"decision": "milestone_done", "reasoning": "The function is done.", "carry_forward": []any{}, "directives": []any{}}),
				roleReply("implementor", map[string]any{"thought": "no", "action": "blocked", "summary": "I cannot do this"}),
				roleReply("assessor", map[string]any{"verdict": "all_done", "notes": "All done.", "milestone_complete": true}),
			},
			status: "failed", exit: exitFailed, reason: "no task of it passed (1 failed)", next: "start a new run"},
		{name: "failed: a fault", args: []string{"--plan", "one"}, steps: []llmtest.Step{roleStep("qa", llmtest.Reply{Status: 400, Content: "the reviewer refuses"})},
			status: "failed", exit: exitFailed, reason: "the reviewer refuses", next: "fix the cause, then lemmings resume"},
		{name: "stopped: halt", script: slow, args: []string{"--plan", "one"},
			stop: func(t *testing.T, c *cli, repo string, _ *exec.Cmd) {
				if h := c.run(repo, "halt"); h.code != 0 {
					t.Errorf("halt: %d %s", h.code, h.stderr)
				}
			}, status: "stopped", exit: exitPaused, reason: "halt requested", next: "continues from the last checkpoint"},
		{name: "stopped: wall time", script: demo.Script{ImplementorLatency: 30 * time.Second}, args: []string{"--plan", "one"}, limits: "  max_wall_time: 3s\n",
			status: "stopped", exit: exitPaused, reason: "reached the wall-time limit of 3s (limits.max_wall_time)", next: "with a new limits.max_wall_time"},
		{name: "stopped: task limit", args: []string{"--plan", "two"}, limits: "  max_tasks: 1\n",
			status: "stopped", exit: exitPaused, reason: "reached the limit of 1 tasks (limits.max_tasks)", next: "cannot be resumed",
			after: func(t *testing.T, c *cli, repo, id string) {
				// resume says the same: what ended it, and what works instead.
				r := c.run(repo, "resume", id)
				if r.code != exitFailed || !strings.Contains(r.stderr, "has ended stopped (reached the limit of 1 tasks (limits.max_tasks)) and cannot be resumed") ||
					!strings.Contains(r.stderr, "git merge lemmings/"+id) {
					t.Errorf("resume of a run stopped at a limit: exit %d\n%s", r.code, r.stderr)
				}
			}},
		{name: "paused", args: []string{"--plan", "one", "--approve", "tasks"},
			status: "paused", exit: exitPaused, reason: "waiting for a decision: approve task t1", next: "--approve"},
		{name: "interrupted", script: slow, args: []string{"--plan", "one"}, stop: signal(os.Interrupt),
			status: "interrupted", exit: exitInterrupted, reason: "Ctrl-C", next: "continues from the last checkpoint"},
		{name: "crashed", script: slow, args: []string{"--plan", "one"}, stop: signal(syscall.SIGKILL), killed: true,
			status: "crashed", reason: "ended without recording how", next: "continues from the last checkpoint"},
	}
	repo := prepared(t)
	plans := map[string]string{"one": filepath.Join(t.TempDir(), "one.yaml"), "two": filepath.Join(t.TempDir(), "two.yaml")}
	writeFile(t, plans["one"], onePlan)
	writeFile(t, plans["two"], twoPlan)
	ids := map[string]string{}
	var last *cli
	for _, tc := range cases {
		ok := t.Run(tc.name, func(t *testing.T) {
			script := tc.script
			srv := demo.NewServer(&script, tc.steps...)
			defer srv.Close()
			c := newCLI(t)
			c.config(scriptedConfig(srv.URL(), "blocking") + tc.limits)
			last = c
			args := append([]string{"run", demo.Remit, "--json", "--no-supervisors"}, tc.args...)
			for i, a := range args {
				if p, ok := plans[a]; ok && i > 0 && args[i-1] == "--plan" {
					args[i] = p
				}
			}
			before := runIDs(repo)
			code, out := runUntil(t, c, repo, args, tc)
			id := newRunID(t, repo, before)
			ids[tc.name] = id
			if !tc.killed {
				if code != tc.exit {
					t.Fatalf("exit %d, want %d\n%s", code, tc.exit, out)
				}
				res := lastJSON(t, out)
				tc.check(t, "the summary", str(res["status"]), str(res["reason"]), str(res["next"]))
				report := readFile(t, filepath.Join(repo, ".lemmings", "runs", id, "report.md"))
				if !strings.Contains(report, "- **Status:** "+tc.status+"\n") || !strings.Contains(report, tc.reason) || !strings.Contains(report, tc.next) {
					t.Errorf("report.md says otherwise:\n%s", report)
				}
				var end *graph.Event
				for _, ev := range readEvents(t, filepath.Join(repo, ".lemmings", "runs", id, "events.jsonl")) {
					if ev.Kind == graph.EventRunEnd {
						end = &ev
					}
				}
				if end == nil || string(end.Status) != tc.status || !strings.Contains(end.Reason+end.Error, tc.reason) {
					t.Errorf("run_end event: %+v", end)
				}
			}
			var st map[string]any
			s := c.run(repo, "status", id, "--json")
			if err := json.Unmarshal([]byte(s.stdout), &st); err != nil {
				t.Fatalf("status --json: %v\n%s%s", err, s.stdout, s.stderr)
			}
			tc.check(t, "status", str(st["status"]), str(st["reason"]), str(st["next_step"]))
			text := c.run(repo, "status", id).stdout
			if !strings.HasPrefix(text, "run "+id+": "+tc.status+" ") {
				t.Errorf("status says %q", firstLineOf(text))
			}
			if tc.after != nil {
				tc.after(t, c, repo, id)
			}
		})
		if !ok {
			return // the cases share the repository: one left running would spoil the rest
		}
	}

	runs := map[string]map[string]any{}
	for _, l := range jsonLines(t, last.run(repo, "runs", "--json").stdout) {
		runs[str(l["run_id"])] = l
	}
	base, client := serveClient(t, startServe(t, last, repo, "--addr", "127.0.0.1:0"))
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, tc := range cases {
		id := ids[tc.name]
		if got := str(runs[id]["status"]); got != tc.status {
			t.Errorf("%s: runs says %q, want %q", tc.name, got, tc.status)
		}
		row := regexp.MustCompile(`(?s)<tr data-run="` + id + `">.*?</tr>`).FindString(string(page))
		if !strings.Contains(row, `<span class="badge st-`+tc.status+`">`+tc.status+`</span>`) {
			t.Errorf("%s: serve's badge: %s", tc.name, row)
		}
	}
}

func (tc ending) check(t *testing.T, where, status, reason, next string) {
	t.Helper()
	if status != tc.status || !strings.Contains(reason, tc.reason) || !strings.Contains(next, tc.next) {
		t.Errorf("%s says %q, reason %q, next %q; want %q, %q, %q", where, status, reason, next, tc.status, tc.reason, tc.next)
	}
}

// runUntil runs the binary; with tc.stop it acts once the run is in the
// middle of task t1. It returns the exit code and stdout.
func runUntil(t *testing.T, c *cli, repo string, args []string, tc ending) (int, string) {
	t.Helper()
	if tc.stop == nil {
		r := c.run(repo, args...)
		return r.code, r.stdout + r.stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, args...)
	var out strings.Builder
	cmd.Stdout = &out
	before := runIDs(repo)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if id := newRunIDNow(repo, before); id != "" && midTask(t, filepath.Join(repo, ".lemmings", "runs", id, "events.jsonl"), "t1") {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the run never started t1")
		}
	}
	tc.stop(t, c, repo, cmd)
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	return 0, out.String()
}

func runIDs(repo string) map[string]bool {
	out := map[string]bool{}
	ents, _ := os.ReadDir(filepath.Join(repo, ".lemmings", "runs"))
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

func newRunIDNow(repo string, before map[string]bool) string {
	for id := range runIDs(repo) {
		if !before[id] {
			if _, err := os.Stat(filepath.Join(repo, ".lemmings", "runs", id, "events.jsonl")); err == nil {
				return id
			}
		}
	}
	return ""
}

func newRunID(t *testing.T, repo string, before map[string]bool) string {
	t.Helper()
	id := newRunIDNow(repo, before)
	if id == "" {
		t.Fatal("no new run")
	}
	return id
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// A run stopped at the wall time is resumable, and the resume gets a new
// limits.max_wall_time (it counts from each start or resume): the summary,
// the report and resume itself say so, and resume finishes the run.
func TestARunStoppedAtTheWallTimeResumesWithANewAllowance(t *testing.T) {
	var silent atomic.Bool // the implementor says nothing for a minute
	silent.Store(true)
	srv := demo.NewServer(&demo.Script{}, llmtest.Step{Name: "silent-implementor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: `{"action":"finish"}`, Latency: time.Minute},
		Match: func(c llmtest.Call) bool {
			return silent.Load() && c.Role() == prompts.Implementor
		}})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking") + "  max_wall_time: 10s\n")
	repo := prepared(t)
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, onePlan)
	start := time.Now()
	r := c.run(repo, "run", demo.Remit, "--plan", plan, "--no-supervisors")
	if took := time.Since(start); r.code != exitPaused || took > 40*time.Second {
		t.Fatalf("exit %d after %s (want %d, at the wall time, not after the call)\n%s\n%s", r.code, took, exitPaused, r.stdout, r.stderr)
	}
	want := "with a new limits.max_wall_time (it counts from each start or resume)"
	m := regexp.MustCompile(`run (\S+): stopped`).FindStringSubmatch(r.stdout)
	if m == nil || !strings.Contains(r.stdout, "reason: reached the wall-time limit of 10s (limits.max_wall_time)") || !strings.Contains(r.stdout, want) {
		t.Fatalf("the summary:\n%s", r.stdout)
	}
	if report := readFile(t, filepath.Join(repo, ".lemmings", "runs", m[1], "report.md")); !strings.Contains(report, want) {
		t.Errorf("the report does not say how to go on:\n%s", report)
	}
	silent.Store(false)
	res := c.run(repo, "resume", m[1])
	if res.code != exitOK || !strings.Contains(res.stdout, "run "+m[1]+": done") {
		t.Fatalf("resume: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}
