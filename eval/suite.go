package eval

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The built-in micro-suite, in the same layout as Exercism's tracks. Go
// module files are stored as go.mod.txt: a go.mod would make each exercise a
// module of its own, which go:embed refuses; the folder's leading _ keeps
// the stubs and their failing tests out of ./... .
//
//go:embed all:_suite
var suiteFS embed.FS

const suiteRoot = "_suite"

// WriteBuiltin writes the built-in micro-suite (15 Go and 9 Python
// exercises, from changing a string to a ten-line function) under dir and
// returns the folders to evaluate, one per language.
func WriteBuiltin(dir string) ([]string, error) {
	err := fs.WalkDir(suiteFS, suiteRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, suiteRoot), "/")
		if path.Base(rel) == "go.mod.txt" {
			rel = strings.TrimSuffix(rel, ".txt")
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := suiteFS.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return nil, fmt.Errorf("write the built-in suite to %s: %w", dir, err)
	}
	langs, err := fs.ReadDir(suiteFS, suiteRoot)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, l := range langs {
		dirs = append(dirs, filepath.Join(dir, l.Name()))
	}
	return dirs, nil
}
