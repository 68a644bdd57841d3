package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// The command line as a new user meets it (issue 15): each rough edge,
// through the built binary.

// expectExit runs the binary and checks its exit code and that stderr holds
// every want; it returns the result.
func expectExit(t *testing.T, c *cli, dir string, code int, args []string, wants ...string) result {
	t.Helper()
	r := c.run(dir, args...)
	if r.code != code {
		t.Errorf("lemmings %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, r.code, code, r.stdout, r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("lemmings %q: stderr lacks %q:\n%s", args, w, r.stderr)
		}
	}
	return r
}

// TestExitCodesFollowOneRule: whatever the user can fix by changing the
// command line or configuration exits 2 (README, "Exit codes").
func TestExitCodesFollowOneRule(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	repo := prepared(t)
	badPlan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(badPlan, []byte("milestones:\n  - goal: x\n    taks: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(t.TempDir(), "typo")
	cases := []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"nosuchcmd"}, exitUsage, []string{`unknown command "nosuchcmd"`}},
		{[]string{"staus"}, exitUsage, []string{"did you mean status?"}},
		{[]string{"knowledge", "nosuch"}, exitUsage, []string{`unknown command "nosuch" for lemmings knowledge`}},
		{[]string{"--nosuchflag"}, exitUsage, []string{"(see lemmings --help)"}},
		{[]string{"run", "--nosuchflag", "x"}, exitUsage, []string{"(see lemmings run --help)"}},
		{[]string{"run", "add", "a", "version", "flag"}, exitUsage, []string{`quote it, as in lemmings run "add a version flag"`}},
		{[]string{"run", "   "}, exitUsage, []string{"give a remit"}},
		{[]string{"run", ""}, exitUsage, []string{"give a remit"}},
		{[]string{"run", "--plan", badPlan}, exitUsage, []string{badPlan, "taks", "--plan-example"}},
		{[]string{"run", "--plan", filepath.Join(full, "missing.yaml")}, exitUsage, []string{"missing.yaml"}},
		{[]string{"search", ""}, exitUsage, []string{"give a query"}},
		{[]string{"search", "x", "--kind", "nope"}, exitUsage, []string{"--kind"}},
		{[]string{"demo", "--dir", full}, exitUsage, []string{full, "not empty"}},
		{[]string{"resume", "nosuchrun"}, exitUsage, []string{`no such run "nosuchrun"`}},
		{[]string{"status", "nosuchrun"}, exitUsage, []string{`no such run "nosuchrun"`}},
		{[]string{"report", "nosuchrun"}, exitUsage, []string{`no such run "nosuchrun"`}},
		{[]string{"clean"}, exitUsage, []string{"--finished"}},
		{[]string{"config", "--example", "--json"}, exitUsage, []string{"no JSON form"}},
		{[]string{"-C", typo, "search", "x"}, exitUsage, []string{typo, "no such directory"}},
		{[]string{"-C", typo, "knowledge", "init"}, exitUsage, []string{typo, "no such directory"}},
		{[]string{"--offline", "index", typo}, exitUsage, []string{typo, "no such directory"}},
		{[]string{"run", "do it"}, exitFailed, []string{"ollama serve"}}, // understood, could not start
		{[]string{"version"}, exitOK, nil},
	}
	for _, tc := range cases {
		r := expectExit(t, c, repo, tc.code, tc.args, tc.wants...)
		if strings.Contains(r.stderr, "lemmings lemmings") {
			t.Errorf("lemmings %q: %q", tc.args, r.stderr)
		}
	}
	if _, err := os.Stat(typo); !os.IsNotExist(err) {
		t.Errorf("a mistyped directory was created: %s", typo)
	}
	// The demo refuses a non-empty directory before printing its banner.
	if r := c.run(repo, "demo", "--dir", full); strings.Contains(r.stdout, "lemmings demo") {
		t.Errorf("banner printed before the error:\n%s", r.stdout)
	}
	if b := git(t, repo, "branch", "--list", "lemmings/*"); b != "" {
		t.Errorf("a refused command left a branch: %s", b)
	}
}

