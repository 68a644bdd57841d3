package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/tempdir"
)

// withTempIndex stages the whole work tree into a throw-away copy of the
// index, so that new untracked files show in a diff while the real index
// (what the user or a later Commit sees) stays as it was.
func (w *Worktree) withTempIndex(ctx context.Context, fn func(env []string) error) error {
	out, err := w.git(ctx, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return fmt.Errorf("locate index: %w", err)
	}
	tmpDir, err := tempdir.Make(tempdir.Index, "")
	if err != nil {
		return fmt.Errorf("temporary index: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, "index")
	env := []string{"GIT_INDEX_FILE=" + tmp}
	// Starting from a copy keeps git's cached file stats: only changed files
	// are hashed. The copy keeps the index's mtime too: git hashes a file whose
	// stats match again only when it is as new as the index ("racily clean");
	// a copy made later would hide a same-size rewrite in the index's tick.
	if err := copyIndex(strings.TrimSpace(out), tmp); err != nil {
		if _, err := w.git(ctx, env, "read-tree", "HEAD"); err != nil {
			return fmt.Errorf("temporary index: %w", err)
		}
	}
	if _, err := w.git(ctx, env, "add", "--all"); err != nil {
		if sf := w.specialOr(ctx, nil); sf != nil {
			return sf
		}
		return fmt.Errorf("stage into temporary index: %w", err)
	}
	return fn(env)
}

// copyIndex copies a git index with its modification time, read before the
// copy: were git to write a newer index meanwhile, the older time only makes
// more entries racy, hashed again, never fewer.
func copyIndex(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := CopyFile(src, dst); err != nil {
		return err
	}
	return os.Chtimes(dst, time.Time{}, fi.ModTime())
}

// CopyFile copies the file src to dst, with src's permission bits and the
// owner's right to write it (a copy is made to be changed).
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func baseOrHead(base string) (string, error) {
	if base == "" {
		return "HEAD", nil
	}
	if strings.HasPrefix(base, "-") {
		return "", fmt.Errorf("invalid base %q", base)
	}
	return base, nil
}

// Diff returns the unified diff from base (a commit; "" means HEAD) to the
// current work tree, new untracked files included, ignored files excluded.
func (w *Worktree) Diff(ctx context.Context, base string) (string, error) {
	base, err := baseOrHead(base)
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	var diff string
	err = w.withTempIndex(ctx, func(env []string) error {
		out, err := w.git(ctx, env, "diff", "--cached", "--no-color", "--no-ext-diff",
			"--src-prefix=a/", "--dst-prefix=b/", "--find-renames", base, "--")
		diff = out
		return err
	})
	if err != nil {
		return "", fmt.Errorf("diff against %s: %w", base, err)
	}
	return diff, nil
}

// ChangedFiles lists the repository-relative paths that differ between base
// ("" means HEAD) and the work tree, new untracked files included; a rename
// shows as its old and new path.
func (w *Worktree) ChangedFiles(ctx context.Context, base string) ([]string, error) {
	base, err := baseOrHead(base)
	if err != nil {
		return nil, fmt.Errorf("changed files: %w", err)
	}
	var files []string
	err = w.withTempIndex(ctx, func(env []string) error {
		out, err := w.git(ctx, env, "diff", "--cached", "--name-only", "-z", "--no-renames", base, "--")
		for _, f := range strings.Split(out, "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("changed files since %s: %w", base, err)
	}
	return files, nil
}

// Changes returns the diff and the changed paths from base ("" means HEAD) to
// the work tree in one pass: callers that need both stage the tree once.
func (w *Worktree) Changes(ctx context.Context, base string) (diff string, files []string, err error) {
	base, err = baseOrHead(base)
	if err != nil {
		return "", nil, fmt.Errorf("changes: %w", err)
	}
	err = w.withTempIndex(ctx, func(env []string) error {
		out, err := w.git(ctx, env, "diff", "--cached", "--name-only", "-z", "--no-renames", base, "--")
		if err != nil {
			return err
		}
		for _, f := range strings.Split(out, "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		diff, err = w.git(ctx, env, "diff", "--cached", "--no-color", "--no-ext-diff",
			"--src-prefix=a/", "--dst-prefix=b/", "--find-renames", base, "--")
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("changes since %s: %w", base, err)
	}
	return diff, files, nil
}

// IsClean reports whether the worktree has no change against HEAD (staged,
// unstaged or untracked; ignored files do not count).
func (w *Worktree) IsClean(ctx context.Context) (bool, error) {
	out, err := w.git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, "status", "--porcelain=v1", "--untracked-files=all")
	if err != nil {
		return false, fmt.Errorf("status: %w", err)
	}
	return strings.TrimSpace(out) == "", nil
}
