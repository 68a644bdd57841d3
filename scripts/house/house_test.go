package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAPackagesFloorIsReadFromItsPath(t *testing.T) {
	for _, tc := range []struct {
		pkg  string
		want string
	}{
		{"internal/textutil", "leaves"},
		{"internal/testkit/gitfixture", "kits"},
		{"llm/llmtest", "kits"},
		{"graph/graphtest", "kits"},
		{"llm/scripted", "services"},
		{"runstate", "words"},
		{"nodes/implementor", "workflow"},
		{"cmd/lemmings/internal/doctor", "commands"},
		{"sandbox/internal/helperplan", "leaves"},
	} {
		i, err := floorOf(tc.pkg)
		if err != nil || floors[i].name != tc.want {
			t.Errorf("floorOf(%s) = %d (%v), want the %s floor", tc.pkg, i, err, tc.want)
		}
	}
	if _, err := floorOf("newthing"); err == nil {
		t.Error("a package no pattern matches must be an error, so that it gets a floor on purpose")
	}
	if matchPattern("internal/*", "internal/testkit/x") {
		t.Error(`"internal/*" matched a package two levels below internal`)
	}
}

// parsed makes a house of one package x holding src.
func parsed(t *testing.T, src string) *house {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "x.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &house{module: "example.com/m", root: dir, fset: fset,
		pkgs: map[string]*pkg{"x": {files: []*ast.File{f}}}, order: []string{"x"}}
}

func TestAliasReExportsAreNamesOfTheModuleNotValues(t *testing.T) {
	h := parsed(t, `package x

import (
	"time"
	"example.com/m/runstate"
)

type State = runstate.State
type own = runstate.State
const Every = time.Second
const Key = runstate.KeyMaxTasks
var Read = runstate.Read
const Local = Key
var Err = runstate.New("x")
`)
	var got []string
	for _, a := range h.aliases() {
		got = append(got, a[strings.LastIndex(a, " ")+1:])
	}
	if want := []string{"State", "Key", "Read", "Local"}; !slices.Equal(got, want) {
		t.Errorf("aliases = %v, want %v (a standard library value, an unexported alias and a call are not re-exports)", got, want)
	}
}

func TestATableIsCountedApartFromALongFunction(t *testing.T) {
	var b strings.Builder
	b.WriteString("package x\n\nfunc table() []int {\n\treturn []int{\n")
	for range 120 {
		b.WriteString("\t\t1,\n")
	}
	b.WriteString("\t}\n}\n\nfunc long() {\n")
	for range 120 {
		b.WriteString("\tprintln()\n")
	}
	b.WriteString("}\n")
	longs := parsed(t, b.String()).longFunctions(100)
	if len(longs) != 2 {
		t.Fatalf("long functions = %v, want both", longs)
	}
	for _, l := range longs {
		if want := strings.HasSuffix(l.name, ":table"); l.table != want {
			t.Errorf("%s: table = %v, want %v", l.name, l.table, want)
		}
	}
}

func TestTheFirstGuessIsTheFirstFileOfTheBehavioursRow(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "architecture.md")
	text := "# x\n\n| a run's final status | `other.go` |\n\n### Where to find it\n\n| behaviour | files |\n|---|---|\n" +
		"| a run's final status (its end) | `runstate/end.go` (`Settle`), `nodes/evidence.go` |\n### Next\n| planned draws | `x.go` |\n"
	if err := os.WriteFile(doc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readGuesses(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["a run's final status"] != "runstate/end.go" {
		t.Errorf("guesses = %v, want only the row under the heading, its first file", got)
	}
}
