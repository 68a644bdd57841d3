package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
)

// The time-travel commands through the binary, on the demo repository with
// the scripted team (docs/time-travel.md).

const docTell = "Add a doc comment to MeanWordLength in textstats.go"

// checkout is what a user's checkout looks like: HEAD, branch and status.
func checkout(t *testing.T, repo string) string {
	return git(t, repo, "rev-parse", "HEAD") + "|" + git(t, repo, "branch", "--show-current") + "|" +
		git(t, repo, "status", "--porcelain", "--untracked-files=all")
}

// finishedRun runs the demo remit to its end without supervisors.
func finishedRun(t *testing.T, c *cli, repo string) map[string]any {
	t.Helper()
	r := c.run(repo, "run", demo.Remit, "--no-supervisors", "--json")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return lastJSON(t, r.stdout)
}

// waitFor polls cond until it holds or a minute passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestTellReachesARunningRunAndThePlannerAddressesIt(t *testing.T) {
	srv := demo.NewServer(&demo.Script{ImplementorLatency: 100 * time.Millisecond})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "run", demo.Remit, "--no-supervisors", "--json")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "t1's implementor", func() bool {
		m, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl"))
		return len(m) == 1 && midTask(t, m[0], "t1")
	})
	before := checkout(t, repo)
	if r := c.run(repo, "tell", docTell); r.code != 0 || !strings.Contains(r.stdout, "told ") {
		t.Fatalf("tell: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	res := lastJSON(t, out.String())
	id := res["run_id"].(string)
	if res["status"] != "done" {
		t.Fatalf("run: %v", res)
	}
	var told bool
	for _, ev := range readEvents(t, filepath.Join(repo, ".lemmings", "runs", id, "events.jsonl")) {
		told = told || (ev.Kind == graph.EventCustom && ev.Name == "told" && strings.Contains(string(ev.Data), "MeanWordLength"))
	}
	if !told {
		t.Error("no told event in the run's log")
	}
	d := c.run(repo, "directives", id, "--json")
	if !strings.Contains(d.stdout, `"source":"user"`) || !strings.Contains(d.stdout, `"fate":"completed"`) || !strings.Contains(d.stdout, docTell) {
		t.Errorf("directives: the user's message is not there, completed:\n%s", d.stdout)
	}
	if src := git(t, repo, "show", res["branch"].(string)+":textstats.go"); !strings.Contains(src, "// MeanWordLength returns the mean") {
		t.Errorf("the task made for the message did not land:\n%s", src)
	}
	report, _ := os.ReadFile(res["report"].(string))
	if !strings.Contains(string(report), "| user |") || !strings.Contains(string(report), "Told by the user") {
		t.Errorf("the report does not show the told message:\n%s", report)
	}
	if got := checkout(t, repo); got != before {
		t.Errorf("the user's checkout changed: %q, was %q", got, before)
	}
	// A run that ended takes no message.
	if r := c.run(repo, "tell", id, "more"); r.code == 0 || !strings.Contains(r.stderr, "has ended") {
		t.Errorf("tell to an ended run: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

func TestUndoRevertsTheTaskAndResumeDoesItAgain(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	res := finishedRun(t, c, repo)
	id, branch := res["run_id"].(string), res["branch"].(string)
	before := checkout(t, repo)

	u := c.run(repo, "undo", "t1", id, "--reason", "do it again", "--json")
	if u.code != 0 {
		t.Fatalf("undo: %d %s %s", u.code, u.stdout, u.stderr)
	}
	if got := git(t, repo, "log", "-1", "--format=%(trailers:key=Lemmings-Undo,valueonly)", branch); got != "t1" {
		t.Errorf("the branch's last commit is not t1's revert: trailer %q", got)
	}
	if src := git(t, repo, "show", branch+":textstats.go"); !strings.Contains(src, "float64(total / len(words))") {
		t.Errorf("t1's fix is still on the branch:\n%s", src)
	}
	st := c.run(repo, "status", id, "--json")
	if !strings.Contains(st.stdout, `"status":"stopped"`) || !strings.Contains(st.stdout, `"resumable":true`) {
		t.Errorf("after undo the run should be stopped and resumable: %s", st.stdout)
	}
	if got := checkout(t, repo); got != before {
		t.Errorf("undo changed the user's checkout: %q, was %q", got, before)
	}
	// The same task cannot be undone twice.
	if again := c.run(repo, "undo", "t1", id); again.code == 0 {
		t.Errorf("a second undo of t1 succeeded: %s", again.stdout)
	}

	r := c.run(repo, "resume", id, "--json")
	if r.code != 0 {
		t.Fatalf("resume: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := lastJSON(t, r.stdout); got["status"] != "done" {
		t.Fatalf("resume: %v", got)
	}
	if src := git(t, repo, "show", branch+":textstats.go"); !strings.Contains(src, "float64(total) / float64(len(words))") {
		t.Errorf("the task was not done again:\n%s", src)
	}
	subjects := git(t, repo, "log", "--format=%s", "main.."+branch)
	if strings.Count(subjects, "Fix MeanWordLength integer division") < 3 { // done, reverted, done again
		t.Errorf("the branch should hold t1, its revert and the task done again:\n%s", subjects)
	}
	report, _ := os.ReadFile(filepath.Join(repo, ".lemmings", "runs", id, "report.md"))
	if !strings.Contains(string(report), "do it again") {
		t.Errorf("the report does not say what was undone and why:\n%s", report)
	}
	if got := checkout(t, repo); got != before {
		t.Errorf("the user's checkout changed: %q, was %q", got, before)
	}
}

func TestForkFromAStepSurvivesKillNineAndLeavesTheParentAlone(t *testing.T) {
	srv := demo.NewServer(&demo.Script{ImplementorLatency: 150 * time.Millisecond})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	res := finishedRun(t, c, repo)
	parent, parentBranch := res["run_id"].(string), res["branch"].(string)
	parentTip := git(t, repo, "rev-parse", parentBranch)

	h := c.run(repo, "history", parent, "--json")
	var hist struct {
		Steps []struct {
			Step   int    `json:"step"`
			Node   string `json:"node"`
			Done   int    `json:"tasks_done"`
			Task   string `json:"task"`
			Commit string `json:"commit"`
		} `json:"steps"`
	}
	if h.code != 0 || json.Unmarshal([]byte(h.stdout), &hist) != nil || len(hist.Steps) < 5 {
		t.Fatalf("history --json: %d %s %s", h.code, h.stdout, h.stderr)
	}
	step, commit := -1, ""
	for _, s := range hist.Steps {
		if s.Node == "mark_complete" && s.Done == 1 {
			step, commit = s.Step, s.Commit
			break
		}
	}
	if step < 0 {
		t.Fatalf("no step after t1's completion in the history: %s", h.stdout)
	}
	if txt := c.run(repo, "history", parent); !strings.Contains(txt.stdout, "STEP") || !strings.Contains(txt.stdout, "mark_complete") {
		t.Errorf("history: %s", txt.stdout)
	}

	// The fork, killed in the middle of its first task, resumed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "fork", parent+"@"+itoa(step), "--reject-task", "t1", "convert before dividing, and say so")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	forkLog := ""
	waitFor(t, "the fork's implementor", func() bool {
		m, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl"))
		for _, p := range m {
			if !strings.Contains(p, parent) && implementorCalled(t, p) {
				forkLog = p
				return true
			}
		}
		return false
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	fork := filepath.Base(filepath.Dir(forkLog))
	r := c.run(repo, "resume", fork, "--json")
	if r.code != 0 {
		t.Fatalf("resume of the killed fork: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := lastJSON(t, r.stdout)
	if got["status"] != "done" || got["run_id"] != fork || got["branch"] == parentBranch {
		t.Fatalf("fork: %v", got)
	}
	forkBranch := got["branch"].(string)
	git(t, repo, "merge-base", "--is-ancestor", commit, forkBranch) // from the step's commit
	if got := git(t, repo, "rev-parse", parentBranch); got != parentTip {
		t.Errorf("the parent's branch moved: %s, was %s", got, parentTip)
	}
	if trailer := git(t, repo, "log", "--format=%(trailers:key=Lemmings-Undo,valueonly)", "main.."+forkBranch); !strings.Contains(trailer, "t1") {
		t.Errorf("no revert of t1 on the fork's branch")
	}
	if src := git(t, repo, "show", forkBranch+":textstats.go"); !strings.Contains(src, "float64(total) / float64(len(words))") {
		t.Errorf("the rejected task was not done again on the fork:\n%s", src)
	}
	fh := c.run(repo, "history", fork, "--json")
	if !strings.Contains(fh.stdout, `"forked_from":"`+parent+"@"+itoa(step)+`"`) {
		t.Errorf("the fork's history does not name its parent: %s", fh.stdout)
	}
	st := c.run(repo, "status", parent, "--json")
	if !strings.Contains(st.stdout, `"status":"done"`) {
		t.Errorf("the parent is not done any more: %s", st.stdout)
	}
	// A fork made without running it stands forked, not paused for a decision.
	nr := c.run(repo, "fork", parent+"@"+itoa(step), "--no-run", "--remit", "Only fix MeanWordLength", "--json")
	var made map[string]any
	if nr.code != 0 || json.Unmarshal([]byte(strings.TrimSpace(nr.stdout)), &made) != nil {
		t.Fatalf("fork --no-run: %d %s %s", nr.code, nr.stdout, nr.stderr)
	}
	if st := c.run(repo, "status", made["run_id"].(string), "--json"); !strings.Contains(st.stdout, `"status":"forked"`) || !strings.Contains(st.stdout, "not run yet") {
		t.Errorf("status of a fork not run: %s", st.stdout)
	}
	// A step that does not exist is refused, with the range.
	if bad := c.run(repo, "fork", parent+"@9999", "--no-run"); bad.code == 0 || !strings.Contains(bad.stderr, "no such step to fork from") {
		t.Errorf("fork at a missing step: %d %s", bad.code, bad.stderr)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// implementorCalled: the log shows an implementor's model call answered.
func implementorCalled(t *testing.T, path string) bool {
	for _, ev := range readEvents(t, path) {
		if ev.Kind == graph.EventCustom && ev.Name == "llm_call" && ev.Node == "implementor" {
			return true
		}
	}
	return false
}

// An undo asked of a running run is carried out by the run itself at its
// next task boundary; the run goes on and does the task again.
func TestUndoOfARunningRunIsDoneAtItsNextTaskBoundary(t *testing.T) {
	srv := demo.NewServer(&demo.Script{ImplementorLatency: 150 * time.Millisecond})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "run", demo.Remit, "--no-supervisors", "--json")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "t2's implementor", func() bool {
		m, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl"))
		return len(m) == 1 && midTask(t, m[0], "t2")
	})
	u := c.run(repo, "undo", "t1", "--reason", "do it again")
	if u.code != 0 || !strings.Contains(u.stdout, "undo of t1 requested") {
		t.Fatalf("undo: %d %s %s", u.code, u.stdout, u.stderr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	res := lastJSON(t, out.String())
	if res["status"] != "done" {
		t.Fatalf("run: %v", res)
	}
	branch := res["branch"].(string)
	subjects := git(t, repo, "log", "--format=%s", "main.."+branch)
	if !strings.Contains(subjects, "Revert t1: Fix MeanWordLength integer division") || strings.Count(subjects, "Fix MeanWordLength integer division") < 3 {
		t.Errorf("the branch should hold t1, its revert and the task done again:\n%s", subjects)
	}
	if src := git(t, repo, "show", branch+":textstats.go"); !strings.Contains(src, "float64(total) / float64(len(words))") {
		t.Errorf("the task was not done again:\n%s", src)
	}
	id := res["run_id"].(string)
	if left, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", id, "undo", "*.json")); len(left) != 0 {
		t.Errorf("undo requests left behind: %v", left)
	}
}
