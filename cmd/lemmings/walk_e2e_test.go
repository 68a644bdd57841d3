package main

import (
	"context"
	"errors"
	"net"
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

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// What a new user meets on the command line (issue 34): each test runs the
// built binary as a user would. The demo's remit runs with --full: these
// tests are about what a run says, not about the shape a remit gets.

// slowCalls makes the Implementor's calls hang (30 s) once slow is set, and
// counts the calls that arrived since.
type slowCalls struct{ slow, arrived atomic.Bool }

// startMidCall starts a run, makes its Implementor's calls hang once the
// first has answered, and returns with one in flight.
func startMidCall(t *testing.T, c *cli, repo string, sc *slowCalls, out *strings.Builder) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := c.command(ctx, repo, "run", demo.Remit, "--full", "--no-supervisors")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		matches, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl"))
		if len(matches) == 1 && midTask(t, matches[0], "t1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never started t1\n%s", out.String())
		}
	}
	sc.slow.Store(true)
	for deadline := time.Now().Add(time.Minute); !sc.arrived.Load(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no slow call arrived\n%s", out.String())
		}
	}
	time.Sleep(300 * time.Millisecond) // the call is being waited for
	return cmd
}

// slowImplementorServer answers the Implementor after 30 s once sc.slow is set.
func slowImplementorServer(sc *slowCalls) *llmtest.Server {
	return demo.NewServer(&demo.Script{ImplementorLatency: 100 * time.Millisecond}, llmtest.Step{Name: "slow-implementor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: `{"action":"finish"}`, Latency: 30 * time.Second},
		Match: func(c llmtest.Call) bool {
			if sc.slow.Load() && len(c.Messages) > 0 && c.Role() == prompts.Implementor {
				sc.arrived.Store(true)
				return true
			}
			return false
		}})
}

// A halt or a Ctrl-C cuts off the model call in flight: that is the stop the
// user asked for, not a fault of the model, and nothing says "model error".
func TestAStopTheUserAskedForIsNotAModelError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stop   func(t *testing.T, c *cli, repo string, cmd *exec.Cmd)
		status string
	}{
		{"halt", func(t *testing.T, c *cli, repo string, _ *exec.Cmd) {
			if h := c.run(repo, "halt"); h.code != 0 {
				t.Fatalf("halt: %d %s %s", h.code, h.stdout, h.stderr)
			}
		}, "stopped"},
		{"ctrl-c", func(t *testing.T, _ *cli, _ string, cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }, "interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sc slowCalls
			srv := slowImplementorServer(&sc)
			defer srv.Close()
			c := newCLI(t)
			c.config(scriptedConfig(srv.URL(), "blocking"))
			repo := prepared(t)
			var out strings.Builder
			cmd := startMidCall(t, c, repo, &sc, &out)
			tc.stop(t, c, repo, cmd)
			_ = cmd.Wait()
			if !strings.Contains(out.String(), ": "+tc.status+" — ") {
				t.Fatalf("the run did not end %s:\n%s", tc.status, out.String())
			}
			if strings.Contains(out.String(), "model error") || strings.Contains(out.String(), "context canceled") {
				t.Errorf("the stop reads as a model failure:\n%s", out.String())
			}
			matches, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl"))
			for _, ev := range readEvents(t, matches[0]) {
				if ev.Name == "model_error" {
					t.Errorf("events.jsonl records the stop as a model error: %s", ev.Data)
				}
			}
			if l := c.run(repo, "log"); strings.Contains(l.stdout, "model error") || strings.Contains(l.stdout, ": "+tc.status+" — "+tc.status) {
				t.Errorf("lemmings log:\n%s", l.stdout)
			}
			// Approving it is refused in the same word.
			if a := c.run(repo, "resume", "--approve"); a.code != exitUsage || !strings.Contains(a.stderr, " is "+tc.status+", not paused for an approval (how to go on: lemmings resume ") {
				t.Errorf("resume --approve of a %s run: exit %d\n%s", tc.status, a.code, a.stderr)
			}
		})
	}
}

