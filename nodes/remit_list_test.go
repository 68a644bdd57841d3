package nodes

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// The three-task remit the full pipeline on Qwen-1.5B collapsed into one
// invented task (docs/testing-real-models.md).
const threeChanges = `Three changes to textstats.go, each with a test in textstats_test.go: (1) MeanWordLength divides two ints, so the mean word length is truncated: fix it. (2) Add LongestWord(text string) string: the longest word of text, the first one on a tie, "" when there is none. (3) Add UniqueWords(text string) int: how many different words text has, ignoring case.`

func TestARemitWrittenAsAListIsReadItemByItem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, remit, intro string
		items              []string
	}{
		{"inline", threeChanges, "Three changes to textstats.go, each with a test in textstats_test.go:", []string{
			"MeanWordLength divides two ints, so the mean word length is truncated: fix it.",
			`Add LongestWord(text string) string: the longest word of text, the first one on a tie, "" when there is none.`,
			"Add UniqueWords(text string) int: how many different words text has, ignoring case."}},
		{"lines", "In cmd/list.go:\n- add the --since flag\n- update the docs,\n  both README.md and docs/list.md\n- run go test", "In cmd/list.go: run go test",
			[]string{"add the --since flag", "update the docs, both README.md and docs/list.md"}},
		{"numbered lines", "1. Fix Add in add.go\n2) Add Mul to add.go", "", []string{"Fix Add in add.go", "Add Mul to add.go"}},
		{"a stray number in prose", "Fix the retry (2) times bug in client.go and (3) more", "", nil},
		{"out of order", "Do (2) this and (1) that", "", nil},
		{"one item", "Fix it:\n- in add.go", "", nil},
		{"prose", "Make the test suite pass, then add TopWords to the package.", "", nil},
	}
	for _, c := range cases {
		intro, items := remitItems(c.remit)
		if !slices.Equal(items, c.items) || (c.items != nil && intro != c.intro) {
			t.Errorf("%s: intro %q items %q, want %q %q", c.name, intro, items, c.intro, c.items)
		}
	}
	var long strings.Builder
	for range listMaxItems + 1 {
		long.WriteString("- add a line to notes.md\n")
	}
	if _, items := remitItems(long.String()); items != nil {
		t.Errorf("a list of %d items is planned by lemmings: %q", listMaxItems+1, items)
	}
}

// failingModel fails the test on any call: the path under test asks no model.
type failingModel struct{ t *testing.T }

func (m failingModel) Chat(_ context.Context, req llm.Request) (llm.Response, error) {
	m.t.Errorf("a model was asked: %.200s", req.Messages[len(req.Messages)-1].Content)
	return llm.Response{}, context.Canceled
}

const textstatsGo = "package textstats\n\nimport \"strings\"\n\n// MeanWordLength is the mean length of the words of text.\nfunc MeanWordLength(text string) float64 {\n\tw := strings.Fields(text)\n\tif len(w) == 0 {\n\t\treturn 0\n\t}\n\tn := 0\n\tfor _, x := range w {\n\t\tn += len(x)\n\t}\n\treturn float64(n / len(w))\n}\n"

// A list remit is the user's plan: the ScopeAgent asks no model, and each
// item is a task of its own, placed in the files the remit names, kept by
// the planner as written (operator tasks), in the full pipeline.
func TestAListRemitIsPlannedATaskPerItemWithoutAModel(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{PipelineAuto, PipelineFull} {
		st := DefaultSettings()
		st.Pipeline.Mode = mode
		d := &Deps{Model: failingModel{t}, Settings: st, Sandbox: sandboxWith(t),
			Gates: []workspace.Gate{{Name: "test", Command: "go test ./..."}},
			Work: testRepo(t, map[string]string{"go.mod": "module example.com/textstats\n\ngo 1.22\n", "textstats.go": textstatsGo,
				"textstats_test.go": "package textstats\n\nimport \"testing\"\n\nfunc TestMean(t *testing.T) {\n\tif MeanWordLength(\"go is fun\") != 7.0/3 {\n\t\tt.Fatal(\"mean\")\n\t}\n}\n",
				"cmd/main.go":       "package main\n\nfunc main() {}\n"})}
		s, err := d.ScopeAgent(context.Background(), runstate.State{Remit: threeChanges})
		if err != nil {
			t.Fatal(err)
		}
		if s.Quick || !strings.Contains(s.PipelineReason, "a list of 3 changes") {
			t.Errorf("%s: quick %v, reason %q", mode, s.Quick, s.PipelineReason)
		}
		if len(s.Milestones) != 1 || len(s.CarryForward) != 3 {
			t.Fatalf("%s: %d milestones, %d tasks: %+v", mode, len(s.Milestones), len(s.CarryForward), s.Milestones)
		}
		for i, task := range s.CarryForward {
			if !task.Operator || !task.Placed || !slices.Equal(task.TargetFiles, []string{"textstats.go", "textstats_test.go"}) {
				t.Errorf("%s: task %d operator %v placed %v targets %v", mode, i, task.Operator, task.Placed, task.TargetFiles)
			}
			if !slices.Contains(task.AcceptanceCriteria, critGates) {
				t.Errorf("%s: task %d criteria %q", mode, i, task.AcceptanceCriteria)
			}
		}
		if got := s.CarryForward[1]; !strings.HasPrefix(got.Title, "Add LongestWord(text string) string") ||
			!strings.Contains(got.Instructions, "Item 2 of 3") || !strings.Contains(got.Instructions, "each with a test in textstats_test.go") {
			t.Errorf("%s: task 2 %q: %q", mode, got.Title, got.Instructions)
		}
	}
}

