package nodes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every section a prompt of the workflow carries is titled by a name of
// nodes/prompts (names.go), never by literal text: the scripted teams find
// sections by those names, so a retitled section is one edit there.
func TestEveryPromptSectionIsANamedOne(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	impl, err := filepath.Glob("implementor/*.go") // the Implementor's prompts
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, impl...)
	fset := token.NewFileSet()
	titles := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var title ast.Expr
			switch n := n.(type) {
			case *ast.KeyValueExpr: // llm.Section{Title: …}
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Title" && isSectionLit(f, n) {
					title = n.Value
				}
			case *ast.AssignStmt: // title := … (a section built in steps)
				for i, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); ok && id.Name == "title" && i < len(n.Rhs) {
						title = n.Rhs[i]
					}
				}
			}
			if title == nil {
				return true
			}
			titles++
			if sel, ok := title.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "prompts" && strings.HasPrefix(sel.Sel.Name, "Sec") {
					return true
				}
			}
			if _, ok := title.(*ast.BasicLit); ok {
				t.Errorf("%s: a section titled by literal text; name it in nodes/prompts/names.go", fset.Position(title.Pos()))
			}
			return true
		})
	}
	if titles < 30 {
		t.Errorf("found %d section titles: the walk lost the prompts' sections", titles)
	}
}

// isSectionLit: the key sits in a composite literal of llm.Section, or of an
// element of []llm.Section (written without the type).
func isSectionLit(f *ast.File, kv *ast.KeyValueExpr) bool {
	var found bool
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok || found {
			return !found
		}
		for _, e := range cl.Elts {
			if e == kv {
				found = cl.Type == nil || isSectionType(cl.Type)
				return false
			}
		}
		return true
	})
	return found
}

func isSectionType(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Section"
}
