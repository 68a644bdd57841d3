package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/sandbox"
)

// requireSandbox fails under CI and skips elsewhere when the machine cannot
// confine a gate.
// testBox is a sandbox of the default configuration for one test.
func testBox(t testing.TB) *sandbox.Box {
	t.Helper()
	b, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func requireSandbox(t *testing.T) {
	t.Helper()
	if l := sandbox.Probe(); l.Landlock == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox on this CI machine: %s", l.LandlockErr)
		}
		t.Skipf("no sandbox here: %s", l.LandlockErr)
	}
}

// plantHooks gives the repository every hook lemmings' git work could
// trigger; each appends its name to the returned marker file.
func plantHooks(t *testing.T, repo string) string {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "hooks-fired")
	hooks := filepath.Join(repo, ".git", "hooks")
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
		"post-merge", "post-rewrite", "pre-auto-gc", "reference-transaction", "post-index-change"} {
		script := "#!/bin/sh\necho " + h + " >> " + marker + "\n"
		if err := os.WriteFile(filepath.Join(hooks, h), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return marker
}

func TestLemmingsGitWorkRunsNoHook(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	marker := plantHooks(t, dir)
	// A control: the hooks do fire for a plain git command.
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "control")
	if b, _ := os.ReadFile(marker); !strings.Contains(string(b), "post-commit") {
		t.Fatalf("the planted hooks do not fire for git itself: %q", b)
	}
	os.Remove(marker)

	r, err := OpenRepo(bg(), dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.CreateWorktree(bg(), "hooks")
	if err != nil {
		t.Fatal(err)
	}
	start, _ := wt.Head(bg())
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "b\n", "new.txt": "n\n"})
	if _, _, err := wt.Changes(bg(), start); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit(bg(), "task", map[string]string{"Lemmings-Run": "hooks"}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "c\n"})
	if _, err := wt.Commit(bg(), "second", nil); err != nil {
		t.Fatal(err)
	}
	if err := wt.ResetSoft(bg(), start); err != nil {
		t.Fatal(err)
	}
	if err := wt.ResetHard(bg(), start); err != nil {
		t.Fatal(err)
	}
	if err := wt.Reattach(bg()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Dirty(bg()); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(bg(), "hooks"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.OpenWorktree(bg(), "hooks"); err != nil { // re-created: a checkout
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("hooks fired during lemmings' git work:\n%s", b)
	}
}

// Model-written code can rewrite the worktree's .git file (where no mount
// namespace binds it read-only) to point at a git directory of its own,
// whose configuration runs a command: lemmings' git work must not follow it.
func TestARewrittenGitPointerIsNotFollowed(t *testing.T) {
	t.Parallel()
	r, wt := newWorktree(t, map[string]string{"a.txt": "a\n"})
	start, _ := wt.Head(bg())
	fired := filepath.Join(t.TempDir(), "fsmonitor-fired")
	evil := filepath.Join(wt.Dir(), "evil-git")
	git(t, r.Root(), "init", "-q", "--bare", evil)
	cfg := "[core]\n\tbare = false\n\tfsmonitor = \"echo x >> " + fired + "; false\"\n"
	if err := os.WriteFile(filepath.Join(evil, "config"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt.Dir(), ".git"), []byte("gitdir: "+evil+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "b\n"})
	if _, files, err := wt.Changes(bg(), start); err != nil || !strings.Contains(strings.Join(files, ","), "a.txt") {
		t.Fatalf("changes %v, %v", files, err)
	}
	sha, err := wt.Commit(bg(), "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, r.Root(), "rev-parse", "refs/heads/"+wt.Branch()); got != sha {
		t.Errorf("the commit %s is not on the run's branch (%s)", sha, got)
	}
	if _, err := os.Stat(fired); err == nil {
		t.Error("the planted git directory's fsmonitor ran")
	}
	// Resuming finds the worktree from the repository's side too.
	if _, err := r.OpenWorktree(bg(), "run"); err != nil {
		t.Errorf("resume: %v", err)
	}
}

// A gate runs in the sandbox of the default configuration: its test file
// cannot write outside the worktree, plant a hook in the repository or read
// a key.
func TestAGateRunsConfinedByDefault(t *testing.T) {
	requireSandbox(t)
	t.Setenv("OPENROUTER_API_KEY", "sk-or-v1-gate-secret")
	r, wt := newWorktree(t, map[string]string{"a.txt": "a\n"})
	outside := filepath.Join(t.TempDir(), "escaped")
	hook := filepath.Join(r.commonDir, "hooks", "post-commit")
	res := RunGate(bg(), testBox(t), wt.Dir(), Gate{Name: "test", Command: "echo key=$OPENROUTER_API_KEY; echo x > " + outside +
		"; printf '#!/bin/sh\\n' > " + hook + "; echo inside > inside.txt; true"}, 0)
	if !res.Passed {
		t.Fatalf("%+v", res)
	}
	if strings.Contains(res.Output, "sk-or-v1") {
		t.Errorf("the gate read the key: %s", res.Output)
	}
	for _, p := range []string{outside, hook} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the gate wrote %s", p)
		}
	}
	if _, err := os.Stat(filepath.Join(wt.Dir(), "inside.txt")); err != nil {
		t.Errorf("the gate could not write its worktree: %v\n%s", err, res.Output)
	}
}

// A gate handed no sandbox is a wiring error it reports, not a run with a
// default sandbox nobody chose.
func TestAGateWithoutASandboxDoesNotRun(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	r := RunGate(bg(), nil, dir, Gate{Name: "test", Command: "touch " + marker}, 0)
	if r.Passed || !strings.Contains(r.Output, "wiring error") {
		t.Errorf("%+v", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the gate ran without a sandbox")
	}
	if got := CheckSyntax(bg(), nil, dir, []string{"a.go"}, map[string]string{".go": "touch " + marker}, 1024); !strings.Contains(got, "wiring error") {
		t.Errorf("a check without a sandbox: %q", got)
	}
}
