package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/creack/pty"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// slowImplementorOnce makes the implementor's first answer slow: silent for
// wait (the prompt is evaluated), then a stream of n chunks, delay apart;
// then the demo's answers.
func slowImplementorOnce(wait time.Duration, n int, delay time.Duration) llmtest.Step {
	var used atomic.Bool
	return llmtest.Step{Name: "slow-implementor", API: llmtest.Ollama, Times: -1,
		Match: func(c llmtest.Call) bool {
			return len(c.Messages) > 0 && c.Role() == prompts.Implementor && !used.Swap(true)
		},
		Reply: llmtest.Reply{Content: `{"thought":"` + strings.Repeat("think ", n) + `","action":"read_file","path":"textstats.go"}`, Latency: wait, ChunkDelay: delay}}
}

// On a terminal the status line lives during a model call: the clock ticks
// every second and the reply's tokens and tokens/s show while it streams.
func TestTheStatusLineTicksAndCountsTokensDuringAModelCall(t *testing.T) {
	srv := demo.NewServer(&demo.Script{}, slowImplementorOnce(3500*time.Millisecond, 30, 100*time.Millisecond))
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, onePlan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, prepared(t), "run", demo.Remit, "--plan", plan, "--no-supervisors")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 160, Rows: 24})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	var out syncBuffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&out, tty); close(copied) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%q", err, out.String())
	}
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
	}
	// While the server is silent no event arrives: only the ticking clock
	// redraws the line.
	clocks := map[string]bool{}
	counted := false
	clock := regexp.MustCompile(`^\[(\d:\d\d:\d\d)\] implementor · waiting for ` + demo.PrimaryModel)
	waiting := 0 // 1: in the first call's silence, 2: past it
	for _, seg := range liveSegments(out.String()) {
		m := clock.FindStringSubmatch(seg)
		switch {
		case m != nil && waiting < 2:
			waiting = 1
			clocks[m[1]] = true
		case waiting == 1:
			waiting = 2
		}
		if regexp.MustCompile(`implementor · \d+ tokens · \d+\.\d tok/s`).MatchString(seg) {
			counted = true
		}
	}
	if len(clocks) < 3 {
		t.Errorf("the clock showed %d distinct times while the server was silent for 3.5 s: it does not tick\n%q", len(clocks), liveSegments(out.String()))
	}
	if !counted {
		t.Errorf("no status line counted the streaming reply's tokens:\n%q", liveSegments(out.String()))
	}
}

// `lemmings log` tells what went wrong when it happened: a retried model
// call, a reply cut off at the limit (before the re-ask's own answer), a
// model error, and each Implementor action and check; --verbose prints the
// streamed replies.
func TestLogPrintsRetriesCutOffRepliesModelErrorsAndActionsWhenTheyHappen(t *testing.T) {
	var scopeCalls atomic.Int32
	cut := llmtest.Reply{Content: `{"thought":"write it","action":"write_file","path":"cut.go","content":"package textstats\n\nfunc A() int {`, DoneReason: "length", CompletionTokens: 40}
	var cutUsed atomic.Bool
	srv := demo.NewServer(&demo.Script{},
		llmtest.Step{Name: "scope-busy-once", API: llmtest.Ollama, Times: -1, Reply: llmtest.Reply{Status: 503, Body: `{"error":"server busy"}`},
			Match: func(c llmtest.Call) bool {
				return c.Role() == prompts.ScopeAgent && scopeCalls.Add(1) == 1
			}},
		llmtest.Step{Name: "implementor-cut-once", API: llmtest.Ollama, Times: -1, Reply: cut,
			Match: func(c llmtest.Call) bool {
				return c.Role() == prompts.Implementor && !cutUsed.Swap(true)
			}},
		roleStep("qa", llmtest.Reply{Status: 400, Content: "the reviewer refuses"}))
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	r := c.run(repo, "run", demo.Remit, "--json", "--no-supervisors")
	if r.code != exitFailed {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := lastJSON(t, r.stdout)["run_id"].(string)
	log := c.run(repo, "log", id).stdout
	for _, want := range []string{
		"scope_agent: retry (attempt 2 in ", "server busy",
		"implementor: reply cut off at 40 tokens (the reply limit): asked again for a shorter one",
		"qa: model error: ", "the reviewer refuses",
		"t1 #1 ", "check textstats.go passed", "run ended: failed — ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	// Stamped when it happened: the cut-off reply is logged before the
	// re-ask is sent, not after its answer.
	evs := readEvents(t, filepath.Join(repo, ".lemmings", "runs", id, "events.jsonl"))
	order := []string{}
	for _, ev := range evs {
		if ev.Kind == graph.EventCustom && ev.Node == "implementor" && (ev.Name == "llm_start" || ev.Name == "reply_cut_off" || ev.Name == "llm_call") {
			order = append(order, ev.Name)
		}
	}
	if len(order) < 4 || strings.Join(order[:4], " ") != "llm_start reply_cut_off llm_start llm_call" {
		t.Errorf("the implementor's first call: %v, want llm_start reply_cut_off llm_start llm_call", order)
	}
	verbose := c.run(repo, "log", id, "--verbose").stdout
	if !strings.Contains(verbose, "implementor says:") || !strings.Contains(verbose, `    │ {"thought":"write it","action":"write_file"`) {
		t.Errorf("log --verbose does not show the streamed replies:\n%s", verbose)
	}
}

// Ctrl-C stops a run within a second even while a model call is in flight
// (the call is cancelled, not waited for).
func TestCtrlCStopsAModelCallInFlight(t *testing.T) {
	var silent atomic.Bool
	srv := demo.NewServer(&demo.Script{ImplementorLatency: 100 * time.Millisecond}, llmtest.Step{Name: "silent-implementor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: `{"action":"finish"}`, Latency: time.Minute},
		Match: func(c llmtest.Call) bool {
			return silent.Load() && c.Role() == prompts.Implementor
		}})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, onePlan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "run", demo.Remit, "--plan", plan, "--no-supervisors")
	var out syncBuffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out.String(), "t1 #1 "); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the implementor never acted:\n%s", out.String())
		}
	}
	silent.Store(true)
	for deadline := time.Now().Add(time.Minute); !silentCallSent(srv); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the implementor's silent call was never sent")
		}
	}
	at := time.Now()
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if took := time.Since(at); took > 10*time.Second {
		t.Errorf("Ctrl-C took %s: it waited for the call in flight", took)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.Contains(out.String(), ": interrupted — ") {
		t.Fatalf("exit %v\n%s", err, out.String())
	}
}

// silentCallSent: the server holds an implementor call it will not answer.
func silentCallSent(srv *llmtest.Server) bool {
	n := 0
	for _, c := range srv.ChatCalls() {
		if c.Role() == prompts.Implementor {
			n++
		}
	}
	return n >= 2 // the first action, then the silent one
}
