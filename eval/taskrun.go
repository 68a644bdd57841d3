package eval

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Localisation says where a task's first attempt changed the repository,
// against where the real change did.
type Localisation struct {
	// Changed are the files the first attempt changed (its commits against
	// the base), Real those the real change changed outside the tests.
	Changed []string `json:"changed"`
	Real    []string `json:"real"`
	// Hit: the first attempt changed at least one of the real files; All:
	// every one of them.
	Hit bool `json:"hit"`
	All bool `json:"all"`
}

// task runs one task from real history: the solver gets the remit alone on
// the base repository; the judge adds the held-back tests (with the test
// files the solver edited put back as they were) and runs the repository's
// test command. A second attempt, when allowed, is made only when the
// repository's own tests (without the held-back ones) fail, and is shown
// their output alone: the held-back tests never reach the solver.
func (e *evalRun) task(ctx context.Context, ex Exercise, lang Language, start time.Time) (r Result, ok bool) {
	r = Result{ID: ex.ID, Language: ex.Language, Slug: ex.Slug, Dir: ex.Dir}
	finish := func(status, reason string) (Result, bool) {
		r.Status, r.Reason = status, reason
		r.WallSeconds = time.Since(start).Seconds()
		r.Finished = time.Now().UTC()
		return r, true
	}
	work := filepath.Join(e.o.Out, WorkDir, filepath.FromSlash(ex.ID))
	repo, testDir := filepath.Join(work, "repo"), filepath.Join(work, "test")
	r.WorkDir = work
	base, err := prepareTaskRepo(ctx, ex, repo)
	if err != nil {
		if ctx.Err() != nil {
			return r, false
		}
		return finish(StatusError, "prepare the task: "+err.Error())
	}
	feedback := ""
	var last testOutcome
	for n := 1; n <= e.o.MaxAttempts; n++ {
		a := Attempt{Exercise: ex, Language: lang, Number: n, Repo: repo, Remit: TaskRemit(ex, lang, feedback), Feedback: feedback}
		out, err := e.o.Solver.Solve(ctx, a)
		if ctx.Err() != nil {
			return r, false
		}
		r.Attempts = n
		if err != nil {
			return finish(StatusError, fmt.Sprintf("attempt %d could not run: %v", n, err))
		}
		r.Runs = append(r.Runs, out)
		r.PromptTokens += out.PromptTokens
		r.PromptCached += out.PromptCached
		r.CompletionTokens += out.CompletionTokens
		r.CostUSD += out.CostUSD
		r.Calls += out.Calls
		r.ModelSeconds += out.ModelSeconds
		if n == 1 {
			if r.Localisation, err = localise(ctx, ex.Task, repo, base); err != nil {
				return finish(StatusError, "read what the first attempt changed: "+err.Error())
			}
		}
		last, err = judgeTask(ctx, e.o.Sandbox, ex, lang, repo, base, testDir, true, e.o.TestTimeout)
		if ctx.Err() != nil {
			return r, false
		}
		if err != nil {
			return finish(StatusError, "run the tests: "+err.Error())
		}
		r.TestSeconds += last.Duration.Seconds()
		if last.Passed {
			r.PassedAttempt, r.Pass1, r.Pass2 = n, n == 1, true
			r.TestOutput = ""
			if !e.o.KeepWork {
				_ = os.RemoveAll(work)
				r.WorkDir = ""
			}
			return finish(StatusPassed, "")
		}
		r.TestOutput = last.Output
		if e.oracle() || n == e.o.MaxAttempts {
			break
		}
		// What a user's repository would say: its own tests, without the held-back ones.
		own, err := judgeTask(ctx, e.o.Sandbox, ex, lang, repo, base, testDir+"-own", false, e.o.TestTimeout)
		_ = os.RemoveAll(testDir + "-own")
		if ctx.Err() != nil {
			return r, false
		}
		if err != nil {
			return finish(StatusError, "run the repository's tests: "+err.Error())
		}
		r.TestSeconds += own.Duration.Seconds()
		if own.Passed {
			break // nothing the repository can tell a second attempt
		}
		feedback = taskFeedback(own.Output, testDir+"-own")
	}
	reason := "held-back tests failed: " + KeyLine(last.Output)
	if lr := r.Runs[len(r.Runs)-1]; lr.Error != "" {
		reason += "; solver: " + textutil.FirstLine(lr.Error)
	} else if lr.Outcome != "" && lr.Outcome != "done" {
		reason += "; lemmings run " + lr.Outcome
		if lr.StopReason != "" {
			reason += " (" + textutil.FirstLine(lr.StopReason) + ")"
		}
	}
	if e.oracle() {
		r.Toolchain = true
		r.Fix = "the real change fails the held-back tests: check the " + lang.Name + " toolchain (`" + lang.Test + "` in " + testDir + ") or build the task again (make realtasks)"
	}
	return finish(StatusFailed, reason)
}

// taskFeedback is what a second attempt is told of the repository's failing
// tests: what a user would paste, the failures, not a 90 KB log whose every
// traceback names a file (a remit naming five files is planned as the full
// pipeline's, and its prompt outgrew a 4k window).
func taskFeedback(output, dir string) string {
	return workspace.SummarizeGateOutput(withoutDir(output, dir), "", taskFeedbackBytes)
}

// taskFeedbackBytes bounds taskFeedback.
const taskFeedbackBytes = 3 * workspace.DefaultSummaryBytes

