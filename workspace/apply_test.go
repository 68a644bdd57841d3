package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestApplySeveralFilesAndEdits(t *testing.T) {
	t.Parallel()
	f, dir := newFS(t, map[string]string{
		"a.go": "package a\n\nfunc A() int { return 1 }\n",
		"b.go": "package b\n\nvar B = 1\nvar C = 2\n",
	})
	text := "a.go\n```go\n<<<<<<< SEARCH\nfunc A() int { return 1 }\n=======\nfunc A() int { return 2 }\n>>>>>>> REPLACE\n```\n" +
		"b.go\n```go\n<<<<<<< SEARCH\nvar B = 1\n=======\nvar B = 10\n>>>>>>> REPLACE\n```\n" +
		"```go\n<<<<<<< SEARCH\n   var C = 2\n=======\n   var C = 20\n>>>>>>> REPLACE\n```\n" +
		"docs/new.md\n```\n<<<<<<< SEARCH\n=======\n# New\n>>>>>>> REPLACE\n```\n"
	edits, err := ParseEditBlocks(text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Apply(edits)
	if err != nil {
		t.Fatal(err)
	}
	if s := readFile(t, filepath.Join(dir, "a.go")); !strings.Contains(s, "return 2") {
		t.Errorf("a.go = %q", s)
	}
	if s := readFile(t, filepath.Join(dir, "b.go")); s != "package b\n\nvar B = 10\nvar C = 20\n" {
		t.Errorf("b.go = %q", s)
	}
	if s := readFile(t, filepath.Join(dir, "docs/new.md")); s != "# New\n" {
		t.Errorf("docs/new.md = %q", s)
	}
	want := []EditResult{
		{Path: "a.go", Match: MatchExact, Line: 3},
		{Path: "b.go", Match: MatchExact, Line: 3},
		{Path: "b.go", Match: MatchIndentation, Line: 4},
		{Path: "docs/new.md", Match: MatchCreate, Line: 1, Created: true},
	}
	if len(res) != len(want) {
		t.Fatalf("results %+v", res)
	}
	for i := range want {
		if res[i] != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, res[i], want[i])
		}
	}
	wantText := []string{
		"a.go: edited at line 3",
		"b.go: edited at line 3",
		"b.go: edited at line 4 (matched ignoring indentation, replacement re-indented to fit; check the result)",
		"docs/new.md: created",
	}
	for i, w := range wantText {
		if got := res[i].String(); got != w {
			t.Errorf("String %d = %q, want %q", i, got, w)
		}
	}
}

func TestApplyIsAllOrNothing(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "one\n", "b.txt": "two\n"}
	f, dir := newFS(t, files)
	_, err := f.Apply([]Edit{
		{Path: "a.txt", Search: "one\n", Replace: "ONE\n"},
		{Path: "new.txt", Replace: "fresh\n"},
		{Path: "b.txt", Search: "three\n", Replace: "THREE\n"},
	})
	var ee *EditError
	if !errors.As(err, &ee) {
		t.Fatalf("got %v, want *EditError", err)
	}
	if ee.Index != 2 || ee.Path != "b.txt" {
		t.Errorf("failed edit %d %q, want 2 b.txt", ee.Index, ee.Path)
	}
	var nm *NoMatchError
	if !errors.As(err, &nm) {
		t.Errorf("cause %v, want *NoMatchError", ee.Err)
	}
	if !strings.Contains(err.Error(), "edit 3 of 3 (b.txt)") || !strings.Contains(err.Error(), "no file was changed") {
		t.Errorf("message %q", err)
	}
	for p, c := range files {
		if s := readFile(t, filepath.Join(dir, p)); s != c {
			t.Errorf("%s changed to %q", p, s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("new.txt was created by a failed batch")
	}
}

func TestApplyToMissingFileNeedsEmptySearch(t *testing.T) {
	t.Parallel()
	f, _ := newFS(t, nil)
	_, err := f.Apply([]Edit{{Path: "nope.go", Search: "x\n", Replace: "y\n"}})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "leave the SEARCH section empty") {
		t.Fatalf("got %v", err)
	}
}

func TestApplyEditsBuildOnEachOther(t *testing.T) {
	t.Parallel()
	f, dir := newFS(t, nil)
	res, err := f.Apply([]Edit{
		{Path: "n.txt", Replace: "a\n"},
		{Path: "n.txt", Search: "a\n", Replace: "b\n"},
		{Path: "n.txt", Search: "", Replace: "c\n"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := readFile(t, filepath.Join(dir, "n.txt")); s != "b\nc\n" {
		t.Errorf("n.txt = %q", s)
	}
	if res[2].Match != MatchAppend || !res[2].Created {
		t.Errorf("third result %+v", res[2])
	}
}

func TestApplyRefusesBinaryFiles(t *testing.T) {
	t.Parallel()
	f, _ := newFS(t, map[string]string{"img.bin": "PNG\x00\x01data"})
	if _, err := f.Apply([]Edit{{Path: "img.bin", Search: "data", Replace: "x"}}); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("got %v", err)
	}
}
