package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
)

// After an undo or a fork, every screen says the same word and shows the step (issue 46):
// status, runs, report, log, serve and MCP.

type screens struct {
	status, runs, report, log, serve, mcp string
	step                                  int
}

func lookAtRun(t *testing.T, c *cli, repo, id string) screens {
	t.Helper()
	var sc screens
	var st map[string]any
	r := c.run(repo, "status", id, "--json")
	if json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &st) != nil {
		t.Fatalf("status: %d %s %s", r.code, r.stdout, r.stderr)
	}
	sc.status, sc.step = fmt.Sprint(st["status"]), int(st["step"].(float64))
	for _, l := range jsonLines(t, c.run(repo, "runs", "--json").stdout) {
		if l["run_id"] == id {
			sc.runs = fmt.Sprint(l["status"])
		}
	}
	rep := c.run(repo, "report", id)
	sc.report = rep.stdout
	lg := c.run(repo, "log", id)
	if lg.code != 0 {
		t.Errorf("log %s: exit %d %s", id, lg.code, lg.stderr)
	}
	sc.log = lg.stdout
	base, client := serveClient(t, startServe(t, c, repo, "--addr", "127.0.0.1:0"))
	resp, err := client.Get(base + "/runs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sc.serve = string(page)
	sc.mcp = mcpStatus(t, c, repo, id)
	return sc
}

// mcpStatus asks lemmings mcp over stdio for a run's status, as an agent does.
func mcpStatus(t *testing.T, c *cli, repo, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "mcp")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status","arguments":{"run_id":"` + id + `"}}}`,
	} {
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var reply struct {
			ID     int `json:"id"`
			Result struct {
				Structured map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &reply) == nil && reply.ID == 2 {
			return fmt.Sprintf("%v step %v: %v", reply.Result.Structured["status"], reply.Result.Structured["step"], reply.Result.Structured["hint"])
		}
	}
	t.Fatalf("lemmings mcp gave no status reply")
	return ""
}

func (sc screens) agree(t *testing.T, what, word, reason string) {
	t.Helper()
	if sc.status != word || sc.runs != word {
		t.Errorf("%s: status says %q, runs %q, want %q", what, sc.status, sc.runs, word)
	}
	if want := fmt.Sprintf("- **Status:** %s (step %d)", word, sc.step); !strings.Contains(sc.report, want) || !strings.Contains(sc.report, reason) {
		t.Errorf("%s: the report lacks %q or %q:\n%s", what, want, reason, sc.report)
	}
	lines := strings.Split(strings.TrimSpace(sc.log), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, fmt.Sprintf("the run is %s at step %d — ", word, sc.step)) || !strings.Contains(last, reason) {
		t.Errorf("%s: the log ends %q", what, last)
	}
	if !strings.Contains(sc.serve, fmt.Sprintf(`class="badge st-%s"`, word)) || !strings.Contains(sc.serve, fmt.Sprintf("the run is %s at step %d", word, sc.step)) {
		t.Errorf("%s: serve's run page does not say %s at step %d", what, word, sc.step)
	}
	if !strings.HasPrefix(sc.mcp, fmt.Sprintf("%s step %d: ", word, sc.step)) {
		t.Errorf("%s: MCP says %q", what, sc.mcp)
	}
}

