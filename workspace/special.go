package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// Special files in the work tree. git ignores an untracked FIFO, socket
// or device, but fails on a tracked file replaced by one ("can only add
// regular files", exit 128; "cannot hash"): a gate or the model's code may
// make one (mkfifo textstats.go). lemmings then names the file in its own
// words (a *SpecialFileError) instead of passing git's on.

// specialFiles lists the changed tracked paths of the work tree that are
// special files now (FIFOs, sockets, devices), in git's order.
func (w *Worktree) specialFiles(ctx context.Context) []*SpecialFileError {
	out, err := w.git(context.WithoutCancel(ctx), []string{"GIT_OPTIONAL_LOCKS=0"}, "ls-files", "-z", "--modified", "--deduplicate")
	if err != nil {
		return nil
	}
	var found []*SpecialFileError
	for _, rel := range strings.Split(out, "\x00") {
		if rel == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(w.dir, filepath.FromSlash(rel)))
		if err == nil && safefile.Special(fi.Mode()) {
			found = append(found, &SpecialFileError{Path: rel, Mode: fi.Mode()})
		}
	}
	return found
}

// specialOr returns a *SpecialFileError naming the work tree's special
// file when there is one (what made git fail), else err.
func (w *Worktree) specialOr(ctx context.Context, err error) error {
	if found := w.specialFiles(ctx); len(found) > 0 {
		return found[0]
	}
	return err
}

// RemoveSpecialFiles deletes the special files that stand where tracked
// files were, and returns their paths: what git cannot record is not kept.
func (w *Worktree) RemoveSpecialFiles(ctx context.Context) ([]string, error) {
	var removed []string
	var errs []error
	for _, sf := range w.specialFiles(ctx) {
		if err := os.Remove(filepath.Join(w.dir, filepath.FromSlash(sf.Path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, sf.Path)
	}
	return removed, errors.Join(errs...)
}
