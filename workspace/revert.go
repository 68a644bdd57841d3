package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrRevertConflict: a commit cannot be reverted cleanly, because later
// commits changed the same lines. The work tree is left as it was.
var ErrRevertConflict = errors.New("the revert conflicts with later commits")

// IsAncestor reports whether commit sha is on the worktree's branch (an
// ancestor of HEAD, or HEAD itself).
func (w *Worktree) IsAncestor(ctx context.Context, sha string) (bool, error) {
	if strings.TrimSpace(sha) == "" || strings.HasPrefix(sha, "-") {
		return false, fmt.Errorf("ancestor: invalid commit %q", sha)
	}
	_, err := w.git(ctx, nil, "merge-base", "--is-ancestor", sha, "HEAD")
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, fmt.Errorf("is %s on the branch: %w", sha, err)
}

// Revert commits the inverse of commit sha on top of HEAD, with message and
// trailers (as Commit), and returns the new commit's hash. The work tree
// must be clean. A revert that conflicts is abandoned, the work tree put
// back at HEAD, and the error matches ErrRevertConflict and names the files.
func (w *Worktree) Revert(ctx context.Context, sha, message string, trailers map[string]string) (string, error) {
	if strings.TrimSpace(sha) == "" || strings.HasPrefix(sha, "-") {
		return "", fmt.Errorf("revert: invalid commit %q", sha)
	}
	head, err := w.Head(ctx)
	if err != nil {
		return "", err
	}
	if clean, err := w.IsClean(ctx); err != nil {
		return "", err
	} else if !clean {
		return "", errors.New("revert: the work tree has uncommitted changes")
	}
	if _, err := w.git(ctx, nil, "revert", "--no-commit", "--no-edit", sha); err != nil {
		files, _ := w.git(ctx, nil, "diff", "--name-only", "--diff-filter=U")
		_ = w.ResetHard(context.WithoutCancel(ctx), head)
		_, _ = w.git(context.WithoutCancel(ctx), nil, "revert", "--quit")
		if f := strings.Fields(files); len(f) > 0 {
			return "", fmt.Errorf("revert %s: %w (in %s)", short(sha), ErrRevertConflict, strings.Join(f, ", "))
		}
		return "", fmt.Errorf("revert %s: %w", short(sha), err)
	}
	_, _ = w.git(ctx, nil, "revert", "--quit") // no sequencer state left for the next commit to trip on
	return w.Commit(ctx, message, trailers)
}

func short(sha string) string { return sha[:min(len(sha), 10)] }