func TestRunPlanExampleIsAPlanTheRunAccepts(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	r := c.run(t.TempDir(), "run", "--plan-example")
	if r.code != 0 || !strings.Contains(r.stdout, "milestones:") || !strings.Contains(r.stdout, "acceptance_criteria:") {
		t.Fatalf("--plan-example: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	// The plan is accepted: the run gets as far as the model server.
	expectExit(t, c, prepared(t), exitFailed, []string{"run", "--plan", plan}, "ollama serve")
}

func TestVersionIsStampedFromTheBuild(t *testing.T) {
	c := newCLI(t)
	v := c.run(t.TempDir(), "version")
	long := c.run(t.TempDir(), "--version")
	if v.code != 0 || long.code != 0 || v.stdout != long.stdout || !strings.HasPrefix(v.stdout, "lemmings ") {
		t.Fatalf("version %d %q, --version %d %q %q", v.code, v.stdout, long.code, long.stdout, long.stderr)
	}
	if strings.TrimSpace(v.stdout) == "lemmings dev" || !strings.Contains(v.stdout, "go1.") {
		t.Errorf("version says nothing of the build: %q", v.stdout)
	}
	if j := c.run(t.TempDir(), "version", "--json"); !json.Valid([]byte(j.stdout)) || !strings.Contains(j.stdout, `"version"`) {
		t.Errorf("version --json: %q", j.stdout)
	}
	// It says what the toolchain stamped: the commit when the build had
	// version control information (go version -m reads it independently).
	bin := filepath.Join(t.TempDir(), "lemmings")
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, b := range []string{lemmingsBin(t), bin} {
		info, err := exec.Command("go", "version", "-m", b).Output()
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(b, "version").Output()
		if err != nil {
			t.Fatal(err)
		}
		if rev := regexp.MustCompile(`vcs\.revision=([0-9a-f]{12})`).FindSubmatch(info); rev != nil {
			if !strings.Contains(string(out), "commit "+string(rev[1])) {
				t.Errorf("version = %q, want the stamped commit %s", out, rev[1])
			}
		} else if !strings.Contains(string(out), "without version control information") {
			t.Errorf("version = %q for a build without VCS stamp", out)
		}
	}
}

// TestAFinishedDemoRunAsANewUserMeetsIt runs the demo once, keeping its
// repository, and goes through what a user does next.
func TestAFinishedDemoRunAsANewUserMeetsIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	c := newCLI(t)
	r := c.run(t.TempDir(), "demo", "-C", dir) // the global -C names the demo's directory
	if r.code != 0 {
		t.Fatalf("demo -C: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := regexp.MustCompile(`run (\S+): done — 4 tasks done`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no summary line:\n%s", r.stdout)
	}
	id, branch := m[1], "lemmings/"+m[1]
	for _, want := range []string{"inspect: cd " + dir, "lemmings report", "lemmings clean " + id, "git merge " + branch} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo summary lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "done (done)") {
		t.Errorf("summary says done twice:\n%s", r.stdout)
	}
	// Item 3: the failing assertion shows in the progress output.
	if !regexp.MustCompile(`QA failed t2: Gate "test" \(go test ./...\) failed, exit code 1\.\n\s+--- FAIL: TestTopWords[^\n]*\n\s+topwords_test.go:\d+: TopWords = `).MatchString(r.stdout) {
		t.Errorf("the QA failure hides its failing lines:\n%s", r.stdout)
	}

	t.Run("log counts from the run's start", func(t *testing.T) {
		out := c.run(dir, "log", id).stdout
		if !strings.HasPrefix(out, "[0:00:00] scope_agent\n") {
			t.Errorf("log starts %q", textutil.FirstLine(out))
		}
		if strings.Contains(out, "[ -") || strings.Contains(out, "milestone 0/0") {
			t.Errorf("negative times or empty counts in the log:\n%s", out)
		}
		if !strings.Contains(out, "topwords_test.go") {
			t.Errorf("the log's QA failure lacks the failing line")
		}
	})
	t.Run("report", func(t *testing.T) {
		rep := c.run(dir, "report").stdout
		for _, want := range []string{"## Failed attempts", "- **t2 attempt 1:** QA failed: Gate \"test\"", "TestTopWords", "**Finished:**", "**Took:**"} {
			if !strings.Contains(rep, want) {
				t.Errorf("report lacks %q:\n%s", want, rep)
			}
		}
		if n := len(regexp.MustCompile(`(?m)^\| d1 \| code_style \|`).FindAllString(rep, -1)); n != 1 {
			t.Errorf("the report lists d1 %d times", n)
		}
		var j map[string]any
		if out := c.run(dir, "report", "--json").stdout; json.Unmarshal([]byte(out), &j) != nil || !strings.Contains(j["markdown"].(string), "## Failed attempts") {
			t.Errorf("report --json: %q", textutil.Clip(out, 200))
		}
	})
	t.Run("directives once each", func(t *testing.T) {
		out := c.run(dir, "directives").stdout
		if n := strings.Count(out, "d1 "); n != 1 || !strings.Contains(out, "completed") || !strings.Contains(out, "task → completed") {
			t.Errorf("directives (d1 %d times):\n%s", n, out)
		}
	})
	t.Run("knowledge commit subject", func(t *testing.T) {
		subjects := git(t, dir, "log", "--format=%s", "main.."+branch)
		if !strings.Contains(subjects, "knowledge: established conventions/doc-comments.md, ") || strings.Contains(subjects, "established [") {
			t.Errorf("a commit subject prints a Go slice:\n%s", subjects)
		}
	})
	t.Run("status --json", func(t *testing.T) {
		var st map[string]any
		out := c.run(dir, "status", "--json").stdout
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("%v: %q", err, out)
		}
		if st["milestone"].(float64) > st["milestones"].(float64) || st["branch"] != branch || st["remit"] != demo.Remit || st["cost_usd"] == nil {
			t.Errorf("status --json: %s", out)
		}
	})
	t.Run("--json everywhere", func(t *testing.T) {
		for _, args := range [][]string{{"config"}, {"graph"}, {"version"}, {"runs"}, {"--offline", "index"}, {"knowledge", "list"}, {"doctor", "--offline"}} {
			r := c.run(dir, append(args, "--json")...)
			if strings.TrimSpace(r.stdout) == "" {
				continue
			}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if !json.Valid([]byte(line)) {
					t.Errorf("lemmings %q --json printed a line that is not JSON: %q", args, line)
					break
				}
			}
		}
	})
	t.Run("halt with nothing running", func(t *testing.T) {
		expectExit(t, c, dir, exitFailed, []string{"halt"}, "no run is running")
	})
	t.Run("clean", func(t *testing.T) {
		if out, err := exec.Command("git", "-C", dir, "branch", "-D", branch).CombinedOutput(); err == nil {
			t.Fatalf("the run's branch could be deleted while its worktree exists: %s", out)
		}
		expectExit(t, c, dir, exitOK, []string{"clean", "--finished"})
		if _, err := os.Stat(filepath.Join(dir, ".lemmings", "worktrees", id)); !os.IsNotExist(err) {
			t.Errorf("the worktree is still there")
		}
		git(t, dir, "checkout", "-q", branch)
		git(t, dir, "checkout", "-q", "main")
		if r := c.run(dir, "report", id); r.code != 0 {
			t.Errorf("clean without --prune lost the report: %s", r.stderr)
		}
		expectExit(t, c, dir, exitOK, []string{"clean", id, "--branches", "--prune"})
		if b := git(t, dir, "branch", "--list", branch); b != "" {
			t.Errorf("--branches kept %s", b)
		}
		if r := c.run(dir, "runs"); strings.Contains(r.stdout, id) {
			t.Errorf("--prune kept the run's records:\n%s", r.stdout)
		}
	})
}

