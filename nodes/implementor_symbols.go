package nodes

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/lemmings-dev/lemmings/rag"
)

// symbolMapBytes bounds the symbol map (about 1k tokens).
const symbolMapBytes = 4000

var goModule = regexp.MustCompile(`(?m)^module\s+(\S+)`)

// symbolMap lists the signatures of the task's target Go packages, then the
// exported ones of the module's packages they import, within symbolMapBytes:
// what the model can call without searching.
func (l *implLoop) symbolMap() string {
	root := l.d.Work.Dir()
	var dirs []string
	for _, f := range l.t.TargetFiles {
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
	if data, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
		if m := goModule.FindSubmatch(data); m != nil {
			module = string(m[1])
		}
	}
	var b strings.Builder
	var imported []string
	for _, d := range dirs {
		for _, imp := range writePackageSymbols(&b, root, d, false) {
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
	out := b.String()
	if len(out) > symbolMapBytes {
		cut := strings.LastIndexByte(out[:symbolMapBytes], '\n')
		out = out[:max(cut, 0)] + "\n…"
	}
	return strings.TrimSpace(out)
}

// writePackageSymbols writes one package's signatures (exported only for an
// imported package) and returns its imports.
func writePackageSymbols(b *strings.Builder, root, dir string, exportedOnly bool) []string {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	var imports []string
	header := false
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), name))
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