// TaskRemit is what the solver is asked on a task: the remit alone, and on
// a second attempt the repository's own failing tests.
func TaskRemit(ex Exercise, lang Language, feedback string) string {
	remit := strings.TrimSpace(ex.Task.Remit) + "\n"
	if feedback == "" {
		return remit
	}
	return remit + fmt.Sprintf("\n# The repository's tests fail after the previous attempt\n\n`%s` failed:\n\n```\n%s\n```\n\nFix the code so that they pass; don't change the tests.\n",
		lang.Test, strings.TrimSpace(feedback))
}

// prepareTaskRepo makes dir the task's base repository on branch main and
// returns the base commit.
func prepareTaskRepo(ctx context.Context, ex Exercise, dir string) (string, error) {
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	src := filepath.Join(ex.Dir, filepath.FromSlash(ex.Task.Repo))
	switch repoKind(ex.Task.Repo) {
	case "bundle":
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return "", err
		}
		if _, err := git(ctx, filepath.Dir(dir), "clone", "-q", "--no-hardlinks", "-b", "main", src, dir); err != nil {
			return "", fmt.Errorf("%s: %w (a task's bundle holds branch main)", src, err)
		}
		if _, err := git(ctx, dir, "remote", "remove", "origin"); err != nil {
			return "", err
		}
	default:
		if err := extractTar(src, dir); err != nil {
			return "", fmt.Errorf("%s: %w", src, err)
		}
		if _, err := git(ctx, dir, "init", "-q", "-b", "main"); err != nil {
			return "", err
		}
		if err := commitAll(ctx, dir, ex.Task.Project+" "+ex.Task.Base); err != nil {
			return "", err
		}
	}
	out, err := git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// extractTar writes a tar archive's regular files and folders under dir.
func extractTar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if repoKind(archive) == "tgz" {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(filepath.FromSlash(h.Name)) {
			return fmt.Errorf("%q is not a path inside the archive", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode&0o755|0o644))
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

// localise compares the files the solver's commits changed with the real change's.
func localise(ctx context.Context, t *Task, repo, base string) (*Localisation, error) {
	out, err := git(ctx, repo, "diff", "--name-only", "-z", base, "HEAD")
	if err != nil {
		return nil, err
	}
	l := &Localisation{Changed: []string{}, Real: append([]string{}, t.Changed...)}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" && !strings.HasPrefix(p, ".lemmings/") {
			l.Changed = append(l.Changed, p)
		}
	}
	sort.Strings(l.Changed)
	sort.Strings(l.Real)
	hits := 0
	for _, real := range l.Real {
		if contains(l.Changed, real) {
			hits++
		}
	}
	l.Hit, l.All = hits > 0, hits == len(l.Real)
	return l, nil
}

// judgeTask copies the solver's answer (the repository's HEAD) to dir, puts
// the base's test files back as they were, adds the held-back tests when
// held is true, and runs the task's test command in the sandbox.
func judgeTask(ctx context.Context, box *sandbox.Box, ex Exercise, lang Language, repo, base, dir string, held bool, timeout time.Duration) (testOutcome, error) {
	if err := os.RemoveAll(dir); err != nil {
		return testOutcome{}, err
	}
	if err := exportHead(ctx, repo, dir); err != nil {
		return testOutcome{}, err
	}
	if err := restoreBaseTests(ctx, ex.Task, repo, base, dir); err != nil {
		return testOutcome{}, fmt.Errorf("put the tests back: %w", err)
	}
	if held {
		for _, rel := range ex.Task.HeldBack {
			dst := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return testOutcome{}, err
			}
			if err := workspace.CopyFile(filepath.Join(ex.Dir, HeldDir, filepath.FromSlash(rel)), dst); err != nil {
				return testOutcome{}, fmt.Errorf("add the held-back test %s: %w", rel, err)
			}
		}
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

// restoreBaseTests writes every test file of the base commit into dir as
// the base has it: what the solver changed or deleted there never counts.
// Test files the solver added stay (they are its own).
func restoreBaseTests(ctx context.Context, t *Task, repo, base, dir string) error {
	out, err := git(ctx, repo, "ls-tree", "-r", "-z", "--name-only", base)
	if err != nil {
		return err
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" && t.IsTestFile(p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	// One git process for all of them: a testdata folder can hold hundreds.
	cmd := gitsafe.Command(ctx, repo, "cat-file", "--batch")
	var in strings.Builder
	for _, p := range paths {
		in.WriteString(base + ":" + p + "\n")
	}
	cmd.Stdin = strings.NewReader(in.String())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	br := bufio.NewReader(stdout)
	readErr := func() error {
		for _, p := range paths {
			header, err := br.ReadString('\n')
			if err != nil {
				return fmt.Errorf("git cat-file: %w", err)
			}
			f := strings.Fields(header)
			if len(f) != 3 || f[1] != "blob" {
				return fmt.Errorf("git cat-file %s: %s", p, strings.TrimSpace(header))
			}
			size, err := strconv.Atoi(f[2])
			if err != nil {
				return err
			}
			data := make([]byte, size+1) // the content and its newline
			if _, err := io.ReadFull(br, data); err != nil {
				return err
			}
			dst := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			_ = os.Remove(dst) // a solver's symlink or read-only file in its place
			if err := os.WriteFile(dst, data[:size], 0o644); err != nil {
				return err
			}
		}
		return nil
	}()
	waitErr := cmd.Wait()
	if readErr != nil {
		return readErr
	}
	return waitErr
}
