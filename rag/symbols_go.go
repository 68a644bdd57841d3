package rag

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"strconv"
	"strings"
)

// GoFileSymbols are the signatures of one Go file's top-level declarations,
// the same declarations chunkGo cuts the file by.
type GoFileSymbols struct {
	Package string
	Imports []string
	// Decls: "func Mean(xs []float64) float64", "func (*Index).Search(…)",
	// "type Hit struct{ Path string; … }", "const MaxLines, MinLines".
	Decls []string
}

// GoSymbols reads the signatures of a Go file: functions and methods without
// their bodies, types with short bodies on one line, constants and variables
// by name. A file that does not parse gives ok false.
func GoSymbols(filename, src string) (GoFileSymbols, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil || f == nil {
		return GoFileSymbols{}, false
	}
	out := GoFileSymbols{Package: f.Name.Name}
	for _, imp := range f.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err == nil {
			out.Imports = append(out.Imports, p)
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			fn := *d
			fn.Body, fn.Doc = nil, nil
			out.Decls = append(out.Decls, oneLine(fset, &fn))
		case *ast.GenDecl:
			switch d.Tok {
			case token.TYPE:
				for _, s := range d.Specs {
					ts := *s.(*ast.TypeSpec)
					ts.Doc, ts.Comment = nil, nil
					out.Decls = append(out.Decls, "type "+oneLine(fset, &ts))
				}
			case token.CONST, token.VAR:
				out.Decls = append(out.Decls, declName(d))
			}
		}
	}
	return out, true
}

// oneLine prints a node on one line, long bodies cut.
func oneLine(fset *token.FileSet, n any) string {
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, n); err != nil {
		return ""
	}
	var s string
	for _, l := range strings.Split(b.String(), "\n") {
		l = strings.Join(strings.Fields(l), " ")
		switch {
		case l == "":
		case s == "" || strings.HasSuffix(s, "{") || l == "}":
			s += l
		default:
			s += "; " + l
		}
	}
	if len(s) > 200 {
		s = s[:197] + "…}"
	}
	return s
}
