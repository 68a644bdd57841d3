package nodes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
)

// The events still emitted as maps (graph.Emit with a kind's name) write
// only keys their payload type in package events declares, so every reader
// decodes them whole and events.jsonl keeps one format per kind.
func TestEveryEventEmittedAsAMapHasItsPayloadType(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				return true
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 3 || !isSelector(call.Fun, "graph", "Emit") {
					return true
				}
				lit, ok := call.Args[1].(*ast.BasicLit)
				if !ok {
					return true
				}
				kind, _ := strconv.Unquote(lit.Value)
				found++
				where := fset.Position(call.Pos()).String()
				p, err := events.Decode(graph.Event{Kind: graph.EventCustom, Name: kind, Data: []byte(`{}`)})
				if err != nil || p == nil {
					t.Errorf("%s: event %q has no payload type in package events", where, kind)
					return true
				}
				fields := jsonNames(reflect.TypeOf(p).Elem())
				for _, key := range mapKeys(fn.Body, call.Args[2]) {
					if !fields[key] {
						t.Errorf("%s: event %q writes %q, which events.%s does not declare", where, kind, key, reflect.TypeOf(p).Elem().Name())
					}
				}
				return true
			})
			return false
		})
	}
	if found == 0 {
		t.Fatal("no event emitted as a map found: the test looks at nothing")
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

// mapKeys lists the string keys of the map literal data is, or of the map
// variable data names as its function builds it (its literal and the keys
// set on it).
func mapKeys(body *ast.BlockStmt, data ast.Expr) []string {
	var keys []string
	fromLit := func(e ast.Expr) {
		if cl, ok := e.(*ast.CompositeLit); ok {
			for _, el := range cl.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if bl, ok := kv.Key.(*ast.BasicLit); ok {
						k, _ := strconv.Unquote(bl.Value)
						keys = append(keys, k)
					}
				}
			}
		}
	}
	id, ok := data.(*ast.Ident)
	if !ok {
		fromLit(data)
		return keys
	}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, lhs := range as.Lhs {
			switch l := lhs.(type) {
			case *ast.Ident:
				if l.Name == id.Name && i < len(as.Rhs) {
					fromLit(as.Rhs[i])
				}
			case *ast.IndexExpr:
				if x, ok := l.X.(*ast.Ident); ok && x.Name == id.Name {
					if bl, ok := l.Index.(*ast.BasicLit); ok {
						k, _ := strconv.Unquote(bl.Value)
						keys = append(keys, k)
					}
				}
			}
		}
		return true
	})
	return keys
}

func jsonNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}
