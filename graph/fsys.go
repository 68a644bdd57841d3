package graph

import (
	"io"
	"os"
)

// fileSystem is the part of the OS the file store uses; tests swap in one
// that fails (disk full, read-only) to check that no partial record shows.
type fileSystem interface {
	MkdirAll(path string, perm os.FileMode) error
	Mkdir(path string, perm os.FileMode) error
	OpenFile(name string, flag int, perm os.FileMode) (storeFile, error)
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]os.DirEntry, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	RemoveAll(path string) error
}

// storeFile is an open file of the store.
type storeFile interface {
	io.Writer
	io.ReaderAt
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

type osFS struct{}

func (osFS) MkdirAll(p string, perm os.FileMode) error { return os.MkdirAll(p, perm) }
func (osFS) Mkdir(p string, perm os.FileMode) error    { return os.Mkdir(p, perm) }
func (osFS) OpenFile(name string, flag int, perm os.FileMode) (storeFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}
func (osFS) ReadFile(name string) ([]byte, error)       { return os.ReadFile(name) }
func (osFS) ReadDir(name string) ([]os.DirEntry, error) { return os.ReadDir(name) }
func (osFS) Rename(o, n string) error                   { return os.Rename(o, n) }
func (osFS) Remove(name string) error                   { return os.Remove(name) }
func (osFS) RemoveAll(p string) error                   { return os.RemoveAll(p) }
