package nodes

import (
	"errors"
	"strings"
	"testing"
)

const ctxGoFile = `package stats

import "errors"

// Sum adds xs.
func Sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// Mean averages xs.
func Mean(xs []int) (float64, error) {
	if len(xs) == 0 {
		return 0, errors.New("empty")
	}
	total := Sum(xs)
	n := len(xs)
	return float64(total) / float64(n), nil
}

func Other() {}
`

func TestTheReviewSeesTheChangedFunctionWhole(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/stats.go b/stats.go\n--- a/stats.go\n+++ b/stats.go\n@@ -19,3 +19,3 @@ func Mean(xs []int) (float64, error) {\n \tn := len(xs)\n-\treturn float64(total / n), nil\n+\treturn float64(total) / float64(n), nil\n }\n"
	read := func(p string) (string, error) {
		if p == "stats.go" {
			return ctxGoFile, nil
		}
		return "", errors.New("no such file")
	}
	got := changedCode(diff, read, nil)
	for _, want := range []string{"### stats.go:14-22", "// Mean averages xs.", "if len(xs) == 0 {", "return float64(total) / float64(n), nil"} {
		if !strings.Contains(got, want) {
			t.Errorf("changed code lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "func Sum") || strings.Contains(got, "func Other") {
		t.Errorf("unchanged functions must stay out:\n%s", got)
	}
	if changedCode(diff, read, func(string) bool { return true }) != "" {
		t.Error("a skipped file must not be shown")
	}
}

func TestOutsideGoTheBlockIsFoundByIndentation(t *testing.T) {
	t.Parallel()
	src := "def a():\n    return 1\n\ndef b(x):\n    y = x * 2\n    return y\n\ndef c():\n    pass\n"
	spans := enclosingSpans("m.py", src, []int{5})
	if len(spans) != 1 || spans[0].from != 4 || spans[0].to != 7 {
		t.Errorf("spans = %+v, want def b (lines 4-7)", spans)
	}
	js := "function a() {\n  return 1;\n}\n\nfunction b() {\n  let x = 2;\n  return x;\n}\n"
	spans = enclosingSpans("m.js", js, []int{6})
	if len(spans) != 1 || spans[0].from != 5 || spans[0].to != 8 {
		t.Errorf("spans = %+v, want function b with its closing brace (5-8)", spans)
	}
}

func TestChangedLinesFollowTheHunks(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n one\n+two\n three\n@@ -10 +11,2 @@\n-x\n+y\n+z\ndiff --git a/gone.txt b/gone.txt\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
	got := changedLines(diff)
	if want := []int{2, 11, 11, 12}; !equalInts(got["a.txt"], want) {
		t.Errorf("a.txt lines = %v, want %v", got["a.txt"], want)
	}
	if _, ok := got["gone.txt"]; ok {
		t.Error("a deleted file has no code to show")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
