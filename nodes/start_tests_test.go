package nodes

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// testGate fails as `go test` does while stats.go divides two ints.
var testGate = workspace.Gate{Name: "test", Command: `grep -q 'float64(total) / float64' stats.go || { echo "--- FAIL: TestMean (0.00s)"; echo "    stats_test.go:6: Mean = 1"; echo FAIL; exit 1; }`}

// A weak reviewer's "no" does not overrule a test that failed when the task
// started, names what the task names and passes on the change (Qwen-1.5B
// rejected a correct fix on a claim the diff did not bear out).
func TestATestTheChangeFixedOverrulesTheReviewersNo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, title string
		want        bool
	}{
		{"the task names the tested function", "Fix Mean", true},
		{"the task names nothing the test does", "Tidy the package", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			no := act(t, map[string]any{"criteria": []map[string]any{
				{"number": 1, "criterion": critGates, "met": true, "quote": "", "evidence": "passed"},
				{"number": 2, "criterion": "the remit", "met": false, "quote": "", "evidence": "it changes the return type from int"},
			}, "feedback": "Keep the return type."})
			r := newDirectRun(t, text("```go\n"+meanFixed+"```\n"), no)
			r.d.Settings.Draws = 1
			r.d.Gates = []workspace.Gate{testGate}
			r.task.Title = tc.title
			if !tc.want {
				r.task.Instructions = "Make it read better."
			}
			r.task.AcceptanceCriteria = []string{critGates, critRemit + ": " + r.task.Instructions}
			ctx := context.Background()
			s, err := r.d.Implementor(ctx, runstate.State{RunID: "r1", CurrentTask: r.task, Quick: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.CurrentTask.StartFailing; !s.CurrentTask.StartTested || !slices.Equal(got, []string{"TestMean"}) {
				t.Fatalf("the start's failing tests: %v (tested %v)", got, s.CurrentTask.StartTested)
			}
			s, err = r.d.QA(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(r.model.recorded()); n != 2 {
				t.Errorf("%d calls, want the code and the review", n)
			}
			if s.QA.Passed != tc.want {
				t.Fatalf("QA passed %v, want %v: %+v", s.QA.Passed, tc.want, s.QA.Criteria)
			}
			if c := s.QA.Criteria[1]; tc.want && (c.By != "gates" || !strings.Contains(c.Evidence, "TestMean failed when the task started")) {
				t.Errorf("criterion 2: %+v", c)
			}
		})
	}
}

// The start's tests run only when a model will review the task: a task the
// gates decide costs no extra gate run.
func TestTheStartTestsRunOnlyForAReviewedTask(t *testing.T) {
	t.Parallel()
	r := newDirectRun(t, text("```go\n"+meanFixed+"```\n"))
	r.d.Settings.Draws = 1
	r.d.Gates = []workspace.Gate{testGate}
	r.task.AcceptanceCriteria = []string{critGates}
	s, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.CurrentTask.StartTested {
		t.Errorf("the start's tests ran for a task the gates decide")
	}
}

func TestFailingTestsAreReadFromEachRunnersOutput(t *testing.T) {
	t.Parallel()
	out := strings.Join([]string{
		"--- FAIL: TestMeanWordLength (0.00s)",
		"    --- FAIL: TestMeanWordLength/empty (0.00s)",
		"FAILED tests/test_stats.py::test_mean_word_length - AssertionError",
		"FAILED test_stats.py::TestStats::test_longest_word",
		"test stats::tests::unique_words ... FAILED",
		"ok  	example.com/other	0.002s",
	}, "\n")
	got := failingTests([]workspace.GateResult{{Name: "test", Output: out}, {Name: "lint", Passed: true, Output: "--- FAIL: TestNotMe"}})
	want := []string{"TestMeanWordLength", "test_mean_word_length", "test_longest_word", "unique_words"}
	if !slices.Equal(got, want) {
		t.Errorf("failing tests %v, want %v", got, want)
	}
}

// A test made to pass by editing it is no evidence.
func TestAnEditedTestIsNoEvidence(t *testing.T) {
	t.Parallel()
	task := &runstate.Task{Title: "Fix MeanWordLength", StartFailing: []string{"TestMeanWordLength"}}
	adds := "diff --git a/textstats_test.go b/textstats_test.go\n--- a/textstats_test.go\n+++ b/textstats_test.go\n@@ -1,1 +1,2 @@\n+func TestLongestWord(t *testing.T) {}\n"
	edits := "diff --git a/textstats_test.go b/textstats_test.go\n--- a/textstats_test.go\n+++ b/textstats_test.go\n@@ -1,1 +1,1 @@\n-\t\t{\"go is fun\", 7.0 / 3.0},\n+\t\t{\"go is fun\", 2},\n"
	if got := fixedTest(task, adds); got != "TestMeanWordLength" {
		t.Errorf("a change that adds a test: %q", got)
	}
	if got := fixedTest(task, edits); got != "" {
		t.Errorf("a change that edits the failing test's case counts: %q", got)
	}
}
