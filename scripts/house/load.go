package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pkg is one package of the module as `go list` sees it, its non-test files
// parsed and type-checked.
type pkg struct {
	Path    string   `json:"ImportPath"` // relative to the module ("." for its root)
	Dir     string   `json:"Dir"`
	GoFiles []string `json:"GoFiles"`
	Imports []string `json:"Imports"`
	Export  string   `json:"Export"`
	Module  *struct{ Path string }

	files []*ast.File
	types *types.Package
}

// house is the module: its packages by relative path, and one file set.
type house struct {
	module string
	root   string // the module's directory
	fset   *token.FileSet
	pkgs   map[string]*pkg
	order  []string // relative paths, as go list gave them
	all    map[string]string
}

func goList(args ...string) ([]*pkg, error) {
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(args, " "), err)
	}
	var pkgs []*pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
}

// load lists, parses and type-checks every package of the module (non-test
// files), with the export data `go list -export` leaves, so that it needs
// nothing but the go command.
func load() (*house, error) {
	mod, err := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	path, dir, _ := strings.Cut(strings.TrimSpace(string(mod)), " ")
	h := &house{module: path, root: dir, fset: token.NewFileSet(), pkgs: map[string]*pkg{}, all: map[string]string{}}
	deps, err := goList("-export", "-deps", "./...")
	if err != nil {
		return nil, err
	}
	for _, p := range deps {
		h.all[p.Path] = p.Export
		if p.Module == nil || p.Module.Path != h.module {
			continue
		}
		rel := h.rel(p.Path)
		h.pkgs[rel] = p
		h.order = append(h.order, rel)
	}
	imp := importer.ForCompiler(h.fset, "gc", func(path string) (io.ReadCloser, error) {
		if h.all[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(h.all[path])
	})
	for _, rel := range h.order {
		p := h.pkgs[rel]
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(h.fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			p.files = append(p.files, f)
		}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		p.types, _ = conf.Check(p.Path, h.fset, p.files, nil)
	}
	return h, nil
}

// rel is an import path of the module relative to it ("." for its root).
func (h *house) rel(path string) string {
	if path == h.module {
		return "."
	}
	return strings.TrimPrefix(path, h.module+"/")
}

// inModule reports whether an import path is one of the module's packages.
func (h *house) inModule(path string) bool {
	return path == h.module || strings.HasPrefix(path, h.module+"/")
}

// fileOf is a position's file relative to the module's root.
func (h *house) fileOf(pos token.Pos) string {
	name := h.fset.Position(pos).Filename
	if rel, err := filepath.Rel(h.root, name); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(name)
}
