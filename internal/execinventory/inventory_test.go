package execinventory

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// starters are the functions that start a process, by import path.
var starters = map[string][]string{
	"os/exec":               {"Command", "CommandContext", "Cmd"}, // Cmd: an exec.Cmd made by hand
	"os":                    {"StartProcess"},
	"syscall":               {"Exec", "ForkExec", "StartProcess"},
	"golang.org/x/sys/unix": {"Exec"},
}

// site is one place that starts a process: a file of the module and the
// function (Type.Method for a method) or package-level name it is in.
type site struct{ file, fn string }

func (s site) String() string { return "`" + s.file + "` `" + s.fn + "`" }

// moduleRoot is the folder of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// sites walks the module's non-test Go files as the go tool sees them
// (testdata and folders whose name starts with . or _ left out) and
// returns every place that names a starter, with how many times.
func sites(t *testing.T, root string) map[site]int {
	t.Helper()
	found := map[site]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		local := map[string][]string{} // the file's name for an import → its starters
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			fns, ok := starters[path]
			if !ok {
				continue
			}
			n := filepath.Base(path)
			if imp.Name != nil {
				n = imp.Name.Name
			}
			if n == "." {
				t.Errorf("%s imports %s with a dot: its process starts cannot be told apart", rel, path)
			}
			if n != "_" {
				local[n] = fns
			}
		}
		if len(local) == 0 {
			return nil
		}
		for _, decl := range f.Decls {
			in := declName(decl)
			literal := map[*ast.SelectorExpr]bool{} // the types of composite literals
			ast.Inspect(decl, func(n ast.Node) bool {
				if cl, ok := n.(*ast.CompositeLit); ok {
					if sel, ok := cl.Type.(*ast.SelectorExpr); ok {
						literal[sel] = true
					}
				}
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				for _, fn := range local[x.Name] {
					// A function named (called or taken as a value); the
					// type Cmd only where one is made (exec.Cmd{…}).
					if sel.Sel.Name == fn && (fn != "Cmd" || literal[sel]) {
						found[site{rel, in}]++
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// declName names a top-level declaration: a function, Type.Method, or the
// first name of a var, const or type block.
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return d.Name.Name
		}
		typ := d.Recv.List[0].Type
		if s, ok := typ.(*ast.StarExpr); ok {
			typ = s.X
		}
		if ix, ok := typ.(*ast.IndexExpr); ok {
			typ = ix.X
		}
		if id, ok := typ.(*ast.Ident); ok {
			return id.Name + "." + d.Name.Name
		}
		return d.Name.Name
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.ValueSpec:
				return s.Names[0].Name
			case *ast.TypeSpec:
				return s.Name.Name
			}
		}
	}
	return "?"
}

// inventoryRow is a row of the inventory's table: its first cell names a
// file and a function, each in backquotes.
var inventoryRow = regexp.MustCompile("^\\| `([^`]+\\.go)` `([^`]+)` \\|")

// inventory reads the table of docs/security.md's section "Every process
// lemmings starts".
func inventory(t *testing.T, root string) map[site]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Every process lemmings starts\n")
	if !ok {
		t.Fatal(`docs/security.md has no section "## Every process lemmings starts"`)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	rows := map[site]bool{}
	for _, line := range strings.Split(section, "\n") {
		if m := inventoryRow.FindStringSubmatch(line); m != nil {
			s := site{m[1], m[2]}
			if rows[s] {
				t.Errorf("docs/security.md lists %s twice", s)
			}
			rows[s] = true
		}
	}
	return rows
}

// Every place that starts a process is in docs/security.md's inventory, and
// the inventory lists nothing else.
func TestEveryProcessLemmingsStartsIsInTheInventory(t *testing.T) {
	root := moduleRoot(t)
	found, listed := sites(t, root), inventory(t, root)
	var missing, stale []string
	for s := range found {
		if !listed[s] {
			missing = append(missing, s.String())
		}
	}
	for s := range listed {
		if found[s] == 0 {
			stale = append(stale, s.String())
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("these start a process and are not in docs/security.md's inventory (say what each runs, where, with which environment, inside or outside the sandbox, and what a repository or a model can choose of it):\n| %s |", strings.Join(missing, " |\n| "))
	}
	if len(stale) > 0 {
		t.Errorf("docs/security.md's inventory lists what starts no process (any more):\n%s", strings.Join(stale, "\n"))
	}
	if len(found) < 10 {
		t.Errorf("only %d places found: the walk missed the module", len(found))
	}
}
