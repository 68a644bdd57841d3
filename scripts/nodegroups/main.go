// Command nodegroups measures how package nodes is divided into rooms (issue
// 27): which node group's files use a function or method another group's
// file defines, how many methods *Deps has and how many names nodes
// exports; with -uses, which names of nodes other packages use and which
// files read the run state's fields. It type-checks the non-test files with
// the export data `go list -export` leaves, so it needs only the go command.
//
//	go run ./scripts/nodegroups            # groups, *Deps methods, exports
//	go run ./scripts/nodegroups -v         # and every cross-group use
//	go run ./scripts/nodegroups -uses ./serve ./inspect ./cmd/lemmings
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const (
	nodesPath    = "github.com/lemmings-dev/lemmings/nodes"
	runstatePath = "github.com/lemmings-dev/lemmings/runstate"
)

// groupOf names the node group (docs/architecture.md "The rooms of nodes",
// nodes/doc.go) a file of nodes belongs to; "" for the files every node
// shares (workflow, state, deps, settings, llmcall, …).
func groupOf(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".go")
	switch {
	case base == "scope":
		return "scope"
	case base == "planner" || strings.HasPrefix(base, "plan_") || base == "split":
		return "planner"
	case strings.HasPrefix(base, "implementor") || base == "tools":
		return "implementor"
	case strings.HasPrefix(base, "qa") || base == "escalate":
		return "qa"
	case base == "complete" || base == "knowledge_use":
		return "complete"
	case base == "assessor":
		return "assessor"
	case base == "polish":
		return "polish"
	case strings.HasPrefix(base, "report") || base == "gist":
		return "report"
	case strings.HasPrefix(base, "sup_"):
		return "supervisors"
	case base == "quick", base == "evidence", base == "status":
		return base
	case base == "hooks" || base == "board":
		return "hooks"
	}
	return ""
}

type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

func goList(args ...string) ([]listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %v: %w", args, err)
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

type checked struct {
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
	pkg   *types.Package
}

// load type-checks the non-test files of the packages matched by patterns.
func load(patterns ...string) ([]checked, error) {
	deps, err := goList(append([]string{"-export", "-deps"}, patterns...)...)
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	for _, p := range deps {
		exports[p.ImportPath] = p.Export
	}
	targets, err := goList(patterns...)
	if err != nil {
		return nil, err
	}
	var out []checked
	for _, t := range targets {
		fset := token.NewFileSet()
		imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			if exports[path] == "" {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(exports[path])
		})
		var files []*ast.File
		for _, name := range t.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(t.Dir, name), nil, 0)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		pkg, _ := conf.Check(t.ImportPath, fset, files, info)
		out = append(out, checked{fset: fset, files: files, info: info, pkg: pkg})
	}
	return out, nil
}

func main() {
	verbose := flag.Bool("v", false, "list every cross-group use")
	uses := flag.Bool("uses", false, "report the names of nodes the packages given as arguments use")
	flag.Parse()
	var err error
	if *uses {
		err = reportUses(flag.Args())
	} else {
		err = reportNodes(*verbose)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodegroups:", err)
		os.Exit(1)
	}
}

