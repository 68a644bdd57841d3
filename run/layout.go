package run

// The .lemmings folder: where it is, that it is lemmings' own, and who may
// read it.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/runstate"
)

// DataRoot returns the repository's .lemmings folder, creating it (0700)
// when missing and narrowing an existing one to 0700: it holds every run's
// state, prompts, logs and worktrees, which are the user's only.
// CheckDataDir's refusals apply.
func DataRoot(root string) (string, error) {
	dir := filepath.Join(root, DataDir)
	err := CheckDataDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		return dir, CheckDataDir(root) // created meanwhile by someone else: check again
	}
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		_ = os.Chmod(dir, 0o700) // best effort: a folder of another owner stays as it is
	}
	return dir, nil
}

// CheckDataDir refuses a .lemmings that is a symbolic link or not a
// directory: a symlink committed in the repository would move every run's
// data, prompts and worktrees wherever it points. The same holds for the
// links inside it (a committed .lemmings/worktrees, runs or checkpoints,
// added with git add -f): refused, not replaced, since lemmings never
// deletes what it did not create in the user's checkout. A missing
// .lemmings gives an error matching fs.ErrNotExist.
func CheckDataDir(root string) error {
	if err := checkDataDirItself(root); err != nil {
		return err
	}
	return checkDataDirLinks(filepath.Join(root, DataDir))
}

// dataSubdirs are the folders of .lemmings whose entries lemmings creates
// (a run's folder, its checkpoints, its worktree, the index's files).
var dataSubdirs = []string{RunsDir, CheckpointsDir, "worktrees", IndexDir, "mcp"}

// checkDataDirLinks refuses a symbolic link at the top of .lemmings or one
// level into the folders lemmings writes in.
func checkDataDirLinks(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // unreadable: the writes will say why
	}
	check := func(path string) error {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return nil
		}
		to, _ := os.Readlink(path)
		rel := DataDir + "/" + filepath.ToSlash(strings.TrimPrefix(path, dir+string(filepath.Separator)))
		return &LayoutError{Path: path, Problem: fmt.Sprintf("is a symbolic link (to %s): lemmings would write its runs, records or worktrees wherever it points", to),
			Fix: "remove it (git rm -r --cached " + rel + " if the repository commits it, then rm " + rel + "); lemmings creates its own folder there"}
	}
	for _, e := range entries {
		if err := check(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	for _, sub := range dataSubdirs {
		inner, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, e := range inner {
			if e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			if err := check(filepath.Join(dir, sub, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkDataDirItself(root string) error {
	dir := filepath.Join(root, DataDir)
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		to, _ := os.Readlink(dir)
		return &LayoutError{Path: dir, Problem: fmt.Sprintf("is a symbolic link (to %s)", to),
			Fix: "remove it (git rm --cached " + DataDir + " if it is committed, then rm " + DataDir + "); lemmings creates its own folder there, and will not follow a link out of the repository"}
	case !fi.IsDir():
		return &LayoutError{Path: dir, Problem: "is not a directory",
			Fix: "remove or rename that file (git rm --cached " + DataDir + " if it is committed); lemmings keeps its runs in a folder of that name"}
	}
	return nil
}

// LayoutError: lemmings' folder in the repository is not one it can use.
type LayoutError struct {
	Path, Problem, Fix string
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Path, e.Problem, e.Fix)
}

// Runs lists the stored runs as ListRuns does; runs that cannot be read are
// left out of the list and returned apart, with why, so that one damaged run
// never stops a command about another.
func Runs(ctx context.Context, app *graph.Reader[runstate.State]) ([]graph.RunInfo, map[string]error, error) {
	runs, err := app.ListRuns(ctx)
	if dr := (*graph.DamagedRunsError)(nil); errors.As(err, &dr) {
		return runs, dr.Runs, nil
	}
	return runs, nil, err
}

// DamagedAdvice says what to do about a run whose checkpoints cannot be
// read: its branch keeps its commits; its records can only be removed.
func DamagedAdvice(id string) string {
	return fmt.Sprintf("its checkpoints cannot be read; its commits are on branch lemmings/%s. lemmings clean %s --force --prune removes the run's worktree and records", id, id)
}

// learnSecrets teaches the run's redaction the values it must never show:
// lemmings' own keys from the environment, the literal keys of the
// configuration and the repository's .env secrets.
func learnSecrets(red *redact.Redactor, root string, cfg *config.Config) {
	red.LearnEnv(os.Environ())
	LearnConfigSecrets(red, cfg)
	red.LearnRepo(root)
}

// LearnConfigSecrets teaches red the secrets written in
// the configuration (config.Config.Secrets): an API key in the user file,
// echoed by a coding CLI, must not land in events, prompts or checkpoints.
func LearnConfigSecrets(red *redact.Redactor, cfg *config.Config) {
	if cfg == nil {
		return
	}
	for key, v := range cfg.Secrets() {
		red.Learn(key, v)
	}
}

// redactedMarks lists the [REDACTED:…] marks in text, for a warning.
func redactedMarks(text string) string {
	marks := reMark.FindAllString(text, -1)
	slices.Sort(marks)
	return strings.Join(slices.Compact(marks), ", ")
}

var reMark = regexp.MustCompile(`\[REDACTED:[^\]]*\]`)

// RemitError: the remit is over limits.remit_bytes. Size is 0 when only
// "more than Limit" is known (a stream read no further).
type RemitError struct{ Size, Limit int }

func (e *RemitError) Error() string {
	size := fmt.Sprintf("%d bytes", e.Size)
	if e.Size <= e.Limit {
		size = fmt.Sprintf("more than %d bytes", e.Limit)
	}
	return fmt.Sprintf("the remit is %s, over the limit of %d (limits.remit_bytes): it goes into every planning prompt. Put the details in a file of the repository and name it in the remit, or give a plan (--plan plan.yaml)", size, e.Limit)
}

// CheckRemit refuses a remit over limit bytes (≤ 0: no limit).
func CheckRemit(remit string, limit int) error {
	if limit > 0 && len(remit) > limit {
		return &RemitError{Size: len(remit), Limit: limit}
	}
	return nil
}
