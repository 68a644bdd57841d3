package nodes

import (
	"strings"
	"testing"
)

func TestTaskLimits(t *testing.T) {
	lim := TaskLimits{MaxTargetFiles: 2, MaxInstructionChars: 600}
	ok := taskSpec{Title: "Fix MeanWordLength integer division", Instructions: "Convert before dividing in MeanWordLength.",
		AcceptanceCriteria: []string{"MeanWordLength returns 7/3 for \"go is fun\"", "go test ./... passes"}, TargetFiles: []string{"textstats.go"}}
	if p := taskProblems(ok, lim); len(p) != 0 {
		t.Errorf("a small, checkable task is fine: %v", p)
	}
	cases := []struct {
		name string
		edit func(*taskSpec)
		want string
	}{
		{"three files", func(t *taskSpec) { t.TargetFiles = []string{"a.go", "b.go", "c.go"} }, "names 3 target files: at most 2"},
		{"long instructions", func(t *taskSpec) { t.Instructions = strings.Repeat("x", 700) }, "700 characters of instructions: at most 600"},
		{"two behaviours", func(t *taskSpec) { t.Title = "Add TopWords and update the README" }, "does two things"},
		{"no criteria", func(t *taskSpec) { t.AcceptanceCriteria = nil }, "no acceptance criteria"},
		{"a vague criterion", func(t *taskSpec) { t.AcceptanceCriteria = []string{"the code is clean and readable"} }, "cannot be checked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := ok
			c.edit(&spec)
			p := strings.Join(taskProblems(spec, lim), "\n")
			if !strings.Contains(p, c.want) {
				t.Errorf("problems %q lack %q", p, c.want)
			}
		})
	}
	for _, crit := range []string{"the parser works on `a=b`", "textstats -top 3 prints three words", "parse_line handles empty input", "the build passes"} {
		spec := ok
		spec.AcceptanceCriteria = []string{crit}
		if p := taskProblems(spec, lim); len(p) != 0 {
			t.Errorf("%q is checkable: %v", crit, p)
		}
	}
}
