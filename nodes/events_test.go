package nodes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every event the workflow sends is a typed payload of package events
// (events.Emit): no node writes an event as a map with graph.Emit, so every
// reader decodes each kind whole and events.jsonl keeps one format per kind.
func TestNoNodeEmitsAnEventAsAMap(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir(".", func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Go file found: the test looks at nothing")
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && isSelector(call.Fun, "graph", "Emit") {
				t.Errorf("%s: graph.Emit writes an untyped event: emit a payload of package events with events.Emit", fset.Position(call.Pos()))
			}
			return true
		})
	}
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == name
}
