// Package tidy mends the mechanical slips a small coder makes in a whole
// file it writes, before the file lands: the standard-library imports it
// uses but forgot (`errors.New` with no import: a build failure the model then
// spends a fix round on), the imports it no longer uses, and the tests it
// copied from the test file shown beside it into the file it was asked to
// change (the test then exists twice and the package does not build).
// Measured on Qwen2.5-Coder-0.5B: these were most of its Go failures on the
// builtin exercises (docs/implementor.md).
//
// Tidy only reads and rewrites text: it runs nothing, asks no tool and
// resolves imports from a fixed table of the standard library, so a hostile
// repository cannot make it execute anything.
package tidy

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// Result is a tidied file and what was done to it, in words for the model.
type Result struct {
	Content string
	Notes   []string
}

// File tidies a whole file the model wrote at p over old (the file before,
// "" for a new one). others are the other files of its package or folder
// (path → text): the test files among them say which declarations are the
// tests'. A file tidy cannot read comes back as it was.
func File(p, old, content string, others map[string]string) Result {
	switch path.Ext(p) {
	case ".go":
		return goFile(p, old, content, others)
	case ".py":
		return pythonFile(p, old, content, others)
	}
	return Result{Content: content}
}

// goStd maps a package name to its import path, for the standard-library
// packages small programs use. A name not here is never imported.
var goStd = map[string]string{
	"bufio": "bufio", "bytes": "bytes", "cmp": "cmp", "context": "context", "errors": "errors", "fmt": "fmt",
	"io": "io", "maps": "maps", "math": "math", "os": "os", "regexp": "regexp", "slices": "slices", "sort": "sort",
	"strconv": "strconv", "strings": "strings", "sync": "sync", "time": "time", "unicode": "unicode",
	"utf8": "unicode/utf8", "bits": "math/bits", "big": "math/big", "rand": "math/rand", "heap": "container/heap",
	"list": "container/list", "atomic": "sync/atomic", "filepath": "path/filepath", "json": "encoding/json",
	"hex": "encoding/hex", "base64": "encoding/base64", "binary": "encoding/binary", "sha256": "crypto/sha256",
	"md5": "crypto/md5", "cmplx": "math/cmplx", "utf16": "unicode/utf16", "iter": "iter", "html": "html",
}

func goFile(p, old, content string, others map[string]string) Result {
	content, notes := restoreGoDocs(p, old, content)
	restoredNotes := len(notes) // what stands in content itself, before the AST's changes
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, content, parser.ParseComments)
	if err != nil {
		return Result{Content: content, Notes: notes}
	}
	if !strings.HasSuffix(p, "_test.go") {
		if dropped := dropGoTests(fset, f, p, others); len(dropped) > 0 {
			notes = append(notes, fmt.Sprintf("removed %s, which the tests define", strings.Join(dropped, ", ")))
		}
	}
	if dropTrailingComment(f) {
		notes = append(notes, "removed a comment left after the last declaration")
	}
	declared := goDeclared(f, others, p)
	var added, removed []string
	for _, name := range goUnresolved(f) {
		imp, ok := goStd[name]
		if !ok || declared[name] {
			continue
		}
		if astutil.AddImport(fset, f, imp) {
			added = append(added, strconv.Quote(imp))
		}
	}
	for _, spec := range slices.Clone(f.Imports) {
		imp, err := strconv.Unquote(spec.Path.Value)
		if err != nil || imp == "C" || (spec.Name != nil && (spec.Name.Name == "_" || spec.Name.Name == ".")) {
			continue
		}
		if !astutil.UsesImport(f, imp) {
			name := ""
			if spec.Name != nil {
				name = spec.Name.Name
			}
			if astutil.DeleteNamedImport(fset, f, name, imp) {
				removed = append(removed, strconv.Quote(imp))
			}
		}
	}
	if len(added) > 0 {
		notes = append(notes, "added the missing import "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		notes = append(notes, "removed the unused import "+strings.Join(removed, ", "))
	}
	if len(notes) == 0 {
		return Result{Content: content}
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return Result{Content: content, Notes: notes[:restoredNotes]}
	}
	return Result{Content: b.String(), Notes: notes}
}

// dropGoTests removes the functions the package's test files declare (Test,
// Benchmark, Example and Fuzz functions, and helpers), which a small coder
// copies from the test file shown to it.
func dropGoTests(fset *token.FileSet, f *ast.File, p string, others map[string]string) []string {
	inTests := map[string]bool{}
	for op, text := range others {
		if !strings.HasSuffix(op, "_test.go") || path.Dir(op) != path.Dir(p) {
			continue
		}
		of, err := parser.ParseFile(token.NewFileSet(), op, text, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range of.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				inTests[fd.Name.Name] = true
			}
		}
	}
	var dropped []string
	var gone [][2]token.Pos // the dropped functions, doc comments included
	kept := f.Decls[:0]
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && inTests[fd.Name.Name] {
			dropped = append(dropped, fd.Name.Name)
			from := fd.Pos()
			if fd.Doc != nil {
				from = fd.Doc.Pos()
			}
			gone = append(gone, [2]token.Pos{from, fd.End()})
			continue
		}
		kept = append(kept, d)
	}
	if len(dropped) == 0 {
		return nil
	}
	f.Decls = kept
	// Their comments would otherwise float into the file.
	comments := f.Comments[:0]
	for _, c := range f.Comments {
		inside := false
		for _, r := range gone {
			if c.Pos() >= r[0] && c.End() <= r[1] {
				inside = true
			}
		}
		if !inside {
			comments = append(comments, c)
		}
	}
	f.Comments = comments
	return dropped
}

// dropTrailingComment removes a comment after the last declaration that
// introduces a test or a main (the doc comment of code the reply was cut
// before): it documents nothing that is there.
func dropTrailingComment(f *ast.File) bool {
	if len(f.Comments) == 0 {
		return false
	}
	last := f.Comments[len(f.Comments)-1]
	end := f.Package
	if n := len(f.Decls); n > 0 {
		end = f.Decls[n-1].End()
	}
	text := strings.TrimSpace(last.Text())
	if last.Pos() <= end || !(strings.HasPrefix(text, "Test") || strings.HasPrefix(text, "Benchmark") || strings.HasPrefix(text, "main ") || strings.HasPrefix(text, "Example")) {
		return false
	}
	f.Comments = f.Comments[:len(f.Comments)-1]
	return true
}

// goDeclared are the package-level names of the file and its package's other
// files: a name declared there is not a package to import.
func goDeclared(f *ast.File, others map[string]string, p string) map[string]bool {
	names := map[string]bool{}
	collect := func(file *ast.File) {
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					case *ast.ImportSpec:
						if s.Name != nil {
							names[s.Name.Name] = true
						}
					}
				}
			}
		}
	}
	collect(f)
	for op, text := range others {
		if path.Dir(op) != path.Dir(p) || !strings.HasSuffix(op, ".go") || strings.HasSuffix(op, "_test.go") {
			continue
		}
		if of, err := parser.ParseFile(token.NewFileSet(), op, text, parser.SkipObjectResolution); err == nil {
			collect(of)
		}
	}
	return names
}

// goUnresolved are the identifiers used as the left of a selector (`x.Y`)
// that nothing in the file declares: candidates for a missing import.
func goUnresolved(f *ast.File) []string {
	unresolved := map[*ast.Ident]bool{}
	for _, id := range f.Unresolved {
		unresolved[id] = true
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && unresolved[id] && !slices.Contains(out, id.Name) {
				out = append(out, id.Name)
			}
		}
		return true
	})
	return out
}
