package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"os/exec"
	"sort"
	"strings"
)

// width is a named type and the size of its method set.
type width struct {
	name    string
	methods int
}

// methodSets measures the method set of *T for every named type T declared
// in the module's non-test files, promoted methods included (a type that
// embeds another is as wide as what it offers), widest first.
func (h *house) methodSets() []width {
	var out []width
	for _, rel := range h.order {
		p := h.pkgs[rel]
		if p.types == nil {
			continue
		}
		scope := p.types.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			t := tn.Type()
			if !types.IsInterface(t) {
				t = types.NewPointer(t)
			}
			if n := types.NewMethodSet(t).Len(); n > 0 {
				out = append(out, width{rel + "." + name, n})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].methods != out[j].methods {
			return out[i].methods > out[j].methods
		}
		return out[i].name < out[j].name
	})
	return out
}

// long is a function of more than 100 lines.
type long struct {
	name  string // file:function
	lines int
	table bool // most of it is one composite literal: a table
}

// longFunctions lists the module's non-test functions and methods of more
// than limit lines, longest first. A function more than half of whose
// lines are one composite literal is a table (config's key list), counted
// apart.
func (h *house) longFunctions(limit int) []long {
	var out []long
	for _, rel := range h.order {
		for _, f := range h.pkgs[rel].files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				n := h.lines(fd)
				if n <= limit {
					continue
				}
				out = append(out, long{h.fileOf(fd.Pos()) + ":" + funcName(fd), n, 2*h.widestLiteral(fd) > n})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].lines > out[j].lines })
	return out
}

func (h *house) lines(n ast.Node) int {
	return h.fset.Position(n.End()).Line - h.fset.Position(n.Pos()).Line + 1
}

// widestLiteral is the number of lines of the largest composite literal in fd.
func (h *house) widestLiteral(fd *ast.FuncDecl) int {
	widest := 0
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if cl, ok := n.(*ast.CompositeLit); ok {
			widest = max(widest, h.lines(cl))
			return false
		}
		return true
	})
	return widest
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// sized is a file and its length in lines.
type sized struct {
	file  string
	lines int
}

// bigFiles lists the module's Go files of more than limit lines, longest
// first: non-test files, or with tests the test files.
func (h *house) bigFiles(limit int, tests bool) ([]sized, error) {
	out, err := exec.Command("git", "-C", h.root, "ls-files", "*.go").Output()
	if err != nil {
		return nil, err
	}
	var big []sized
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") != tests {
			continue
		}
		n, err := lineCount(h.root + "/" + f)
		if err != nil {
			return nil, err
		}
		if n > limit {
			big = append(big, sized{f, n})
		}
	}
	sort.SliceStable(big, func(i, j int) bool { return big[i].lines > big[j].lines })
	return big, nil
}

// aliases lists the exported names declared as another name: a type alias
// (type X = Y), or a constant or variable that is a name of another package
// of the module (X = pkg.Y) or another name of its own package (X = Y).
// A value of the standard library's (time.Second) is a value, not a name.
func (h *house) aliases() []string {
	var out []string
	for _, rel := range h.order {
		for _, f := range h.pkgs[rel].files {
			imports := map[string]bool{} // the module's packages this file imports, by name
			for _, is := range f.Imports {
				imports[importName(is)] = h.inModule(strings.Trim(is.Path.Value, `"`))
			}
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range gd.Specs {
					for _, name := range aliasNames(gd.Tok, s, imports) {
						out = append(out, h.fileOf(s.Pos())+": "+name)
					}
				}
			}
		}
	}
	return out
}

func aliasNames(tok token.Token, s ast.Spec, imports map[string]bool) []string {
	switch s := s.(type) {
	case *ast.TypeSpec:
		if s.Assign.IsValid() && s.Name.IsExported() {
			return []string{s.Name.Name}
		}
	case *ast.ValueSpec:
		if tok != token.CONST && tok != token.VAR {
			return nil
		}
		var names []string
		for i, n := range s.Names {
			if !n.IsExported() || i >= len(s.Values) {
				continue
			}
			switch v := s.Values[i].(type) {
			case *ast.SelectorExpr:
				if x, ok := v.X.(*ast.Ident); ok && imports[x.Name] {
					names = append(names, n.Name)
				}
			case *ast.Ident:
				if v.Name != "true" && v.Name != "false" && v.Name != "nil" && v.Name != "iota" {
					names = append(names, n.Name)
				}
			}
		}
		return names
	}
	return nil
}

func importName(is *ast.ImportSpec) string {
	if is.Name != nil {
		return is.Name.Name
	}
	p := strings.Trim(is.Path.Value, `"`)
	return p[strings.LastIndex(p, "/")+1:]
}

// linkedBy lists the module's packages that pkg links (go list -deps), pkg
// itself left out.
func (h *house) linkedBy(rel string) ([]string, error) {
	out, err := exec.Command("go", "list", "-deps", "./"+rel).Output()
	if err != nil {
		return nil, err
	}
	var linked []string
	for _, p := range strings.Fields(string(out)) {
		if h.inModule(p) && h.rel(p) != rel {
			linked = append(linked, h.rel(p))
		}
	}
	sort.Strings(linked)
	return linked, nil
}