func TestAfterUndoAndForkEveryScreenSaysTheSame(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	id := finishedRun(t, c, repo)["run_id"].(string)
	steps := c.run(repo, "history", id, "--json")
	var h struct{ Steps []struct{ Step int } }
	if json.Unmarshal([]byte(strings.TrimSpace(steps.stdout)), &h) != nil || len(h.Steps) < 3 {
		t.Fatalf("history: %s", steps.stdout)
	}
	forkAt := h.Steps[len(h.Steps)/2].Step

	u := c.run(repo, "undo", "t1", id, "--reason", "do it again")
	if u.code != 0 || !strings.Contains(u.stdout, "the run is stopped\nhow to go on: lemmings resume "+id) {
		t.Fatalf("undo: %d %s %s", u.code, u.stdout, u.stderr)
	}
	undone := lookAtRun(t, c, repo, id)
	undone.agree(t, "after undo", "stopped", "undo of t1 (lemmings undo): do it again")
	if !strings.Contains(undone.log, "task t1 undone by the user") {
		t.Errorf("the log does not show the undo:\n%s", undone.log)
	}

	nr := c.run(repo, "fork", fmt.Sprintf("%s@%d", id, forkAt), "--no-run", "--json")
	var made map[string]any
	if nr.code != 0 || json.Unmarshal([]byte(strings.TrimSpace(nr.stdout)), &made) != nil || made["status"] != "forked" {
		t.Fatalf("fork --no-run: %d %s %s", nr.code, nr.stdout, nr.stderr)
	}
	fork := made["run_id"].(string)
	forked := lookAtRun(t, c, repo, fork)
	forked.agree(t, "a fork not run", "forked", fmt.Sprintf("fork of %s at step %d, not run yet", id, forkAt))
	if !strings.Contains(forked.log, fmt.Sprintf("forked from %s@%d", id, forkAt)) || !strings.Contains(forked.log, "how to go on: lemmings resume "+fork+" runs it") {
		t.Errorf("the fork's log:\n%s", forked.log)
	}
	// Its duration is the moment it took to make, not its parent's run up to the step.
	if m := regexp.MustCompile(`<dt>Duration</dt><dd>([^<]*)</dd>`).FindStringSubmatch(forked.serve); m == nil {
		t.Error("serve's run page shows no duration")
	} else if d, err := time.ParseDuration(m[1]); err != nil || d > 5*time.Second {
		t.Errorf("serve's duration of a fork that never ran: %q", m[1])
	}
	cl := c.run(repo, "clean", fork)
	if cl.code == 0 || !strings.Contains(cl.stderr, "run "+fork+" is forked (fork of "+id) || strings.Contains(cl.stderr, "paused") {
		t.Errorf("clean of a fork not run: %d %s", cl.code, cl.stderr)
	}
	// A step the run does not have is a usage error, as a run that does not exist is.
	if bad := c.run(repo, "fork", id+"@9999", "--no-run"); bad.code != exitUsage || !strings.Contains(bad.stderr, "no such step to fork from") {
		t.Errorf("fork at a missing step: exit %d, want %d: %s", bad.code, exitUsage, bad.stderr)
	}
	if bad := c.run(repo, "fork", "no-such-run@3", "--no-run"); bad.code != exitUsage {
		t.Errorf("fork of a missing run: exit %d, want %d: %s", bad.code, exitUsage, bad.stderr)
	}
}

// In a demo's repository no hint points at resume, which would look for a model server at
// 11434: the demo's scripted server ended with it.
func TestTimeTravelInADemoRepositoryPointsNowhereItCannotGo(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(t.TempDir(), "textstats")
	if r := c.run(t.TempDir(), "demo", "--dir", dir); r.code != 0 {
		t.Fatalf("demo: %d\n%s", r.code, r.stderr)
	}
	runs, err := os.ReadDir(filepath.Join(dir, ".lemmings", "runs"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	id := runs[0].Name()
	const demoNext = "a demo run cannot be resumed: its scripted model server ended with it (lemmings demo runs the demo again)"
	u := c.run(dir, "undo", "t1", id, "--reason", "again")
	if u.code != 0 || !strings.Contains(u.stdout, "how to go on: "+demoNext) || strings.Contains(u.stdout, "lemmings resume") {
		t.Errorf("undo in the demo: %d %s %s", u.code, u.stdout, u.stderr)
	}
	nr := c.run(dir, "fork", id+"@3", "--no-run")
	if nr.code != 0 || !strings.Contains(nr.stdout, "how to go on: "+demoNext) || strings.Contains(nr.stdout, "lemmings resume") {
		t.Errorf("fork in the demo: %d %s %s", nr.code, nr.stdout, nr.stderr)
	}
	for _, l := range jsonLines(t, c.run(dir, "runs", "--json").stdout) {
		if l["next_step"] != demoNext {
			t.Errorf("runs: %v", l)
		}
	}
}
