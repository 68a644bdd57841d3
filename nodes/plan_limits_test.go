package nodes

import (
	"strings"
	"testing"
)

func TestTaskLimits(t *testing.T) {
	t.Parallel()
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

// What still breaks the limits after the send-back is cut or split by
// lemmings, never kept: a task fits whatever the model answered twice.
func TestFitTaskCutsAndSplitsWhatStillBreaksTheLimits(t *testing.T) {
	t.Parallel()
	lim := TaskLimits{MaxTargetFiles: 2, MaxInstructionChars: 600}
	over := taskSpec{Title: "Add TopWords and update the README", Instructions: strings.Repeat("Do the thing well. ", 60),
		AcceptanceCriteria: []string{"the code is clean and readable", "TopWords returns the n most frequent words"},
		TargetFiles:        []string{"a.go", "b.go", "c.go"}}
	if len(taskProblems(over, lim)) == 0 {
		t.Fatal("the fixture must break the limits")
	}
	got := fitTask(over, lim)
	if len(got) != 4 { // two behaviours × two groups of files
		t.Fatalf("fitTask made %d tasks, want 4: %+v", len(got), got)
	}
	for _, ft := range got {
		if p := taskProblems(ft, lim); len(p) != 0 {
			t.Errorf("task %q still breaks the limits: %v", ft.Title, p)
		}
	}
	if !strings.HasPrefix(got[0].Title, "Add TopWords (part 1 of 2") || !strings.HasPrefix(got[2].Title, "Update the README (part 1 of 2") {
		t.Errorf("titles %q, %q", got[0].Title, got[2].Title)
	}
	if len(got[0].AcceptanceCriteria) != 1 || strings.Contains(got[0].AcceptanceCriteria[0], "clean") {
		t.Errorf("the vague criterion must go: %v", got[0].AcceptanceCriteria)
	}
	vague := taskSpec{Title: "Tidy up", Instructions: "Tidy the parser.", AcceptanceCriteria: []string{"it is better"}, TargetFiles: []string{"p.go"}}
	if got := fitTask(vague, lim); len(got) != 1 || !strings.Contains(got[0].AcceptanceCriteria[0], "what the task title says") {
		t.Errorf("a task left with no checkable criterion gets the title's: %+v", got)
	}
}
