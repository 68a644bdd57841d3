package knowledge

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed all:scaffold
var scaffold embed.FS

// Init scaffolds a knowledge dir: the category directories, a README
// explaining the format, one example per category (named _example.md, so it is
// never injected into prompts) and _index.md. Existing files are never
// overwritten. It returns the paths it created.
func Init(dir string) ([]string, error) {
	var created []string
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("knowledge: init %s: %w", dir, err)
	}
	for _, c := range Categories() {
		p := filepath.Join(dir, c)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if err := os.Mkdir(p, 0o755); err != nil {
				return created, fmt.Errorf("knowledge: init: %w", err)
			}
			created = append(created, p+string(filepath.Separator))
		}
	}
	err := fs.WalkDir(scaffold, "scaffold", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("scaffold", filepath.FromSlash(p))
		data, err := scaffold.ReadFile(p)
		if err != nil {
			return err
		}
		full := filepath.Join(dir, rel)
		ok, err := createNew(full, data)
		if ok {
			created = append(created, full)
		}
		return err
	})
	if err != nil {
		return created, fmt.Errorf("knowledge: init %s: %w", dir, err)
	}
	full := filepath.Join(dir, IndexFile)
	if _, err := os.Stat(full); errors.Is(err, fs.ErrNotExist) {
		s, _, err := Open(dir)
		if err != nil {
			return created, err
		}
		if err := s.Index(); err != nil {
			return created, err
		}
		created = append(created, full)
	}
	return created, nil
}

// createNew writes a file only if it does not exist yet.
func createNew(full string, data []byte) (bool, error) {
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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
		os.Remove(full)
		return false, err
	}
	return true, nil
}