// A run paused for its milestones says what is to be approved (status lists
// the tasks). lemmings halt names only a running run: a paused one is
// refused with its status and how to go on, and no halt request is left.
func TestAPausedRunSaysWhatWaitsAndCannotBeHalted(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	r := c.run(repo, "run", demo.Remit, "--full", "--approve", "milestones", "--no-supervisors", "--json")
	if r.code != exitPaused {
		t.Fatalf("run --approve milestones: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := lastJSON(t, r.stdout)["run_id"].(string)
	// The pause says what is to be approved, and status lists the tasks.
	st := c.run(repo, "status")
	for _, want := range []string{
		`reason: waiting for a decision: approve 2 milestones: m1 "The test suite passes: MeanWordLength computes an exact mean." (1 task); m2 "Users can list the most frequent words`,
		"(2 tasks) (lemmings status lists their tasks; lemmings resume --approve",
		"> m1 [active] The test suite passes", "    - Fix MeanWordLength integer division\n",
		"  m2 [pending] Users can list", "    - Add TopWords with a test\n    - Add a -top flag to the textstats command\n",
	} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("status of a run paused for its milestones lacks %q:\n%s", want, st.stdout)
		}
	}
	// lemmings log says the pause once, not again as the run's end.
	if l := c.run(repo, "log"); strings.Count(l.stdout, "approve 2 milestones") != 1 || !strings.Contains(l.stdout, "run ended: paused (the line above says for what)") {
		t.Errorf("log of a paused run:\n%s", l.stdout)
	}
	h := c.run(repo, "halt", id)
	if h.code != exitFailed || !strings.Contains(h.stderr, "run "+id+" is paused, not running: nothing to halt") ||
		!strings.Contains(h.stderr, "lemmings resume "+id+" --approve") || strings.Contains(h.stdout, "halt requested") {
		t.Errorf("halt of a paused run: exit %d\nstdout: %s\nstderr: %s", h.code, h.stdout, h.stderr)
	}
	if _, err := os.Stat(filepath.Join(repo, ".lemmings", "runs", id, "halt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a halt file was left for a paused run: %v", err)
	}
	if h := c.run(repo, "halt"); h.code != exitFailed || !strings.Contains(h.stderr, "no run is running") {
		t.Errorf("bare halt with nothing running: exit %d %s", h.code, h.stderr)
	}
}

// A run killed in the middle of an edit, then resumed: the work tree is put
// back at the last checkpoint, and the edit it had not committed is kept on
// the rescue branch the warning names, as a commit on top of that HEAD.
func TestResumeAfterACrashKeepsTheUncommittedEditOnARescueBranch(t *testing.T) {
	srv := demo.NewServer(&demo.Script{ImplementorLatency: 400 * time.Millisecond})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "run", demo.Remit, "--full", "--no-supervisors")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var tail *eventTail
	edited := func(ev graph.Event) bool {
		return ev.Name == "action" && strings.Contains(string(ev.Data), `"action":"edit"`) && strings.Contains(string(ev.Data), `"task":"t1"`)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("the run ended before its edit: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never edited textstats.go")
		}
		if tail == nil {
			if m, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl")); len(m) == 1 {
				tail = &eventTail{path: m[0]}
			}
			continue
		}
		if slices.ContainsFunc(tail.next(t), edited) {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	<-exited
	runID := filepath.Base(filepath.Dir(tail.path))
	wt := filepath.Join(repo, ".lemmings", "worktrees", runID)
	edit := git(t, wt, "diff", "HEAD")
	if !strings.Contains(edit, "+\treturn float64(total) / float64(len(words))") {
		t.Fatalf("the killed run left no uncommitted edit to rescue:\n%s", edit)
	}
	head := git(t, wt, "rev-parse", "HEAD")

	r := c.run(repo, "resume", "--no-supervisors")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rescue := "lemmings/" + runID + "-rescue"
	if !strings.Contains(r.stderr, "is kept on branch "+rescue+": git diff ") {
		t.Fatalf("the resume does not name the rescue branch:\n%s", r.stderr)
	}
	if parent := git(t, repo, "rev-parse", rescue+"^"); parent != head {
		t.Errorf("the rescue commit's parent is %s, want the HEAD it was taken at %s", parent, head)
	}
	if kept := git(t, repo, "diff", head, rescue); !strings.Contains(kept, "+\treturn float64(total) / float64(len(words))") {
		t.Errorf("the rescue branch does not hold the uncommitted edit:\n%s", kept)
	}
	if files := git(t, repo, "diff", "--name-only", head, rescue); files != "textstats.go" {
		t.Errorf("the rescue commit changes %q, want only textstats.go", files)
	}
	if strings.Contains(r.stderr, "git branch rescue") {
		t.Errorf("the old hint is still printed:\n%s", r.stderr)
	}
	// The log says where the resume took the crashed run up, then where the
	// cut-off step's edit is kept.
	l := c.run(repo, "log", runID)
	resumed := regexp.MustCompile(`(?m)^\[[0-9:]+\] resumed at step \d+ \(status: crashed\)\n.*work tree put back at ` + head[:10] + `: the step that was cut off runs again; what it had left is on branch ` + regexp.QuoteMeta(rescue) + ` `)
	if l.code != 0 || !resumed.MatchString(l.stdout) {
		t.Errorf("lemmings log does not show the resume after the crash:\n%s", l.stdout)
	}
}