// TestAnInterruptedDemoIsNotOfferedForResume: its scripted server died with
// it, and without --dir its repository is gone too.
func TestAnInterruptedDemoIsNotOfferedForResume(t *testing.T) {
	c := newCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, t.TempDir(), "demo", "--no-supervisors")
	var out syncBuffer // read while the process writes
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the repository exists and the run has begun.
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out.String(), "task t1"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the demo never started t1:\n%s", out.String())
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("interrupted demo: %v, want exit %d\n%s", err, exitInterrupted, out.String())
	}
	text := out.String()
	for _, want := range []string{"cannot be resumed", "run lemmings demo again", "removed", "--dir"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"lemmings resume", "report:", "git merge", "logs:"} {
		if strings.Contains(text, bad) {
			t.Errorf("summary points at %q, which the demo cannot offer:\n%s", bad, text)
		}
	}
}

// A plain demo's repository is a temporary copy removed as the demo ends:
// nothing it prints points into it (the report's path was deleted a second
// after it was shown).
func TestAPlainDemoPrintsNoPathIntoItsTemporaryRepository(t *testing.T) {
	c := newCLI(t)
	r := c.run(t.TempDir(), "demo", "--no-supervisors")
	if r.code != exitOK {
		t.Fatalf("demo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "lemmings-demo-") || strings.Contains(r.stdout, "report.md") {
		t.Errorf("the demo points into its temporary repository:\n%s", r.stdout)
	}
	for _, want := range []string{"repository: a temporary copy", "report written (in the temporary demo repository", "--dir DIR keeps it"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the demo does not say %q:\n%s", want, r.stdout)
		}
	}
}

