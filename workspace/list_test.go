package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func entryPaths(es []Entry) []string {
	var out []string
	for _, e := range es {
		p := e.Path
		if e.Dir {
			p += "/"
		}
		out = append(out, p)
	}
	return out
}

func TestListWalksOutsideGit(t *testing.T) {
	t.Parallel()
	f, dir := newFS(t, map[string]string{
		"go.mod": "module x\n", "cmd/x/main.go": "package main\n", "a.txt": "12345",
		".git/HEAD": "ref", ".lemmings/state": "s", "node_modules/m/i.js": "x",
	})
	_ = dir
	es, err := f.List("", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(entryPaths(es), " ")
	want := "a.txt cmd/ cmd/x/ cmd/x/main.go go.mod node_modules/ node_modules/m/ node_modules/m/i.js"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, e := range es {
		if e.Path == "a.txt" && e.Size != 5 {
			t.Errorf("size %d", e.Size)
		}
	}
}

func TestListHonoursGitignoreInGit(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{
		".gitignore": "build/\n*.log\n", "main.go": "package main\n", "pkg/p.go": "package p\n",
	})
	writeFiles(t, dir, map[string]string{"build/out.bin": "x", "debug.log": "x", "new.go": "package main\n", ".lemmings/x": "y"})
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	es, err := f.List(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(entryPaths(es), " ")
	want := ".gitignore main.go new.go pkg/ pkg/p.go"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A deleted tracked file is not listed.
	os.Remove(filepath.Join(dir, "main.go"))
	es, _ = f.List("", 0)
	if strings.Contains(strings.Join(entryPaths(es), " "), "main.go") {
		t.Error("deleted file listed")
	}
	sub, err := f.List("pkg", 0)
	if err != nil || len(sub) != 1 || sub[0].Path != "pkg/p.go" {
		t.Errorf("List(pkg) = %+v, %v", sub, err)
	}
}

func TestListTruncatesAndTreeSaysSo(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		files["dir/"+n+".txt"] = n
	}
	f, _ := newFS(t, files)
	es, err := f.List("dir", 3)
	if !errors.Is(err, ErrTruncated) || len(es) != 3 {
		t.Fatalf("List = %d entries, %v", len(es), err)
	}
	if !strings.Contains(err.Error(), "list a subdirectory") {
		t.Errorf("message %q", err)
	}
	tree, err := f.Tree("dir", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tree, "a.txt  1 B\nb.txt  1 B\nc.txt  1 B\n… listing") {
		t.Errorf("tree:\n%s", tree)
	}
}

func TestListRefusesEscapes(t *testing.T) {
	t.Parallel()
	f, _ := newFS(t, nil)
	var pe *PathError
	if _, err := f.List("..", 0); !errors.As(err, &pe) {
		t.Errorf("List(..) = %v", err)
	}
	if _, err := f.List(".git", 0); !errors.As(err, &pe) {
		t.Errorf("List(.git) = %v", err)
	}
}

func TestEntryString(t *testing.T) {
	t.Parallel()
	if s := (Entry{Path: "cmd", Dir: true}).String(); s != "cmd/" {
		t.Errorf("dir %q", s)
	}
	if s := (Entry{Path: "a/b.go", Size: 2048}).String(); s != "a/b.go  2.0 KB" {
		t.Errorf("file %q", s)
	}
}

func TestRenderTree(t *testing.T) {
	t.Parallel()
	got := RenderTree([]Entry{
		{Path: "cmd", Dir: true}, {Path: "cmd/main.go", Size: 1300}, {Path: "go.mod", Size: 20}, {Path: "big.bin", Size: 3 << 20},
	}, "")
	want := "cmd/\n  main.go  1.3 KB\ngo.mod  20 B\nbig.bin  3.0 MB\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGrep(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{
		".gitignore": "vendor/\n",
		"main.go":    "package main\n\nfunc main() {\n\tTODO()\n}\n",
		"lib/x.go":   "package lib\n// TODO: tidy\n",
		"lib/x.md":   "TODO in docs\n",
		"data.bin":   "TODO\x00binary",
	})
	writeFiles(t, dir, map[string]string{"vendor/v.go": "TODO vendored\n", "untracked.go": "// TODO new\n"})
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ms, err := f.Grep(ctx, `TODO`, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Path+":"+strconv.Itoa(m.Line)+":"+m.Text)
	}
	want := "lib/x.go:2:// TODO: tidy|lib/x.md:1:TODO in docs|main.go:4:\tTODO()|untracked.go:1:// TODO new"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("got  %s\nwant %s", g, want)
	}
	globs := map[string]int{"*.go": 3, "lib/": 2, "lib/**/*.md": 1, "*.{md,txt}": 1, "lib": 2, "cmd/": 0,
		"lib/x.go": 1, "./lib/x.md": 1, "li": 0, "l*/x.*": 2}
	for glob, n := range globs {
		ms, err := f.Grep(ctx, `TODO`, glob, 0)
		if err != nil || len(ms) != n {
			t.Errorf("glob %q: %d matches (%v), want %d", glob, len(ms), err, n)
		}
	}
	ms, err = f.Grep(ctx, `TODO`, "", 2)
	if !errors.Is(err, ErrTruncated) || len(ms) != 2 {
		t.Errorf("truncation: %d, %v", len(ms), err)
	}
	if _, err := f.Grep(ctx, `(unclosed`, "", 0); err == nil || !strings.Contains(err.Error(), "invalid regular expression") {
		t.Errorf("bad pattern: %v", err)
	}
	if _, err := f.Grep(ctx, `x`, "{a,b", 0); err == nil {
		t.Error("bad glob accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.Grep(cctx, `TODO`, "", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled grep: %v", err)
	}
}

func TestGrepCutsLongLines(t *testing.T) {
	t.Parallel()
	f, _ := newFS(t, map[string]string{"long.txt": "needle " + strings.Repeat("é", 400) + "\n"})
	ms, err := f.Grep(context.Background(), "needle", "", 0)
	if err != nil || len(ms) != 1 {
		t.Fatal(ms, err)
	}
	if len(ms[0].Text) > maxMatchLineLen+len("…") || !strings.HasSuffix(ms[0].Text, "…") {
		t.Errorf("line not cut: %d bytes", len(ms[0].Text))
	}
}

// The dialect itself is tested in internal/pathglob; here, what grep adds.
func TestCompileGlob(t *testing.T) {
	t.Parallel()
	for _, all := range []string{"", " ", ".", "*", "**", "./"} {
		if m, err := compileGlob(all); m != nil || err != nil {
			t.Errorf("%q should select everything: %v", all, err)
		}
	}
	m, err := compileGlob("./cmd/**/*.go")
	if err != nil {
		t.Fatal(err)
	}
	if !m("cmd/x/a.go") || m("a.go") {
		t.Error(`"./cmd/**/*.go" should match from the root, without its "./"`)
	}
	if _, err := compileGlob("*.{go"); err == nil || !strings.Contains(err.Error(), "*.{go") {
		t.Errorf("a broken glob: %v", err)
	}
}
