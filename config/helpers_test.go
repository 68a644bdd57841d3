package config

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fixture describes every source of one Load.
type fixture struct {
	user, project, projectAlt string // file contents; "" = no file
	env                       map[string]string
	flags                     map[string]string
	noEnviron                 bool // give Env without Environ
}

type loaded struct {
	cfg     *Config
	src     *Sources
	err     error
	userDir string
	root    string
}

func (f fixture) load(t *testing.T) loaded {
	t.Helper()
	root, userDir := t.TempDir(), t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if content == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(userDir, "config.yaml"), f.user)
	write(filepath.Join(root, "lemmings.yaml"), f.project)
	write(filepath.Join(root, ".lemmings", "config.yaml"), f.projectAlt)
	opts := LoadOptions{
		RepoRoot:      root,
		UserConfigDir: userDir,
		Env:           func(k string) string { return f.env[k] },
		Flags:         f.flags,
		GitIgnored:    func(string) (bool, error) { return false, nil },
	}
	if !f.noEnviron {
		opts.Environ = func() []string {
			var out []string
			for k, v := range f.env {
				out = append(out, k+"="+v)
			}
			sort.Strings(out)
			return out
		}
	}
	c, s, err := Load(opts)
	return loaded{cfg: c, src: s, err: err, userDir: userDir, root: root}
}

// mustLoad fails the test on any problem.
func (f fixture) mustLoad(t *testing.T) loaded {
	t.Helper()
	l := f.load(t)
	if l.err != nil {
		t.Fatalf("Load: %v", l.err)
	}
	return l
}

// problemsOf returns the problems of a Load error, failing if it is not an *Error.
func problemsOf(t *testing.T, err error) []Problem {
	t.Helper()
	if err == nil {
		t.Fatal("Load returned no error, want problems")
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error is %T (%v), want *config.Error", err, err)
	}
	return ce.Problems
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(path string) error { return os.MkdirAll(path, 0o755) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func writeFileErr(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
