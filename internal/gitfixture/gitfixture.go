// Package gitfixture makes the git repositories tests work in, one way for
// every package: branch main, a test identity on every commit, no system
// git configuration, hooks skipped on the fixture's own commits.
package gitfixture

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The identity of the fixture's commits.
const (
	Name  = "Test User"
	Email = "test@example.com"
)

// Git runs git in dir with the test identity and returns its output; a
// failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=" + Name, "-c", "user.email=" + Email}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// Init makes dir (created if missing) an empty repository on branch main.
func Init(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "-q", "-b", "main")
}

// Write creates files (slash path → content) under dir.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Commit stages everything in dir and commits it with message.
func Commit(t testing.TB, dir, message string) {
	t.Helper()
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
}

// Repo makes a repository in a new temporary directory (its path with
// symbolic links resolved, as git reports it) holding files in one commit,
// "initial", on branch main.
func Repo(t testing.TB, files map[string]string) string {
	t.Helper()
	return RepoIn(t, t.TempDir(), files)
}

// RepoIn is Repo in dir.
func RepoIn(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	Init(t, dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	Write(t, dir, files)
	Commit(t, dir, "initial")
	return dir
}
