package workspace

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/termsafe"
)

// Fallback identity when the repository has none configured.
const (
	DefaultAuthorName  = "lemmings"
	DefaultAuthorEmail = "lemmings@localhost"
)

// Trailer keys lemmings puts on its commits, so that `git log` can tell
// which run and task made each one.
const (
	TrailerRun  = "Lemmings-Run"
	TrailerTask = "Lemmings-Task"
)

var trailerKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)

// commit is Commit without its observer.
func (w *Worktree) commit(ctx context.Context, message string, trailers map[string]string) (string, error) {
	// A message carries a model's or a supervisor's words: no control or
	// bidirectional character reaches git log's terminal (internal/termsafe).
	message = termsafe.String(message)
	if strings.TrimSpace(message) == "" {
		return "", errors.New("commit: empty message")
	}
	keys := make([]string, 0, len(trailers))
	for k := range trailers {
		if !trailerKey.MatchString(k) {
			return "", fmt.Errorf("commit: invalid trailer key %q: use letters, digits and '-'", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if _, err := w.git(ctx, nil, "add", "--all"); err != nil {
		return "", fmt.Errorf("commit: stage changes: %w", w.specialOr(ctx, err))
	}
	_, err := w.git(ctx, nil, "diff", "--cached", "--quiet")
	if err == nil {
		return "", ErrNothingToCommit
	}
	if exitCode(err) != 1 {
		return "", fmt.Errorf("commit: %w", err)
	}
	args := append(w.identityFlags(ctx), "commit", "--quiet", "--no-verify", "--cleanup=whitespace", "-m", message)
	for _, k := range keys {
		v := termsafe.Line(trailers[k])
		args = append(args, "--trailer", k+": "+v)
	}
	if _, err := w.git(ctx, nil, args...); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return w.Head(ctx)
}

// identityFlags supplies the fallback identity for whatever the repository
// (and the environment) leave unset.
func (w *Worktree) identityFlags(ctx context.Context) []string {
	// One call for both keys; exit 1 just means neither is set.
	out, _ := w.git(ctx, nil, "config", "--get-regexp", `^user\.(name|email)$`)
	var name, email bool
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch {
		case k == "user.name" && strings.TrimSpace(v) != "":
			name = true
		case k == "user.email" && strings.TrimSpace(v) != "":
			email = true
		}
	}
	var flags []string
	if !name {
		flags = append(flags, "-c", "user.name="+DefaultAuthorName)
	}
	if !email {
		flags = append(flags, "-c", "user.email="+DefaultAuthorEmail)
	}
	return flags
}

// ResetHard moves the worktree back to commit sha and deletes untracked
// files and directories, repositories nested in the work tree included (git
// clean -ffd: a commit never holds one, package gitsafe; left, it would keep
// the tree unclean on every resume). Ignored files are kept.
func (w *Worktree) ResetHard(ctx context.Context, sha string) error {
	if strings.TrimSpace(sha) == "" || strings.HasPrefix(sha, "-") {
		return fmt.Errorf("reset: invalid commit %q", sha)
	}
	if _, err := w.git(ctx, nil, "reset", "--hard", "--quiet", sha, "--"); err != nil {
		return fmt.Errorf("reset to %s: %w", sha, err)
	}
	if _, err := w.git(ctx, nil, "clean", "-ffd", "--quiet"); err != nil {
		return fmt.Errorf("reset to %s: clean: %w", sha, err)
	}
	return nil
}

// Rescue keeps the work tree as it is — HEAD and every uncommitted change,
// untracked files included, ignored files not — on a new branch named
// branch, or branch-2, branch-3… when that name is taken. The work tree,
// the index and HEAD are not touched. It returns the branch and its commit
// (HEAD itself when nothing is uncommitted).
func (w *Worktree) Rescue(ctx context.Context, branch, message string) (name, sha string, err error) {
	head, err := w.Head(ctx)
	if err != nil {
		return "", "", err
	}
	sha = head
	clean, err := w.IsClean(ctx)
	if err != nil {
		return "", "", err
	}
	if !clean {
		// What git cannot record (a FIFO where a file was) is not rescued.
		_, _ = w.RemoveSpecialFiles(ctx)
		err = w.withTempIndex(ctx, func(env []string) error {
			tree, err := w.git(ctx, env, "write-tree")
			if err != nil {
				return fmt.Errorf("write tree: %w", err)
			}
			args := append(w.identityFlags(ctx), "commit-tree", strings.TrimSpace(tree), "-p", head, "-m", message)
			out, err := w.git(ctx, nil, args...)
			sha = strings.TrimSpace(out)
			return err
		})
		if err != nil {
			return "", "", fmt.Errorf("rescue the uncommitted changes: %w", err)
		}
	}
	for n := 1; n <= 100; n++ {
		name = branch
		if n > 1 {
			name = fmt.Sprintf("%s-%d", branch, n)
		}
		// An empty old value: create the branch, never move one that exists.
		if _, err = w.git(ctx, nil, "update-ref", "refs/heads/"+name, sha, ""); err == nil {
			return name, sha, nil
		}
	}
	return "", "", fmt.Errorf("rescue branch %s: %w", branch, err)
}

// ResetSoft moves the branch back to commit sha and keeps every change
// since then in the work tree, so that the next Commit records them as one
// commit (e.g. squashing an attempt's work-in-progress commits).
func (w *Worktree) ResetSoft(ctx context.Context, sha string) error {
	if strings.TrimSpace(sha) == "" || strings.HasPrefix(sha, "-") {
		return fmt.Errorf("reset: invalid commit %q", sha)
	}
	if _, err := w.git(ctx, nil, "reset", "--soft", "--quiet", sha, "--"); err != nil {
		return fmt.Errorf("soft reset to %s: %w", sha, err)
	}
	return nil
}

// Commit is one commit of the run branch.
type Commit struct {
	SHA      string
	Subject  string
	Trailers map[string]string
}

// Log returns the commits after base up to HEAD, oldest first, with their
// subjects and trailers.
func (w *Worktree) Log(ctx context.Context, base string) ([]Commit, error) {
	if strings.TrimSpace(base) == "" || strings.HasPrefix(base, "-") {
		return nil, fmt.Errorf("log: invalid base %q", base)
	}
	out, err := w.git(ctx, nil, "log", "--reverse", "--no-color",
		"--format=%H%x1f%s%x1f%(trailers:only,unfold)%x1e", base+"..HEAD", "--")
	if err != nil {
		return nil, fmt.Errorf("log %s..HEAD: %w", base, err)
	}
	var commits []Commit
	for _, rec := range strings.Split(out, "\x1e") {
		rec = strings.TrimLeft(rec, "\n")
		if rec == "" {
			continue
		}
		f := strings.SplitN(rec, "\x1f", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("log: unexpected record %q", rec)
		}
		c := Commit{SHA: f[0], Subject: f[1], Trailers: map[string]string{}}
		for _, line := range strings.Split(f[2], "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) != "" {
				c.Trailers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		commits = append(commits, c)
	}
	return commits, nil
}
