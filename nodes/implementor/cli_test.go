package implementor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/codingcli"
	"github.com/lemmings-dev/lemmings/workspace"
)

func TestACustomCommandWithoutPromptGetsItOnStdinAndPassEnvAddsToThePresets(t *testing.T) {
	t.Parallel()
	c := &CLISettings{Command: []string{"my-cli", "--json"}, PassEnv: []string{"MY_KEY"}, Env: map[string]string{"A": "${HOME}"}}
	p, env, err := c.Worker(func(k string) (string, bool) { return "/home/x", k == "HOME" })
	if err != nil {
		t.Fatal(err)
	}
	if !p.Stdin || p.Name != "my-cli" || p.Format != codingcli.FormatText || !slices.Contains(p.Env, "MY_KEY") || env["A"] != "/home/x" {
		t.Errorf("preset %+v env %v", p, env)
	}
	c = &CLISettings{Preset: "no-such-cli"}
	var ce *CLIError
	if _, _, err := c.Worker(os.LookupEnv); err == nil || !strings.Contains(err.Error(), "no preset no-such-cli") {
		t.Errorf("unknown preset: %v", err)
	} else if !errors.As(err, &ce) || !ce.Config {
		t.Errorf("an unknown preset is the configuration's fault: %#v", err)
	}
}

// The check outside the work tree sees refs, the user's HEAD and files in
// the user's checkout, and not what happens inside the work tree.
func TestTheOutsideCheckSeesRefsTheUsersCheckoutAndSiblings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	run := func(d string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t.invalid"}, args...)...)
		cmd.Dir = d
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "-m", "first")
	repo, err := workspace.OpenRepo(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.CreateWorktree(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	before, err := snapshotOutside(ctx, repo, wt, ".lemmings")
	if err != nil {
		t.Fatal(err)
	}
	// Inside the work tree, on its own branch: nothing outside.
	if err := os.WriteFile(filepath.Join(wt.Dir(), "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(wt.Dir(), "add", "-A")
	run(wt.Dir(), "commit", "-q", "-m", "inside")
	if got := before.changes(ctx, repo, wt); len(got) != 0 {
		t.Fatalf("changes inside the work tree counted as outside: %v", got)
	}
	run(wt.Dir(), "tag", "v1")
	run(wt.Dir(), "stash", "list") // reading is fine
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(before.changes(ctx, repo, wt), "\n")
	for _, want := range []string{"new ref refs/tags/v1", "new file in your checkout a.txt"} {
		if !strings.Contains(got, want) {
			t.Errorf("changes lack %q:\n%s", want, got)
		}
	}
	run(dir, "commit", "-q", "-am", "user commits")
	if got := strings.Join(before.changes(ctx, repo, wt), "\n"); !strings.Contains(got, "your checkout's HEAD moved") || !strings.Contains(got, "changed ref refs/heads/main") {
		t.Errorf("a moved HEAD is not seen:\n%s", got)
	}
}