// Outside a git repository every command about runs or knowledge says so,
// as lemmings run does; in a repository without runs, lemmings runs says
// there are none yet (exit 0) and status that there is nothing to show.
func TestOutsideAGitRepositoryCommandsSaySo(t *testing.T) {
	c := newCLI(t)
	plain := t.TempDir()
	for _, args := range [][]string{{"status"}, {"runs"}, {"log"}, {"report"}, {"halt"}, {"resume"}, {"knowledge", "init"}} {
		r := c.run(plain, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, plain+": not a git repository: lemmings works on a git repository; run `git init`") {
			t.Errorf("%v outside git: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(plain, "docs")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("knowledge init outside git created docs/: %v", err)
	}
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first")
	if r := c.run(repo, "runs"); r.code != 0 || !strings.Contains(r.stdout, "no runs yet in "+repo+`: lemmings run "remit" starts one`) {
		t.Errorf("runs with none: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := c.run(repo, "runs", "--json"); r.code != 0 || r.stdout != "" {
		t.Errorf("runs --json with none: exit %d %q", r.code, r.stdout)
	}
	if r := c.run(repo, "status"); r.code != exitFailed || !strings.Contains(r.stderr, "no lemmings runs in "+repo) {
		t.Errorf("status with no runs: exit %d\n%s", r.code, r.stderr)
	}
}

// lemmings --offline index asks no model, not even the local Ollama: it
// builds with the offline embedder and says what a run will do. A run that
// reaches the embedding model then re-embeds it once, saying so once; an
// --offline index of an index a model built leaves it alone.
func TestOfflineIndexAsksNoModel(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	repo := prepared(t)
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	r := c.run(repo, "--offline", "index")
	if r.code != 0 || !strings.Contains(r.stdout, "embedder: offline-hash-v1") ||
		!strings.Contains(r.stdout, "offline: no model asked; a run or lemmings index that reaches "+demo.EmbeddingModel+" re-embeds the index with it") {
		t.Errorf("--offline index: exit %d\n%s", r.code, r.stdout)
	}
	if n := len(srv.Calls()); n != 0 || r.stderr != "" {
		t.Errorf("--offline index asked the model server %d times; stderr: %s", n, r.stderr)
	}
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, onePlan)
	run := c.run(repo, "run", demo.Remit, "--plan", plan, "--no-supervisors")
	if run.code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	if n := strings.Count(run.stdout+run.stderr, "rebuilt from scratch"); n != 1 {
		t.Errorf("the re-embedding is said %d times, want once:\n%s\n%s", n, run.stdout, run.stderr)
	}
	manifest, _ := os.ReadFile(filepath.Join(repo, ".lemmings", "index", "manifest.json"))
	if !strings.Contains(string(manifest), demo.EmbeddingModel) {
		t.Fatalf("the run did not re-embed with the model: %s", manifest)
	}
	calls := len(srv.Calls())
	expectExit(t, c, repo, exitFailed, []string{"--offline", "index"}, "was built with ollama:"+demo.EmbeddingModel+", which offline indexing does not ask: it is left as it is")
	if n := len(srv.Calls()); n != calls {
		t.Errorf("--offline index of a model's index asked the server %d times", n-calls)
	}
	if now, _ := os.ReadFile(filepath.Join(repo, ".lemmings", "index", "manifest.json")); string(now) != string(manifest) {
		t.Errorf("--offline index changed the model's index:\n%s", now)
	}
	// Ollama down: still not a word about it.
	down := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	other := prepared(t)
	if r := down.run(other, "--offline", "index"); r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "embedder: offline-hash-v1") {
		t.Errorf("--offline index with Ollama down: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// A trace collector that is down costs one warning that names it: the
// connection refused at its address, not a deadline.
func TestATraceCollectorThatIsDownIsNamed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking") + "tracing:\n  enabled: true\n  endpoint: http://" + addr + "\n")
	repo := prepared(t)
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, onePlan)
	r := c.run(repo, "run", demo.Remit, "--plan", plan, "--no-supervisors")
	if r.code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning: the run's trace did not all reach http://"+addr+"/v1/traces") ||
		!strings.Contains(r.stderr, "connection refused at "+addr) || strings.Contains(r.stderr, "deadline exceeded") {
		t.Errorf("the warning about the collector:\n%s", r.stderr)
	}
}

// A key indented deeper than the one above is reported on its own line.
func TestAYAMLIndentationErrorNamesItsLine(t *testing.T) {
	c := newCLI(t)
	repo := prepared(t)
	writeFile(t, filepath.Join(repo, "lemmings.yaml"), "limits:\n  max_tasks: 5\n   max_retries: 2\n")
	r := c.run(repo, "config")
	if r.code != exitUsage || !strings.Contains(r.stderr, "lemmings.yaml:3: YAML syntax error: mapping value is not allowed in this context (this key is indented deeper than the one above it: align them)") {
		t.Errorf("config with a misindented key: exit %d\n%s", r.code, r.stderr)
	}
}