// TestAnInterruptedRunSuggestsMergingOnlyFinishedWork: Ctrl-C during t2's
// second attempt leaves attempt 1's work-in-progress commit on the branch.
func TestAnInterruptedRunSuggestsMergingOnlyFinishedWork(t *testing.T) {
	srv := demo.NewServer(&demo.Script{ImplementorLatency: 150 * time.Millisecond})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	// Item 11: changes the run will not see are named at its start.
	if err := os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "run", demo.Remit, "--no-supervisors")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		matches, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl"))
		if len(matches) == 1 && secondAttemptStarted(t, matches[0], "t2") {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the run never reached t2's second attempt")
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("interrupted run: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "1 uncommitted change(s) (notes.txt)") {
		t.Errorf("no warning about the uncommitted file:\n%s", errb.String())
	}
	m := regexp.MustCompile(`branch:\s+(lemmings/\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no branch line:\n%s", out.String())
	}
	if head := git(t, repo, "log", "-1", "--format=%s", m[1]); !strings.HasPrefix(head, "lemmings wip:") {
		t.Skipf("the branch's last commit is %q, not work in progress: the interrupt came at another moment", head)
	}
	if strings.Contains(out.String(), "git merge "+m[1]) {
		t.Errorf("the summary suggests merging a branch that ends in work in progress:\n%s", out.String())
	}
	finished := git(t, repo, "log", "-1", "--format=%h", "--abbrev=10", "--grep=^lemmings wip:", "--invert-grep", m[1])
	if !strings.Contains(out.String(), "git merge "+finished) {
		t.Errorf("the summary does not offer the last finished commit %s:\n%s", finished, out.String())
	}
}

// secondAttemptStarted reports whether task's first attempt failed QA and
// the implementor is at work again.
func secondAttemptStarted(t *testing.T, path, task string) bool {
	failed := false
	for _, ev := range readEvents(t, path) {
		switch {
		case ev.Kind == graph.EventCustom && ev.Name == "qa" && strings.Contains(string(ev.Data), `"task":"`+task+`"`) && strings.Contains(string(ev.Data), `"passed":false`):
			failed = true
		case failed && ev.Kind == graph.EventCustom && ev.Name == "llm_call" && ev.Node == "implementor":
			return true
		}
	}
	return false
}

func TestSearchFindsTheRepositoryIndexAndNeverCreatesOne(t *testing.T) {
	repo := prepared(t)
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	sub := filepath.Join(repo, "cmd")
	// Unindexed: says how to index, writes nothing.
	expectExit(t, c, sub, exitFailed, []string{"search", "most frequent words"}, "lemmings index")
	if _, err := os.Stat(filepath.Join(repo, ".lemmings")); !os.IsNotExist(err) {
		t.Errorf("an unindexed search created .lemmings: %v", err)
	}
	expectExit(t, c, repo, exitOK, []string{"--offline", "index"})
	// From a subdirectory, with Ollama down: the offline index answers at
	// once, without asking the server (no warning about it).
	s := expectExit(t, c, sub, exitOK, []string{"search", "mean word length", "--json"})
	if !strings.Contains(s.stdout, `"path":"textstats.go"`) || strings.Contains(s.stderr, "embedding model") || strings.Contains(s.stderr, "OpenRouter") {
		t.Errorf("search from a subdirectory:\n%s\n%s", s.stdout, s.stderr)
	}
	if _, err := os.Stat(filepath.Join(sub, ".lemmings")); !os.IsNotExist(err) {
		t.Errorf("search left a stray .lemmings in the subdirectory")
	}
}

func TestSearchOfAModelIndexWithTheServerDownGoesByKeywordsAtOnce(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	repo := prepared(t)
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	expectExit(t, c, repo, exitOK, []string{"index"})
	manifest, _ := os.ReadFile(filepath.Join(repo, ".lemmings", "index", "manifest.json"))
	if !strings.Contains(string(manifest), demo.EmbeddingModel) {
		t.Fatalf("the index was not built by the model: %s", manifest)
	}
	srv.Close()
	// A backoff of 20 s per retry: a search that retried would take that long.
	c.config(strings.Replace(scriptedConfig(srv.URL(), "blocking"), "initial_backoff: 10ms", "initial_backoff: 20s", 1))
	start := time.Now()
	s := expectExit(t, c, repo, exitOK, []string{"search", "mean word length", "--json"}, "searching by keywords only")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("search took %s with the server down: it waited for retries", took)
	}
	if !strings.Contains(s.stdout, `"path":"textstats.go"`) {
		t.Errorf("keyword search found nothing:\n%s", s.stdout)
	}
	after, _ := os.ReadFile(filepath.Join(repo, ".lemmings", "index", "manifest.json"))
	if string(after) != string(manifest) {
		t.Errorf("the search rebuilt the index:\n%s", after)
	}
	// index too knows at once that the server is down.
	start = time.Now()
	expectExit(t, c, repo, exitOK, []string{"index"}, "using the offline embedder")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("index took %s with the server down: it waited for retries", took)
	}
}

func TestTheSupervisorKeyWarningOnlyWhereSupervisorsRun(t *testing.T) {
	repo := prepared(t)
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	for _, args := range [][]string{{"knowledge", "init"}, {"knowledge", "list"}, {"config", "--example"}, {"config"}, {"--offline", "index"}, {"search", "words"}} {
		if r := c.run(repo, args...); strings.Contains(r.stderr, "OpenRouter") {
			t.Errorf("lemmings %q warns about the OpenRouter key:\n%s", args, r.stderr)
		}
	}
	// Ollama down: the run fails on that, and nothing about the key comes first.
	r := c.run(repo, "run", "do it")
	if strings.Contains(r.stderr, "OpenRouter") || !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("run with Ollama down:\n%s", r.stderr)
	}
	// A command line that fails says only why.
	if r := c.run(repo, "run", "--remit-file", "missing.txt"); r.code != exitUsage || strings.Contains(r.stderr, "OpenRouter") {
		t.Errorf("run --remit-file missing.txt: exit %d\n%s", r.code, r.stderr)
	}
	// A run that starts says it once, with the way to turn them off.
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	up := newCLI(t)
	up.config(strings.Replace(scriptedConfig(srv.URL(), "blocking"), "  api_key: test-key\n", "", 1))
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, onePlan)
	r = up.run(repo, "run", demo.Remit, "--plan", plan)
	if strings.Count(r.stderr, "supervisors off for this run") != 1 || strings.Contains(r.stderr, "supervisors are enabled but") || !strings.Contains(r.stderr, "no OpenRouter API key") || !strings.Contains(r.stderr, "--no-supervisors") {
		t.Errorf("run's warning about the key:\n%s", r.stderr)
	}
	// Item 16: right after init, list says what to do with the templates.
	if l := c.run(repo, "knowledge", "list"); strings.Contains(l.stdout, "knowledge init") || !strings.Contains(l.stdout, "_example.md") {
		t.Errorf("knowledge list after init:\n%s", l.stdout)
	}
}

func TestDoctorSaysEachCauseOnce(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	r := c.run(prepared(t), "doctor")
	if r.code != exitFailed {
		t.Errorf("doctor with Ollama down: exit %d", r.code)
	}
	if n := strings.Count(r.stdout, "connection refused"); n != 1 {
		t.Errorf("connection refused said %d times:\n%s", n, r.stdout)
	}
	if n := strings.Count(r.stdout+r.stderr, "OpenRouter"); n != 1 {
		t.Errorf("the supervisor warning said %d times:\n%s\n%s", n, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "set by env OLLAMA_HOST") || strings.Contains(r.stdout, "(or set OLLAMA_HOST)") {
		t.Errorf("the fix ignores that OLLAMA_HOST is set:\n%s", r.stdout)
	}
	notGit := c.run(t.TempDir(), "doctor")
	if n := strings.Count(notGit.stdout, "git init"); n != 1 {
		t.Errorf("git init said %d times:\n%s", n, notGit.stdout)
	}
}

// doctor says who plans when roles.planner names a model: it, a warning when
// it cannot answer (the run then plans on the primary), or that a cloud
// planner is off with the supervisors.
func TestDoctorChecksThePlannerRole(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	dir := prepared(t)
	c := newCLI(t)
	planner := func(role string, args ...string) map[string]any {
		t.Helper()
		c.config(strings.Replace(scriptedConfig(srv.URL(), "blocking"), "roles:\n", "roles:\n  planner: "+role+"\n", 1))
		r := c.run(dir, append([]string{"--json", "doctor"}, args...)...)
		for _, l := range jsonLines(t, r.stdout) {
			if l["check"] == "planner" {
				return l
			}
		}
		t.Fatalf("no planner line with planner %s:\n%s\n%s", role, r.stdout, r.stderr)
		return nil
	}
	if l := planner("{provider: ollama, model: " + demo.PrimaryModel + "}"); l["status"] != "ok" || !strings.Contains(fmt.Sprint(l["detail"]), demo.PrimaryModel+" via ollama plans") {
		t.Errorf("a local planner the server has: %v", l)
	}
	if l := planner("{provider: ollama, model: no-such-planner}"); l["status"] != "warn" || !strings.Contains(fmt.Sprint(l["detail"]), "the primary plans") ||
		!strings.Contains(fmt.Sprint(l["detail"], l["fix"]), "no-such-planner") {
		t.Errorf("a local planner the server lacks: %v", l)
	}
	if l := planner("{provider: openrouter, model: some/cloud-model}", "--no-supervisors"); l["status"] != "ok" || !strings.Contains(fmt.Sprint(l["detail"]), "off while supervisors are off") {
		t.Errorf("a cloud planner with the supervisors off: %v", l)
	}
}
