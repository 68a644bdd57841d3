package knowledge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with a document, with the file (relative to the
// knowledge dir) and the 1-based line (0 when it concerns the whole file).
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Message)
}

// Lint checks every document under dir and returns all problems, sorted by
// file and line: parse problems, unknown categories, duplicate titles. A
// missing dir has no problems. An unreadable dir is one problem.
func Lint(dir string) []Problem {
	_, probs, err := Open(dir)
	if err != nil {
		probs = append(probs, Problem{File: dir, Message: err.Error()})
	}
	sortProblems(probs)
	return probs
}

// FormatProblems renders problems one per line as "file:line: message", the
// form editors and CI logs link to.
func FormatProblems(probs []Problem) string {
	var b strings.Builder
	for _, p := range probs {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func sortProblems(probs []Problem) {
	slices.SortStableFunc(probs, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
}
