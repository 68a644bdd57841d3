package splice

import (
	"go/ast"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

// goUnits reads a Go file's declarations with go/parser.
func goUnits(name string, src []byte) ([]Unit, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, goSyntaxError(err, 0)
	}
	return goDecls(fset, f, 0), nil
}

// goSyntaxError turns the parser's first error into a *SyntaxError, its
// line moved up by shift (the lines a fragment's wrapper added).
func goSyntaxError(err error, shift int) error {
	var list scanner.ErrorList
	if l, ok := err.(scanner.ErrorList); ok {
		list = l
	}
	if len(list) == 0 {
		return &SyntaxError{Msg: err.Error()}
	}
	e := list[0]
	return &SyntaxError{Line: max(1, e.Pos.Line-shift), Col: e.Pos.Column, Msg: e.Msg}
}

func goDecls(fset *token.FileSet, f *ast.File, shift int) []Unit {
	line := func(p token.Pos) int { return fset.Position(p).Line - shift }
	var out []Unit
	for _, d := range f.Decls {
		u := Unit{Start: line(d.Pos()), End: line(d.End()), Decl: line(d.Pos())}
		switch d := d.(type) {
		case *ast.FuncDecl:
			u.Kind, u.Name = "func", d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				u.Kind, u.Name = "method", recvType(d.Recv.List[0].Type)+"."+d.Name.Name
			}
			if d.Doc != nil {
				u.Start = line(d.Doc.Pos())
			}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			u.Kind = d.Tok.String()
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					u.Names = append(u.Names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						u.Names = append(u.Names, n.Name)
					}
				}
			}
			if len(u.Names) == 0 {
				continue
			}
			u.Name = u.Names[0]
			if d.Doc != nil {
				u.Start = line(d.Doc.Pos())
			}
		default:
			continue
		}
		out = append(out, u)
	}
	return out
}

// recvType is a receiver's type name without pointer or type parameters.
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

// goFragment parses a reply's Go code: a whole file when it has a package
// clause, else declarations (wrapped in a package clause to parse them). It
// returns the units with their text and the imports the code declares.
func goFragment(code string) (frag fragment, err error) {
	src, shift := code, 0
	if !hasPackageClause(code) {
		src, shift = "package fragment\n"+code, 1
	} else {
		frag.wholeFile = true
	}
	fset := token.NewFileSet()
	f, perr := parser.ParseFile(fset, "reply.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if perr != nil {
		return frag, goSyntaxError(perr, shift)
	}
	lines := strings.Split(code, "\n")
	for _, u := range goDecls(fset, f, shift) {
		frag.units = append(frag.units, fragUnit{Unit: u, text: strings.Join(lines[u.Start-1:u.End], "\n")})
	}
	for _, imp := range f.Imports {
		spec := imp.Path.Value
		if imp.Name != nil {
			spec = imp.Name.Name + " " + spec
		}
		frag.imports = append(frag.imports, spec)
	}
	return frag, nil
}

func hasPackageClause(code string) bool {
	for _, l := range strings.Split(code, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		return strings.HasPrefix(t, "package ")
	}
	return false
}

// gofmtUnit formats one declaration as gofmt would; text that does not
// format stays as it is (the file's parse check decides).
func gofmtUnit(text string) string {
	out, err := format.Source([]byte("package p\n\n" + text + "\n"))
	if err != nil {
		return text
	}
	return strings.TrimRight(strings.TrimPrefix(string(out), "package p\n\n"), "\n")
}

// addGoImports adds the import specs src lacks, into its import block (or a
// new one after the package clause). It returns src unchanged when all are
// there or src does not parse.
func addGoImports(src string, specs []string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "f.go", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return src
	}
	have := map[string]bool{}
	for _, imp := range f.Imports {
		have[imp.Path.Value] = true
	}
	var missing []string
	for _, s := range specs {
		fields := strings.Fields(s)
		if p := fields[len(fields)-1]; !have[p] {
			have[p] = true
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return src
	}
	lines := strings.Split(src, "\n")
	insert := func(at int, add ...string) string {
		out := append(append(append([]string{}, lines[:at]...), add...), lines[at:]...)
		return strings.Join(out, "\n")
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		if g.Lparen.IsValid() {
			at := fset.Position(g.Rparen).Line - 1 // before the closing parenthesis
			var add []string
			for _, m := range missing {
				add = append(add, "\t"+m)
			}
			return insert(at, add...)
		}
		at := fset.Position(g.End()).Line // after a single import line
		var add []string
		for _, m := range missing {
			add = append(add, "import "+m)
		}
		return insert(at, add...)
	}
	at := fset.Position(f.Name.End()).Line
	add := []string{""}
	if len(missing) == 1 {
		add = append(add, "import "+missing[0])
	} else {
		add = append(add, "import (")
		for _, m := range missing {
			add = append(add, "\t"+m)
		}
		add = append(add, ")")
	}
	return insert(at, add...)
}
