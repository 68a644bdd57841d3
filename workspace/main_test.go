package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/gitfixture"
)

// TestMain isolates git from the machine: no global or system config, no
// identity in the environment, so tests behave the same everywhere.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "workspace-test-home-")
	if err != nil {
		panic(err)
	}
	// The go command (run by gate tests) keeps its cache and settings where
	// they were before HOME moves, or every run would rebuild the standard library.
	keepGoDirs()
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
		"GIT_COMMITTER_EMAIL", "EMAIL", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES"} {
		os.Unsetenv(k)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

func keepGoDirs() {
	// The sandbox keeps its own caches under the user cache dir.
	if os.Getenv("XDG_CACHE_HOME") == "" {
		if d, err := os.UserCacheDir(); err == nil {
			os.Setenv("XDG_CACHE_HOME", d)
		}
	}
	if os.Getenv("GOCACHE") == "" {
		if d, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(d, "go-build"))
		}
	}
	if os.Getenv("GOENV") == "" {
		if d, err := os.UserConfigDir(); err == nil {
			os.Setenv("GOENV", filepath.Join(d, "go", "env"))
		}
	}
	if os.Getenv("GOPATH") == "" {
		if d, err := os.UserHomeDir(); err == nil {
			os.Setenv("GOPATH", filepath.Join(d, "go"))
		}
	}
}

// git runs a git command for a test's own setup, with the fixture's
// identity.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(gitfixture.Git(t, dir, args...))
}

// writeFiles creates files (path → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	gitfixture.Write(t, dir, files)
}

// newRepo makes a git repository with files committed on branch main.
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	return gitfixture.Repo(t, files)
}

func realDir(t testing.TB, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func bg() context.Context { return context.Background() }
