package implementor

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/rag"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// symbolMapBytes bounds the symbol map (about 1k tokens).
const symbolMapBytes = 4000

var goModule = regexp.MustCompile(`(?m)^module\s+(\S+)`)

// symbolMap lists the signatures of the task's target Go packages, the
// target files first, then the exported ones of the module's packages they
// import, then the packages that import them, within symbolMapBytes: what
// the model can call without searching, and who calls it.
func (pb *prefixBuilder) symbolMap() string {
	root := pb.d.Work.Dir()
	var dirs []string
	for _, f := range pb.t.TargetFiles {
		if strings.HasSuffix(f, ".go") {
			if d := path.Dir(filepath.ToSlash(f)); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) == 0 {
		return ""
	}
	module := ""
	if data, err := safefile.ReadFileUnder(root, "go.mod"); err == nil {
		if m := goModule.FindSubmatch(data); m != nil {
			module = string(m[1])
		}
	}
	var b strings.Builder
	var imported []string
	for _, d := range dirs {
		for _, imp := range writePackageSymbols(&b, root, d, false, pb.t.TargetFiles...) {
			if module != "" && strings.HasPrefix(imp, module+"/") {
				rel := strings.TrimPrefix(imp, module+"/")
				if !slices.Contains(dirs, rel) && !slices.Contains(imported, rel) {
					imported = append(imported, rel)
				}
			}
		}
	}
	for _, d := range imported {
		if b.Len() >= symbolMapBytes {
			break
		}
		writePackageSymbols(&b, root, d, true)
	}
	if module != "" && b.Len() < symbolMapBytes {
		writeImporters(&b, root, module, dirs)
	}
	out := b.String()
	if len(out) > symbolMapBytes {
		cut := strings.LastIndexByte(out[:symbolMapBytes], '\n')
		out = out[:max(cut, 0)] + "\n…"
	}
	return strings.TrimSpace(out)
}

// writePackageSymbols writes one package's signatures (exported only for an
// imported package), the files named in first before the others, and
// returns its imports.
func writePackageSymbols(b *strings.Builder, root, dir string, exportedOnly bool, first ...string) []string {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	rank := func(e os.DirEntry) int {
		if slices.Contains(first, path.Join(dir, e.Name())) {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(entries, func(a, b os.DirEntry) int { return rank(a) - rank(b) })
	var imports []string
	header := false
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := safefile.ReadFileUnder(root, filepath.Join(filepath.FromSlash(dir), name))
		if err != nil {
			continue
		}
		syms, ok := rag.GoSymbols(name, string(data))
		if !ok {
			continue
		}
		var decls []string
		for _, d := range syms.Decls {
			if !exportedOnly || exportedDecl(d) {
				decls = append(decls, d)
			}
		}
		if !header {
			kind := "package"
			if exportedOnly {
				kind = "imported package"
			}
			fmt.Fprintf(b, "%s %s (%s/):\n", kind, syms.Package, dir)
			header = true
		}
		if len(decls) > 0 {
			fmt.Fprintf(b, "  %s:\n", path.Join(dir, name))
			for _, d := range decls {
				fmt.Fprintf(b, "    %s\n", d)
			}
		}
		imports = append(imports, syms.Imports...)
	}
	sort.Strings(imports)
	return slices.Compact(imports)
}

// exportedDecl says whether a signature line declares an exported name.
func exportedDecl(d string) bool {
	rest := d
	for _, kw := range []string{"func ", "type ", "const ", "var "} {
		if r, ok := strings.CutPrefix(d, kw); ok {
			rest = r
			break
		}
	}
	if strings.HasPrefix(rest, "(") { // method: the name after the receiver
		if i := strings.Index(rest, ") "); i >= 0 {
			rest = rest[i+2:]
		}
	}
	return rest != "" && rest[0] >= 'A' && rest[0] <= 'Z'
}

// writeImporters names the module's packages that import the target
// packages, with the files that do: what a change may break.
func writeImporters(b *strings.Builder, root, module string, dirs []string) {
	targets := map[string]bool{}
	for _, d := range dirs {
		targets[path.Join(module, d)] = true
	}
	users := map[string][]string{} // importing dir → its files that import a target
	var order []string
	_ = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := e.Name()
		if e.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "vendor" || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		dir := path.Dir(rel)
		if slices.Contains(dirs, dir) {
			return nil
		}
		data, rerr := safefile.ReadFileUnder(root, filepath.FromSlash(rel))
		if rerr != nil {
			return nil
		}
		f, perr := parser.ParseFile(token.NewFileSet(), name, data, parser.ImportsOnly)
		if perr != nil {
			return nil
		}
		for _, spec := range f.Imports {
			if imp, _ := strconv.Unquote(spec.Path.Value); targets[imp] {
				if _, seen := users[dir]; !seen {
					order = append(order, dir)
				}
				users[dir] = append(users[dir], name)
				break
			}
		}
		return nil
	})
	if len(order) == 0 {
		return
	}
	b.WriteString("used by:\n")
	for _, d := range order {
		if b.Len() >= symbolMapBytes {
			b.WriteString("  …\n")
			return
		}
		fmt.Fprintf(b, "  %s/: %s\n", d, strings.Join(users[d], ", "))
	}
}
