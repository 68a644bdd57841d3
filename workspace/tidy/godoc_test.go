package tidy

import (
	"os"
	"strings"
	"testing"
)

// What Qwen2.5-Coder-1.5B returned for the demo's MeanWordLength fix, in
// kind: the fix made, the package comment and a function's comment gone.
const textstatsRewrite = `package textstats

import "strings"

func Words(text string) []string {
	return strings.Fields(text)
}

// WordCount counts the words.
func WordCount(text string) int {
	return len(Words(text))
}

func MeanWordLength(text string) float64 {
	words := Words(text)
	if len(words) == 0 {
		return 0
	}
	total := 0
	for _, w := range words {
		total += len(w)
	}
	return float64(total) / float64(len(words))
}
`

func TestARewriteGetsBackTheDocCommentsItDropped(t *testing.T) {
	old, err := os.ReadFile("../../demo/testdata/repo/textstats.go")
	if err != nil {
		t.Fatal(err)
	}
	r := File("textstats.go", string(old), textstatsRewrite, nil)
	for _, want := range []string{
		"// Package textstats computes simple statistics about text.\npackage textstats",
		"// Words splits text into words on white space.\nfunc Words(",
		"// WordCount counts the words.\nfunc WordCount(", // the rewrite's own comment stays
		"float64(total) / float64(len(words))",
	} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("tidied file lacks %q:\n%s", want, r.Content)
		}
	}
	if strings.Contains(r.Content, "returns the number of words") {
		t.Errorf("the old comment replaced the rewrite's own:\n%s", r.Content)
	}
	if n := strings.Count(r.Content, "// Package textstats"); n != 1 {
		t.Errorf("package comment %d times", n)
	}
	if notes := strings.Join(r.Notes, "; "); !strings.Contains(notes, "the package comment") || !strings.Contains(notes, "the comment of Words") {
		t.Errorf("notes %q", notes)
	}
	// Tidied again, it is what it is.
	if again := File("textstats.go", string(old), r.Content, nil); again.Content != r.Content || len(again.Notes) != 0 {
		t.Errorf("a second pass changed it: %q\n%s", again.Notes, again.Content)
	}
}

// A method's comment comes back by its receiver's type, an indented one as
// it was; a new file has nothing to restore.
func TestAMethodsDroppedCommentComesBack(t *testing.T) {
	old := "package s\n\n// Stack holds ints.\ntype Stack struct{ xs []int }\n\n// Push adds x on top.\nfunc (s *Stack) Push(x int) { s.xs = append(s.xs, x) }\n"
	rewrite := "package s\n\ntype Stack struct{ xs []int }\n\nfunc (s *Stack) Push(x int) {\n\ts.xs = append(s.xs, x)\n}\n"
	r := File("s.go", old, rewrite, nil)
	for _, want := range []string{"// Stack holds ints.\ntype Stack", "// Push adds x on top.\nfunc (s *Stack) Push"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("lacks %q:\n%s", want, r.Content)
		}
	}
	if r := File("s.go", "", rewrite, nil); r.Content != rewrite {
		t.Errorf("a new file was changed:\n%s", r.Content)
	}
}
