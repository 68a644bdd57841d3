package eval

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Git identity of the commits the eval itself makes.
var gitIdentity = []string{"-c", "user.name=lemmings eval", "-c", "user.email=eval@lemmings.invalid", "-c", "commit.gpgsign=false"}

// git runs git in dir, with no hook (the exercise's repository is the
// solver's work), and returns its combined output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := gitsafe.Command(ctx, dir, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// commitAll commits every change in dir (the eval's own commits).
func commitAll(ctx context.Context, dir, message string) error {
	if _, err := git(ctx, dir, "add", "-A"); err != nil {
		return err
	}
	args := append(append([]string{}, gitIdentity...), "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
	_, err := git(ctx, dir, args...)
	return err
}

// prepareRepo copies the exercise into dir, a new git repository, without
// .meta/ (the reference solution and the file lists stay out of the solver's
// sight), with skipped tests enabled.
func prepareRepo(ctx context.Context, ex Exercise, lang Language, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	skip := map[string]bool{".meta": true, ".git": true, ".lemmings": true, "node_modules": true, "target": true}
	for _, e := range ex.Example {
		skip[filepath.Clean(filepath.FromSlash(e))] = true
	}
	if err := copyTree(ex.Dir, dir, skip); err != nil {
		return fmt.Errorf("copy %s: %w", ex.Dir, err)
	}
	if err := restoreTests(ex, lang, dir); err != nil {
		return err
	}
	if _, err := git(ctx, dir, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	return commitAll(ctx, dir, ex.ID+": exercise as given")
}

// restoreTests writes the exercise's test and editor files from the
// original into dir, so whatever the solver did to them never counts.
func restoreTests(ex Exercise, lang Language, dir string) error {
	for _, rel := range append(append([]string{}, ex.Test...), ex.Editor...) {
		data, err := os.ReadFile(filepath.Join(ex.Dir, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("restore %s: %w", rel, err)
		}
		if lang.Unskip != nil && contains(ex.Test, rel) {
			data = []byte(lang.Unskip(string(data)))
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("restore %s: %w", rel, err)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// copyTree copies the regular files and folders of src into dst; skip holds
// relative paths (and base names of folders) left out.
func copyTree(src, dst string, skip map[string]bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel != "." && (skip[rel] || (d.IsDir() && skip[d.Name()])) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return workspace.CopyFile(p, target)
		}
		return nil // symlinks and devices are not part of an exercise
	})
}

// testOutcome is one run of an exercise's tests.
type testOutcome struct {
	Passed   bool
	Output   string
	Duration time.Duration
	Command  string
}

// maxTestOutput is the tail of the test output kept for the report and
// given to the second attempt.
const maxTestOutput = 8 << 10

// runTests copies the solver's work (the repository's HEAD) to a fresh
// folder, restores the tests from the original and runs the test command
// confined by box (nil: the default sandbox), as a gate is.
func runTests(ctx context.Context, box *sandbox.Box, ex Exercise, lang Language, repo, dir string, timeout time.Duration) (testOutcome, error) {
	if err := os.RemoveAll(dir); err != nil {
		return testOutcome{}, err
	}
	if err := exportHead(ctx, repo, dir); err != nil {
		return testOutcome{}, err
	}
	if err := restoreTests(ex, lang, dir); err != nil {
		return testOutcome{}, err
	}
	r := workspace.RunGate(ctx, box, dir, workspace.Gate{Name: "test", Command: lang.Test, Timeout: timeout}, maxTestOutput)
	if r.Canceled || ctx.Err() != nil {
		return testOutcome{}, context.Cause(ctx)
	}
	out := r.Output
	if r.TimedOut {
		out += fmt.Sprintf("\n(the tests were stopped after %s)", timeout)
	}
	return testOutcome{Passed: r.Passed, Output: out, Duration: r.Duration, Command: lang.Test}, nil
}

// exportHead writes the files of repo's HEAD commit into dir.
func exportHead(ctx context.Context, repo, dir string) error {
	out, err := git(ctx, repo, "ls-files", "-z")
	if err != nil {
		return err
	}
	for _, rel := range strings.Split(out, "\x00") {
		if rel == "" {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := workspace.CopyFile(filepath.Join(repo, filepath.FromSlash(rel)), dst); err != nil {
			return fmt.Errorf("export %s: %w", rel, err)
		}
	}
	return nil
}
