package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/eval"
)

//go:embed splice.py
var splicePy []byte

// dropped is a task that does not check: why, in a sentence.
type dropped struct{ reason string }

func (d *dropped) Error() string { return d.reason }

func drop(format string, args ...any) error { return &dropped{fmt.Sprintf(format, args...)} }

// builder builds task folders under Out.
type builder struct {
	Out         string
	Fetch       *fetcher
	TestTimeout time.Duration
	Langs       eval.Languages
}

// stampFile records what a task folder was built from.
const stampFile = ".stamp"

// built reports whether the task's folder is there, built from this spec.
func (b *builder) built(t spec) bool {
	data, err := os.ReadFile(filepath.Join(b.dir(t), stampFile))
	return err == nil && strings.TrimSpace(string(data)) == t.stamp()
}

func (b *builder) dir(t spec) string { return filepath.Join(b.Out, t.Language, t.ID) }

// testCommand is the command the eval runs for the task.
func (b *builder) testCommand(t spec) string {
	if t.TestCommand != "" {
		return t.TestCommand
	}
	return b.Langs[t.Language].Test
}

// build downloads the task's two releases, checks it and writes its folder.
// A *dropped error is a task that does not check; any other error is the
// machine's (a download, the disk).
func (b *builder) build(ctx context.Context, t spec) (err error) {
	base, err := b.Fetch.fetch(ctx, t.Language, t.Project, &t.Base)
	if err != nil {
		return err
	}
	target, err := b.Fetch.fetch(ctx, t.Language, t.Project, &t.Target)
	if err != nil {
		return err
	}
	for rel := range base {
		if t.omitted(rel) {
			delete(base, rel)
		}
	}
	tmp, err := os.MkdirTemp(b.Out, ".build-"+t.ID+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	folder := filepath.Join(tmp, "task")

	heldFiles := tree{}
	for _, h := range t.HeldBack {
		tf, ok := target[h.File]
		if !ok {
			return drop("held_back %s: not in %s %s", h.File, t.Project, t.Target.Version)
		}
		if len(h.Tests) == 0 {
			heldFiles[h.File] = tf
			continue
		}
		bf, ok := base[h.File]
		if !ok {
			return drop("held_back %s: not in the base, so it is held back whole: drop its tests list", h.File)
		}
		spliced, err := b.splice(ctx, t.Language, bf, tf, h.Tests, tmp)
		if err != nil {
			return drop("held_back %s: %v", h.File, err)
		}
		heldFiles[h.File] = spliced
	}
	oracle := tree{}
	for _, c := range t.Changed {
		data, ok := target[c]
		if !ok {
			return drop("changed %s: not in %s %s (a deleted file cannot be an oracle's)", c, t.Project, t.Target.Version)
		}
		if bytes.Equal(data, base[c]) {
			return drop("changed %s: the same in %s and %s", c, t.Base.Version, t.Target.Version)
		}
		oracle[c] = data
	}

	// The checks: the base's tests pass; the held-back tests fail on the
	// base and pass with the real change.
	check := filepath.Join(tmp, "check")
	if err := writeTree(check, base); err != nil {
		return err
	}
	cmd := b.testCommand(t)
	if ok, out := b.run(ctx, check, cmd); !ok {
		return drop("the base's own tests fail: %s", eval.KeyLine(out))
	}
	if err := writeTree(check, heldFiles); err != nil {
		return err
	}
	if ok, _ := b.run(ctx, check, cmd); ok {
		return drop("the held-back tests pass on the base: they do not test the change")
	}
	if err := writeTree(check, oracle); err != nil {
		return err
	}
	if ok, out := b.run(ctx, check, cmd); !ok {
		return drop("the held-back tests fail with the real change: %s", eval.KeyLine(out))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}

	// The folder: the base as a git bundle of one commit, held/, oracle/, task.json.
	if err := b.bundle(ctx, t, base, filepath.Join(tmp, "repo"), filepath.Join(folder, "base.bundle")); err != nil {
		return err
	}
	if err := writeTree(filepath.Join(folder, eval.HeldDir), heldFiles); err != nil {
		return err
	}
	if err := writeTree(filepath.Join(folder, eval.OracleDir), oracle); err != nil {
		return err
	}
	task := eval.Task{Project: t.Project, Base: t.Base.Version, Target: t.Target.Version, Language: t.Language, Kind: t.Kind,
		Remit: t.Remit, TestCommand: t.TestCommand, Repo: "base.bundle", HeldBack: sortedKeys(heldFiles), Changed: sortedKeys(oracle),
		TestFiles: t.TestFiles}
	data, err := json.MarshalIndent(task, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(folder, eval.TaskFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(folder, stampFile), []byte(t.stamp()+"\n"), 0o644); err != nil {
		return err
	}
	// Into place whole: a half-built task is never there.
	dst := b.dir(t)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(folder, dst)
}

// splice keeps names of the target's test file in the base's.
func (b *builder) splice(ctx context.Context, lang string, base, target []byte, names []string, tmp string) ([]byte, error) {
	if lang == "go" {
		return spliceGo(base, target, names)
	}
	dir, err := os.MkdirTemp(tmp, "splice")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"splice.py": splicePy, "base.py": base, "target.py": target}
	for n, d := range files {
		if err := os.WriteFile(filepath.Join(dir, n), d, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, "python3", append([]string{filepath.Join(dir, "splice.py"), filepath.Join(dir, "base.py"), filepath.Join(dir, "target.py")}, names...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// run runs the test command in dir, as the eval would (without its sandbox:
// these are the projects' own released tests).
func (b *builder) run(ctx context.Context, dir, command string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, b.TestTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	// No stale bytecode between two runs in one folder (a file replaced within
	// the second keeps its mtime).
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return false, string(out) + "\n(timed out)"
	}
	return err == nil, string(out)
}

var gitIdentity = []string{"-c", "user.name=realtasks", "-c", "user.email=realtasks@lemmings.invalid", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}

// bundle commits the base's files as one commit on main (a fixed date, so
// the same release gives the same commit) and bundles it.
func (b *builder) bundle(ctx context.Context, t spec, base tree, repo, out string) error {
	if err := writeTree(repo, base); err != nil {
		return err
	}
	date := "2000-01-01T00:00:00Z"
	env := append(os.Environ(), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	steps := [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A", "-f", "."},
		{"commit", "-q", "--no-verify", "-m", fmt.Sprintf("%s %s", t.Project, t.Base.Version)},
	}
	for _, s := range steps {
		if err := gitRun(ctx, repo, env, s...); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return gitRun(ctx, repo, env, "bundle", "create", "-q", out, "HEAD", "main")
}

func gitRun(ctx context.Context, dir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitIdentity...), args...)...)
	cmd.Dir = dir
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// writeTree writes files under dir, replacing what is there.
func writeTree(dir string, t tree) error {
	for rel, data := range t {
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return fmt.Errorf("%q is not a path inside the release", rel)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(t tree) []string {
	var keys []string
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isDropped reports whether err is a task that does not check.
func isDropped(err error) (string, bool) {
	var d *dropped
	if errors.As(err, &d) {
		return d.reason, true
	}
	return "", false
}