func reportNodes(verbose bool) error {
	pkgs, err := load("./nodes")
	if err != nil {
		return err
	}
	c := pkgs[0]
	defined := map[types.Object]string{} // function or method → file
	for id, obj := range c.info.Defs {
		if _, ok := obj.(*types.Func); ok {
			defined[obj] = filepath.Base(c.fset.Position(id.Pos()).Filename)
		}
	}
	pairs := map[[2]string]map[string]bool{}
	toShared := map[string]map[string]bool{}
	for id, obj := range c.info.Uses {
		def, ok := defined[obj]
		if !ok {
			continue
		}
		from := filepath.Base(c.fset.Position(id.Pos()).Filename)
		gFrom, gTo := groupOf(from), groupOf(def)
		if gFrom == "" || gFrom == gTo {
			continue
		}
		what := fmt.Sprintf("%s → %s (%s)", from, obj.Name(), def)
		if gTo == "" {
			if toShared[gFrom] == nil {
				toShared[gFrom] = map[string]bool{}
			}
			toShared[gFrom][def] = true
			continue
		}
		k := [2]string{gFrom, gTo}
		if pairs[k] == nil {
			pairs[k] = map[string]bool{}
		}
		pairs[k][what] = true
	}
	keys := make([][2]string, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	viaHooks := 0
	for _, k := range keys {
		if k[1] == "hooks" {
			viaHooks++
		}
	}
	fmt.Printf("dependencies between node groups: %d (%d of them on hooks)\n", len(keys), viaHooks)
	for _, k := range keys {
		fmt.Printf("  %s → %s (%d uses)\n", k[0], k[1], len(pairs[k]))
		if verbose {
			var ws []string
			for w := range pairs[k] {
				ws = append(ws, w)
			}
			sort.Strings(ws)
			for _, w := range ws {
				fmt.Printf("      %s\n", w)
			}
		}
	}
	if verbose {
		fmt.Println("shared files each group uses:")
		var gs []string
		for g := range toShared {
			gs = append(gs, g)
		}
		sort.Strings(gs)
		for _, g := range gs {
			var fs []string
			for f := range toShared[g] {
				fs = append(fs, f)
			}
			sort.Strings(fs)
			fmt.Printf("  %s: %s\n", g, strings.Join(fs, " "))
		}
	}
	deps := c.pkg.Scope().Lookup("Deps")
	ptr := types.NewPointer(deps.Type())
	ms := types.NewMethodSet(ptr)
	exported := 0
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Obj().Exported() {
			exported++
		}
	}
	fmt.Printf("methods on *Deps: %d (%d exported)\n", ms.Len(), exported)
	fmt.Printf("exported names of nodes: %d\n", len(exportedNames(c.pkg)))
	return nil
}

// exportedNames are the package-level exported names, fields and methods
// of exported types (what another package can name).
func exportedNames(p *types.Package) []string {
	var out []string
	for _, n := range p.Scope().Names() {
		obj := p.Scope().Lookup(n)
		if !obj.Exported() {
			continue
		}
		out = append(out, n)
	}
	return out
}

func reportUses(patterns []string) error {
	pkgs, err := load(patterns...)
	if err != nil {
		return err
	}
	for _, c := range pkgs {
		names := map[string]bool{}
		fields := map[string]map[string]bool{} // field of WorkflowState → files
		for id, obj := range c.info.Uses {
			if obj.Pkg() == nil || obj.Pkg().Path() != nodesPath || c.pkg.Path() == nodesPath {
				continue
			}
			if obj.Parent() == obj.Pkg().Scope() {
				names[obj.Name()] = true
			}
			_ = id
		}
		for sel, s := range c.info.Selections {
			if s.Kind() != types.FieldVal || !isWorkflowState(s.Recv()) || c.pkg.Path() == nodesPath {
				continue
			}
			file := filepath.Base(c.fset.Position(sel.Pos()).Filename)
			name := s.Obj().Name()
			if fields[name] == nil {
				fields[name] = map[string]bool{}
			}
			fields[name][file] = true
		}
		var ns []string
		for n := range names {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		fmt.Printf("%s: %d exported names of nodes: %s\n", c.pkg.Path(), len(ns), strings.Join(ns, " "))
		var fs []string
		for f := range fields {
			fs = append(fs, f)
		}
		sort.Strings(fs)
		for _, f := range fs {
			var files []string
			for file := range fields[f] {
				files = append(files, file)
			}
			sort.Strings(files)
			fmt.Printf("    field %s: %s\n", f, strings.Join(files, " "))
		}
		readers := map[string]bool{}
		for _, files := range fields {
			for f := range files {
				readers[f] = true
			}
		}
		fmt.Printf("    run-state fields read: %d fields in %d files\n", len(fields), len(readers))
	}
	return nil
}

// isWorkflowState: t is the run's state (runstate.State) or a pointer to it.
func isWorkflowState(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	switch n.Obj().Pkg().Path() {
	case runstatePath:
		return n.Obj().Name() == "State"
	case nodesPath:
		return n.Obj().Name() == "WorkflowState"
	}
	return false
}
