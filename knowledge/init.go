package knowledge

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

//go:embed all:scaffold
var scaffold embed.FS

// Init scaffolds a knowledge dir: the category directories, a README
// explaining the format, one example per category (named _example.md, so it is
// never injected into prompts) and _index.md. Existing files are never
// overwritten. It returns the paths it created. Like the store's writes, it
// stays inside the repository around dir (a symbolic link leading out is
// refused).
func Init(dir string) ([]string, error) {
	var created []string
	repo, rel := confinement(dir)
	root, err := os.OpenRoot(repo)
	if err != nil {
		return nil, fmt.Errorf("knowledge: init %s: %w", dir, err)
	}
	defer root.Close()
	s := &Store{repo: repo, rel: rel}
	if err := root.MkdirAll(rel, 0o755); err != nil {
		return nil, fmt.Errorf("knowledge: init %s: %w", dir, s.escapeOr(rel, err))
	}
	for _, c := range Categories() {
		p := path.Join(rel, c)
		if _, err := root.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			if err := root.Mkdir(p, 0o755); err != nil {
				return created, fmt.Errorf("knowledge: init: %w", s.escapeOr(p, err))
			}
			created = append(created, filepath.Join(dir, c)+string(filepath.Separator))
		}
	}
	err = fs.WalkDir(scaffold, "scaffold", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		name := strings.TrimPrefix(p, "scaffold/")
		data, err := scaffold.ReadFile(p)
		if err != nil {
			return err
		}
		ok, err := createNew(root, path.Join(rel, name), data)
		if ok {
			created = append(created, filepath.Join(dir, filepath.FromSlash(name)))
		}
		return s.escapeOr(path.Join(rel, name), err)
	})
	if err != nil {
		return created, fmt.Errorf("knowledge: init %s: %w", dir, err)
	}
	if _, err := root.Lstat(path.Join(rel, IndexFile)); errors.Is(err, fs.ErrNotExist) {
		s, _, err := Open(dir)
		if err != nil {
			return created, err
		}
		if err := s.Index(); err != nil {
			return created, err
		}
		created = append(created, filepath.Join(dir, IndexFile))
	}
	return created, nil
}

// createNew writes a file of root only if it does not exist yet.
func createNew(root *os.Root, name string, data []byte) (bool, error) {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(name)
		return false, err
	}
	return true, nil
}