// --quick asks for one task: a list remit is not cut.
func TestAListRemitUnderQuickStaysOneTask(t *testing.T) {
	t.Parallel()
	st := DefaultSettings()
	st.Pipeline.Mode = PipelineQuick
	d := &Deps{Settings: st, Sandbox: sandboxWith(t), Work: testRepo(t, map[string]string{"textstats.go": textstatsGo})}
	s, err := d.ScopeAgent(context.Background(), runstate.State{Remit: threeChanges})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Quick || len(s.CarryForward) != 1 || s.Plan != nil {
		t.Errorf("quick %v, %d tasks, plan %v", s.Quick, len(s.CarryForward), s.Plan)
	}
}

// A planned target that does not exist while one file of that name does is
// that file; a new file stays new; a name two files share is not guessed.
func TestAMissingPlannedTargetIsTheOneFileOfThatName(t *testing.T) {
	t.Parallel()
	work := testRepo(t, map[string]string{"textstats.go": textstatsGo, "a/util.go": "package a\n", "b/util.go": "package b\n"})
	r := plannerReply{Decision: DecisionImplement,
		Task:         &taskSpec{Title: "fix", TargetFiles: []string{"files/textstats.go", "textstats_extra.go"}},
		CarryForward: []taskSpec{{Title: "later", TargetFiles: []string{"util.go", "./textstats.go"}}}}
	got := resolvePlannerTargets(context.Background(), work, r)
	if !slices.Equal(got.Task.TargetFiles, []string{"textstats.go", "textstats_extra.go"}) {
		t.Errorf("task targets %v", got.Task.TargetFiles)
	}
	if !slices.Equal(got.CarryForward[0].TargetFiles, []string{"util.go", "textstats.go"}) {
		t.Errorf("carried targets %v", got.CarryForward[0].TargetFiles)
	}
	if r.Task.TargetFiles[0] != "files/textstats.go" {
		t.Error("the planner's answer was changed in place")
	}
	sc := resolveScopeTargets(context.Background(), work, scopeReply{Milestones: []milestoneSpec{{Goal: "g",
		Tasks: []taskSpec{{Title: "t", TargetFiles: []string{"src/textstats.go"}}}}}})
	if got := sc.Milestones[0].Tasks[0].TargetFiles; !slices.Equal(got, []string{"textstats.go"}) {
		t.Errorf("scope targets %v", got)
	}
}

// A list remit whose items name no file is placed item by item on the same
// tree: the test gates run at the start once, not once per item.
func TestAListRemitRunsTheStartGatesOnce(t *testing.T) {
	t.Parallel()
	// The sandbox lets a gate write only in the work tree: it counts there.
	gate := workspace.Gate{Name: "test", Command: "echo run >> .gate-runs; echo '--- FAIL: TestAdd'; echo '    add_test.go:7: Add(2, 3) = -1, want 5'; exit 1"}
	st := DefaultSettings()
	d := &Deps{Model: failingModel{t}, Settings: st, Sandbox: sandboxWith(t), Gates: []workspace.Gate{gate},
		Work: testRepo(t, map[string]string{"go.mod": addGoMod, "add.go": addGo, "add_test.go": addTestGo, "other.go": "package add\n\nfunc Other() {}\n"})}
	s, err := d.ScopeAgent(context.Background(), runstate.State{Remit: "- fix the failing test\n- make the sum right for negative numbers too"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.CarryForward) != 2 {
		t.Fatalf("%d tasks", len(s.CarryForward))
	}
	if got, _ := os.ReadFile(filepath.Join(d.Work.Dir(), ".gate-runs")); strings.Count(string(got), "run") != 1 {
		t.Errorf("the start gates ran %d times for two items", strings.Count(string(got), "run"))
	}
}

// The changes a remit's shape counts for its list and the items lineItems
// reads come from the one detector, so they agree on every remit; the rows
// are where two detectors once disagreed ("100." counted, "-" then a line
// break counted).
func TestTheRemitsShapeAndItsListAgreeOnWhatIsAnItem(t *testing.T) {
	for _, remit := range []string{
		"- fix Add\n- add Sub",
		"1. fix Add\n2) add Sub\n3. add Mul",
		"Fix these:\n* fix Add\n  in calc.go\n• add Sub",
		"100. fix Add\n200. add Sub",
		"2024. was the year\n- fix Add",
		"-\nfix Add\n-\nadd Sub",
		"fix Add, then add Sub",
		"",
	} {
		_, items := lineItems(remit)
		if got := remitList(remit); got != len(items) {
			t.Errorf("%q: the shape counts %d list items, lineItems reads %d (%q)", remit, got, len(items), items)
		}
	}
}

func FuzzRemitListAgreesWithLineItems(f *testing.F) {
	for _, s := range []string{"- a\n- b", "1. a\n22) b\n333. c", " -\tx\n*\n• y", threeChanges} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remit string) {
		if _, items := lineItems(remit); remitList(remit) != len(items) {
			t.Errorf("%q: remitList %d, lineItems %d", remit, remitList(remit), len(items))
		}
	})
}
