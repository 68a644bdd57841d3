package workspace

import (
	"fmt"
	"strings"
	"testing"
)

// goSource makes a Go file of n lines: small functions with tab indentation.
func goSource(n int) string {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 0; b.Len() == 0 || strings.Count(b.String(), "\n") < n-5; i++ {
		fmt.Fprintf(&b, "// F%d returns its argument plus %d.\nfunc F%d(x int) int {\n\ty := x + %d\n\treturn y\n}\n\n", i, i, i, i)
	}
	return b.String()
}

func benchApply(b *testing.B, e Edit, kind string) {
	content := goSource(2000)
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out, info, err := applyEdit(content, e)
		if kind == "" {
			if err == nil {
				b.Fatal("expected no match")
			}
			continue
		}
		if err != nil || info.kind != kind || out == content {
			b.Fatalf("%v %q", err, info.kind)
		}
	}
	b.ReportMetric(float64(strings.Count(content, "\n")), "lines")
}

// Edits near the end of the file: the worst case for a scan.
func BenchmarkApplyEdit2000LinesExact(b *testing.B) {
	benchApply(b, Edit{Search: "func F280(x int) int {\n\ty := x + 280\n\treturn y\n}\n", Replace: "func F280(x int) int {\n\treturn x + 280\n}\n"}, MatchExact)
}

func BenchmarkApplyEdit2000LinesTolerantIndentation(b *testing.B) {
	benchApply(b, Edit{Search: "func F280(x int) int {\n    y := x + 280\n    return y\n}\n", Replace: "func F280(x int) int {\n    return x + 280\n}\n"}, MatchIndentation)
}

func BenchmarkApplyEdit2000LinesTolerantTrailingSpace(b *testing.B) {
	benchApply(b, Edit{Search: "func F280(x int) int {  \n\ty := x + 280 \n", Replace: "func F280(x int) int {\n\ty := x + 1\n"}, MatchWhitespace)
}

func BenchmarkApplyEdit2000LinesNoMatchClosest(b *testing.B) {
	benchApply(b, Edit{Search: "func F280(x int) int {\n\tz := x * 280\n\treturn z\n}\n", Replace: "x\n"}, "")
}

func BenchmarkCommit(b *testing.B) {
	dir := newRepo(b, map[string]string{"a.txt": "0\n", "go.mod": "module x\n"})
	r, err := OpenRepo(bg(), dir)
	if err != nil {
		b.Fatal(err)
	}
	wt, err := r.CreateWorktree(bg(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	fsys := wt.FS()
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		b.StopTimer()
		if err := fsys.WriteFile("a.txt", []byte(fmt.Sprintf("%d\n", i))); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := wt.Commit(bg(), fmt.Sprintf("task %d", i), map[string]string{"Lemmings-Run": "bench", "Lemmings-Task": fmt.Sprint(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDiff(b *testing.B) {
	dir := newRepo(b, map[string]string{"a.txt": "0\n"})
	r, _ := OpenRepo(bg(), dir)
	wt, err := r.CreateWorktree(bg(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	writeFiles(b, wt.Dir(), map[string]string{"a.txt": "1\n", "new.txt": "n\n"})
	for b.Loop() {
		if d, err := wt.Diff(bg(), ""); err != nil || d == "" {
			b.Fatal(err)
		}
	}
}
