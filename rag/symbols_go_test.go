package rag

import (
	"strings"
	"testing"
)

func TestGoSymbolsAreTheSignaturesWithoutBodies(t *testing.T) {
	src := `package textstats

import (
	"sort"
	"strings"
)

// MaxWords bounds the input.
const MaxWords, MinWords = 100, 1

// Stats sums a text up.
type Stats struct {
	Words int
	Mean  float64
}

type Counter interface{ Count(s string) int }

// Mean returns the mean word length.
func Mean(text string) float64 {
	return float64(len(text))
}

func (s *Stats) Add(w string, n int) error { s.Words += n; return nil }

func top[T any](xs []T) T { sort.Strings(nil); return xs[0] }
`
	got, ok := GoSymbols("textstats.go", src)
	if !ok {
		t.Fatal("did not parse")
	}
	if got.Package != "textstats" || strings.Join(got.Imports, ",") != "sort,strings" {
		t.Errorf("package %q imports %v", got.Package, got.Imports)
	}
	want := []string{
		"const MaxWords, MinWords",
		"type Stats struct {Words int; Mean float64}",
		"type Counter interface{ Count(s string) int }",
		"func Mean(text string) float64",
		"func (s *Stats) Add(w string, n int) error",
		"func top[T any](xs []T) T",
	}
	if len(got.Decls) != len(want) {
		t.Fatalf("decls %q", got.Decls)
	}
	for i, w := range want {
		if got.Decls[i] != w {
			t.Errorf("decl %d = %q, want %q", i, got.Decls[i], w)
		}
	}
	if _, ok := GoSymbols("bad.go", "package x\nfunc ("); ok {
		t.Error("broken source should not parse")
	}
}
