// Package atomicfile writes a file so that a reader, a crash or a power cut
// never leaves half of it: the data goes to a temporary file beside the
// target, is synced, and is renamed over the target; then the directory is
// synced so the rename itself is on disk.
//
// Hand-written rather than github.com/google/renameio: renameio does not sync
// the directory after the rename and does not build on Windows, and the whole
// job is the thirty lines below.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
)

// WriteFile writes data to path with permissions perm, creating the
// directories above it (0700 for a private file, one that only its owner may
// read; else 0755). Either the whole new content is at path afterwards or
// the old content (or nothing) is; the temporary file never outlives a failed
// call.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	dirPerm := fs.FileMode(0o755)
	if perm&0o077 == 0 {
		dirPerm = 0o700
	}
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return Write(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// Write is WriteFile for content that write produces into the temporary file
// (a file, not a writer, for encoders that seek), in a directory that must
// exist already. An error from write leaves path as it was.
func Write(path string, perm fs.FileMode, write func(*os.File) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	return nil
}

// syncDir makes a rename into dir durable. Windows cannot open a directory
// for syncing, and its file system journals the rename itself.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, os.ErrInvalid) {
		err = nil // a file system without directory sync: nothing more to do
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteIn is WriteFile confined to root: name is relative to it, and no
// symbolic link can take the file, or the directories created for it,
// outside root (os.Root refuses the path instead).
func WriteIn(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	name = filepath.ToSlash(filepath.Clean(name))
	dir := path.Dir(name)
	dirPerm := fs.FileMode(0o755)
	if perm&0o077 == 0 {
		dirPerm = 0o700
	}
	if dir != "." {
		if err := root.MkdirAll(dir, dirPerm); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+path.Base(name)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // the umask may have narrowed it
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	if runtime.GOOS != "windows" {
		if d, err := root.Open(dir); err == nil {
			serr := d.Sync()
			d.Close()
			if serr != nil && !errors.Is(serr, errors.ErrUnsupported) && !errors.Is(serr, os.ErrInvalid) {
				return fmt.Errorf("write %s: sync directory: %w", name, serr)
			}
		}
	}
	return nil
}
