package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// spliceGo returns base with the top-level declarations names taken from
// target: a declaration base has is replaced, one it lacks is appended. The
// imports the taken declarations need and base lacks come from target. A
// name is a function or a type, var or const ("T.M" for a method).
func spliceGo(base, target []byte, names []string) ([]byte, error) {
	fset := token.NewFileSet()
	bf, err := parser.ParseFile(fset, "base.go", base, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse the base's file: %w", err)
	}
	tf, err := parser.ParseFile(fset, "target.go", target, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse the target's file: %w", err)
	}
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	var taken []ast.Decl
	var appended []string
	for _, name := range names {
		td := findGoDecl(tf, name)
		if td == nil {
			return nil, fmt.Errorf("the target's file has no declaration %s", name)
		}
		taken = append(taken, td)
		ts, te := declSpan(fset, td)
		text := string(target[ts:te])
		if bd := findGoDecl(bf, name); bd != nil {
			bs, be := declSpan(fset, bd)
			edits = append(edits, edit{bs, be, text})
		} else {
			appended = append(appended, text)
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := append([]byte{}, base...)
	for i, e := range edits {
		if i > 0 && e.end > edits[i-1].start {
			return nil, fmt.Errorf("declarations %v overlap in the base's file", names)
		}
		out = append(out[:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	for _, a := range appended {
		out = append(bytes.TrimRight(out, "\n"), []byte("\n\n"+a+"\n")...)
	}
	// Imports the taken declarations use that base does not have.
	have := map[string]bool{}
	for _, im := range bf.Imports {
		have[importName(im)] = true
	}
	used := map[string]bool{}
	for _, d := range taken {
		ast.Inspect(d, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := se.X.(*ast.Ident); ok {
					used[id.Name] = true
				}
			}
			return true
		})
	}
	var add []string
	for _, im := range tf.Imports {
		n := importName(im)
		if used[n] && !have[n] {
			spec := im.Path.Value
			if im.Name != nil {
				spec = im.Name.Name + " " + spec
			}
			add = append(add, "import "+spec)
			have[n] = true
		}
	}
	if len(add) > 0 {
		// Right after the package clause: Go allows several import declarations.
		pkgEnd := fset.Position(bf.Name.End()).Offset
		out = append(out[:pkgEnd:pkgEnd], append([]byte("\n\n"+strings.Join(add, "\n")+"\n"), out[pkgEnd:]...)...)
	}
	formatted, err := format.Source(out)
	if err != nil {
		return nil, fmt.Errorf("the spliced file does not parse: %w", err)
	}
	return formatted, nil
}

// importName is the name an import is used by in the file.
func importName(im *ast.ImportSpec) string {
	if im.Name != nil {
		return im.Name.Name
	}
	p, _ := strconv.Unquote(im.Path.Value)
	p = p[strings.LastIndex(p, "/")+1:]
	// gopkg.in/yaml.v3 and example.com/x/v2 are used by the name before the version.
	if i := strings.Index(p, ".v"); i > 0 {
		p = p[:i]
	}
	return p
}

// findGoDecl finds a top-level declaration by name ("T.M" for a method).
func findGoDecl(f *ast.File, name string) ast.Decl {
	recv, fn, isMethod := strings.Cut(name, ".")
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if isMethod {
				if d.Recv != nil && d.Name.Name == fn && recvName(d.Recv) == recv {
					return d
				}
			} else if d.Recv == nil && d.Name.Name == name {
				return d
			}
		case *ast.GenDecl:
			if isMethod {
				continue
			}
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == name {
						return d
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name == name {
							return d
						}
					}
				}
			}
		}
	}
	return nil
}

func recvName(fl *ast.FieldList) string {
	if len(fl.List) == 0 {
		return ""
	}
	t := fl.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// declSpan is the byte range of a declaration with its doc comment.
func declSpan(fset *token.FileSet, d ast.Decl) (int, int) {
	start := d.Pos()
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	case *ast.GenDecl:
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	}
	return fset.Position(start).Offset, fset.Position(d.End()).Offset
}
