package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// FS gives agents file access confined to one directory tree (the run's
// worktree). Paths are repository-relative; see PathError for what is
// refused. Methods are safe for concurrent use.
type FS struct {
	root  string // absolute, symbolic links resolved
	inGit bool   // root is inside a git work tree: listings honour .gitignore
	// maxWrite bounds one file written (WriteFile, ApplyEdits).
	maxWrite atomic.Int64
}

// DefaultMaxWrite is the largest file an FS writes unless LimitWrites says
// otherwise (limits.write_bytes).
const DefaultMaxWrite = 1 << 20

// LimitWrites sets the largest file WriteFile and ApplyEdits write, in bytes
// (≤ 0: DefaultMaxWrite). A larger one is refused with a *PathError saying
// why: a model that writes tens of megabytes is stuck, not working.
func (f *FS) LimitWrites(n int64) {
	if n <= 0 {
		n = DefaultMaxWrite
	}
	f.maxWrite.Store(n)
}

// checkSize refuses data over the write limit.
func (f *FS) checkSize(shown string, n int) error {
	limit := f.maxWrite.Load()
	if limit <= 0 {
		limit = DefaultMaxWrite
	}
	if int64(n) > limit {
		return &PathError{Path: shown, Reason: fmt.Sprintf("%d bytes is over the %d bytes one file may have (limits.write_bytes): write smaller files, or a script that generates the data", n, limit)}
	}
	return nil
}

// Open returns an FS confined to root, which must be an existing directory.
func Open(root string) (*FS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open workspace %s: not a directory", root)
	}
	return &FS{root: real, inGit: insideWorkTree(real)}, nil
}

// insideWorkTree asks git whether dir is in a work tree; no git, no.
func insideWorkTree(dir string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := runGit(ctx, dir, nil, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(out) == "true"
}

// Root returns the absolute path of the directory the FS is confined to.
func (f *FS) Root() string { return f.root }

// openAt resolves the repository-relative path p and opens the root it is
// confined to (the caller closes it); verb names the operation in errors.
func (f *FS) openAt(verb, p string) (*os.Root, string, error) {
	rel, err := f.resolve(p, false)
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", verb, p, err)
	}
	return root, rel, nil
}

// ReadFile reads a file given by its repository-relative path.
func (f *FS) ReadFile(p string) ([]byte, error) {
	root, rel, err := f.openAt("read", p)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := safefile.ReadFileIn(root, rel)
	if err != nil {
		return nil, readError(p, err)
	}
	return data, nil
}

// readError says why a file could not be read: missing, a directory, or a
// special file (a FIFO a gate made, a socket, a device), never opened.
func readError(p string, err error) error {
	var nr *safefile.NotRegularError
	switch {
	case errors.As(err, &nr) && nr.Mode.IsDir():
		return &PathError{Path: p, Reason: "it is a directory; list it to see its files"}
	case errors.As(err, &nr):
		return &SpecialFileError{Path: p, Mode: nr.Mode}
	}
	return notExist("read", p, err)
}

// notExist rewrites a missing-file error to name the relative path only.
func notExist(op, p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
	}
	return fmt.Errorf("%s %s: %w", op, p, err)
}

// Exists reports whether a file or directory exists at the path; refused
// paths return their *PathError.
func (f *FS) Exists(p string) (bool, error) {
	rel, err := f.resolve(p, true)
	if err != nil {
		return false, err
	}
	_, err = os.Lstat(filepath.Join(f.root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", p, err)
	}
	return true, nil
}

// WriteFile writes data atomically: a temporary file in the same directory,
// fsync, then rename over the target. Parent directories are created; an
// existing file keeps its permissions, a new one gets 0644. Data over the
// write limit (LimitWrites) is refused. A Go file is written as gofmt
// prints it (gofmtWritten says when it is not).
func (f *FS) WriteFile(p string, data []byte) error {
	rel, err := f.resolve(p, false)
	if err != nil {
		return err
	}
	if err := f.checkSize(p, len(data)); err != nil {
		return err
	}
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	defer root.Close()
	return writeAtomic(root, p, rel, gofmtAt(root, p, rel, data))
}

// Restore writes back content read from the FS before (undoing a change):
// as WriteFile, but without the write limit, since the content was there
// already and a limit must never keep a broken change in place.
func (f *FS) Restore(p string, data []byte) error {
	root, rel, err := f.openAt("write", p)
	if err != nil {
		return err
	}
	defer root.Close()
	return writeAtomic(root, p, rel, data)
}

func writeAtomic(root *os.Root, shown, rel string, data []byte) error {
	dir := path.Dir(rel)
	if dir != "." {
		if fi, err := root.Stat(dir); err == nil && !fi.IsDir() {
			return &PathError{Path: shown, Reason: fmt.Sprintf("%s is a file, not a directory", dir)}
		}
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: create directory: %w", shown, err)
		}
	}
	mode := fs.FileMode(0o644)
	if fi, err := root.Stat(rel); err == nil {
		if fi.IsDir() {
			return &PathError{Path: shown, Reason: "it is a directory, not a file"}
		}
		mode = fi.Mode().Perm()
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+path.Base(rel)+".lemmings-"+hex.EncodeToString(rnd[:])+".tmp")
	fh, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", shown, err)
	}
	_, werr := fh.Write(data)
	if werr == nil {
		werr = fh.Sync()
	}
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Chmod(tmp, mode) // the umask may have narrowed it
	}
	if werr == nil {
		werr = root.Rename(tmp, rel)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", shown, werr)
	}
	// Make the rename itself durable.
	if d, err := root.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Remove deletes a file (or an empty directory).
func (f *FS) Remove(p string) error {
	root, rel, err := f.openAt("remove", p)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Remove(rel); err != nil {
		return notExist("remove", p, err)
	}
	return nil
}
