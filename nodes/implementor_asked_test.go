package nodes

// The test a remit asks for (implementor/asked.go): after the
// direct attempt's code passes, one more call writes it, and a test that
// fails the gates is dropped, not the code.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// meanOfThree is a right test of Mean; meanOfTwo a wrong one (the gate
// below fails it).
const (
	meanOfThree = "\nfunc TestMeanOfThree(t *testing.T) {\n\tif got := Mean([]int{1, 2, 4}); got != 7.0/3 {\n\t\tt.Fatalf(\"Mean = %v\", got)\n\t}\n}\n"
	meanOfTwo   = "\nfunc TestMeanOfTwo(t *testing.T) {\n\tif got := Mean([]int{1, 2}); got != 2 {\n\t\tt.Fatalf(\"Mean = %v, want 2\", got)\n\t}\n}\n"
)

// testedGate is floatGate, and fails the wrong test as go test would.
var testedGate = workspace.Gate{Name: "check", Command: floatGate.Command +
	`; if grep -q 'want 2' stats_test.go; then echo "--- FAIL: TestMeanOfTwo (0.00s)"; echo "    stats_test.go:15: Mean = 1.5, want 2"; exit 1; fi`}

// newAskedRun is a direct run whose task's tests come from the remit's
// words, as placement finds them.
func newAskedRun(t *testing.T, remit string, replies ...llmtest.Reply) *weakRun {
	t.Helper()
	r := newDirectRun(t, replies...)
	r.d.Gates = []workspace.Gate{testedGate}
	r.d.Settings.Draws, r.d.Settings.FixRounds = 4, 1
	r.task.Tests = placerOf(r.d).place(context.Background(), remit).Tests
	return r
}

// runQuickEvents runs the attempt in a graph and keeps its custom events.
func (r *weakRun) runQuickEvents(t *testing.T) (*runstate.ImplResult, map[string][]map[string]any) {
	t.Helper()
	out, got := r.runEvents(t, true)
	return out.Implementation, got
}

// runEvents runs the Implementor node in a graph (a quick run or not) and
// keeps its custom events by name.
func (r *weakRun) runEvents(t *testing.T, quick bool) (runstate.State, map[string][]map[string]any) {
	t.Helper()
	got := map[string][]map[string]any{}
	var out runstate.State
	g := graph.New[runstate.State]()
	g.AddNode("implementor", func(ctx context.Context, s runstate.State) (runstate.State, error) {
		var err error
		out, err = r.d.Implementor(ctx, s)
		return out, err
	})
	g.AddEdge(graph.Start, "implementor")
	g.AddEdge("implementor", graph.End)
	app, err := g.Compile(graph.WithSinks(graph.SinkFunc(func(ev graph.Event) {
		if ev.Kind == graph.EventCustom {
			var d map[string]any
			_ = json.Unmarshal(ev.Data, &d)
			got[ev.Name] = append(got[ev.Name], d)
		}
	})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Run(context.Background(), "r1", runstate.State{RunID: "r1", CurrentTask: r.task, Quick: quick}); err != nil {
		t.Fatal(err)
	}
	return out, got
}

// A remit that asks for a test: the code, then one call for the test, which
// shows the test file as it is and the function the task changed; the test
// lands and the gates pass with it.
func TestATestTheRemitAsksForIsWrittenAfterTheCode(t *testing.T) {
	t.Parallel()
	r := newAskedRun(t, "Fix Mean in stats.go, with a test in stats_test.go",
		// The test's reply goes on from the file the request started it
		// with, as a model's does.
		text("```go\n"+meanFixed+"```\n"), text(strings.TrimPrefix(meanOfThree, "\n")+"```\n"))
	countRuns(t, r)
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	calls := r.model.recorded()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2: the code, then the test", len(calls))
	}
	if !strings.Contains(calls[0].LastUser(), "Write the complete new stats.go") {
		t.Errorf("the first call is not the code's:\n%s", calls[0].LastUser())
	}
	ask := calls[1].LastUser()
	iCode, iFile, iAsk := strings.Index(ask, "return float64(total) / float64(len(xs))"), strings.Index(ask, "func TestMean(t *testing.T)"), strings.Index(ask, "Write the complete new stats_test.go: the tests it has, then your new test")
	if iCode < 0 || iFile < iCode || iAsk < iFile || !strings.Contains(ask, "(Fix Mean)") {
		t.Errorf("the test request does not show the changed code, the test file, then ask for the test:\n%s", ask)
	}
	if strings.Contains(ask, "package stats\n\n// Mean returns") {
		t.Errorf("the test request shows the whole code file, not the function changed:\n%s", ask)
	}
	// The reply starts with the test file as it is: the model writes only
	// the new test, and cannot drop a line of the others.
	if msgs := calls[1].Messages; msgs[len(msgs)-1].Role != "assistant" || msgs[len(msgs)-1].Content != "```go\n"+meanTestGo+"\n" {
		t.Errorf("the test call's reply does not start with the test file: %+v", msgs[len(msgs)-1])
	}
	// One new test: the reply stops where a second would start.
	if stops, _ := calls[1].Options["stop"].([]any); !slices.Contains(stops, any("\nfunc ")) {
		t.Errorf("the test call does not stop at a second test: %v", calls[1].Options["stop"])
	}
	for _, m := range calls[1].Messages[:len(calls[1].Messages)-1] {
		if m.Role == "assistant" {
			t.Errorf("the test call carries the code exchange: %.80q", m.Content)
		}
	}
	if got := r.file(t, "stats_test.go"); got != meanTestGo+meanOfThree {
		t.Errorf("stats_test.go:\n%s", got)
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}
	// The gate runs tests (its command names stats_test.go): it ran on the
	// start tree for QA's evidence, on the code, then with the test.
	if n := gateRuns(t, r); n != 3 {
		t.Errorf("the gates ran %d times, want 3: at the start, on the code, then with the test", n)
	}
	if len(res.Gates) != 1 || !res.Gates[0].Passed || res.GatesDiffHash != diffHash(t, r) {
		t.Errorf("the gates' pass with the test is not handed to QA: %+v", res.Gates)
	}
	if !strings.Contains(res.Summary, "Wrote the test the task asks for in stats_test.go") {
		t.Errorf("summary %q", res.Summary)
	}
}

// A test that fails the gates, or a reply that cannot be used, is dropped:
// the test file is back as it was, the code stays, an event says why, and
// the task finishes. One call: no draw, no repair.
func TestATestThatFailsTheGatesIsDroppedNotTheCode(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		reply string
		why   string
	}{
		"a wrong test":    {"```go\n" + meanTestGo + meanOfTwo + "```\n", "Mean = 1.5, want 2"},
		"no usable reply": {"I would add a test of Mean with three numbers.", "could not be used"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newAskedRun(t, "Fix Mean in stats.go, with a test in stats_test.go", text("```go\n"+meanFixed+"```\n"), text(tc.reply))
			res, evs := r.runQuickEvents(t)
			if res.Status != runstate.ImplFinished {
				t.Fatalf("status %s: %s", res.Status, res.Summary)
			}
			if n := len(r.model.recorded()); n != 2 {
				t.Errorf("%d calls, want 2: the test gets one", n)
			}
			if got := r.file(t, "stats_test.go"); got != meanTestGo {
				t.Errorf("stats_test.go is not as it was:\n%s", got)
			}
			if got := r.file(t, "stats.go"); got != meanFixed {
				t.Errorf("the code was not kept:\n%s", got)
			}
			dropped := evs["implementor_test_dropped"]
			if len(dropped) != 1 || dropped[0]["path"] != "stats_test.go" || !strings.Contains(dropped[0]["reason"].(string), tc.why) {
				t.Errorf("dropped events %v, want one saying %q", dropped, tc.why)
			}
			if !strings.Contains(res.Summary, "The test the task asks for in stats_test.go was not written") {
				t.Errorf("summary %q", res.Summary)
			}
			if len(res.Gates) != 1 || !res.Gates[0].Passed || res.GatesDiffHash != diffHash(t, r) {
				t.Errorf("the code's gate run is not what QA gets: %+v", res.Gates)
			}
		})
	}
}

// A remit that names the test file as the check asks for no test: one
// call, as before.
func TestARemitThatAsksForNoTestCostsOneCall(t *testing.T) {
	t.Parallel()
	r := newAskedRun(t, "Fix Mean in stats.go so that stats_test.go passes", text("```go\n"+meanFixed+"```\n"))
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished || len(r.model.recorded()) != 1 {
		t.Fatalf("status %s after %d calls: %s", res.Status, len(r.model.recorded()), res.Summary)
	}
	if got := r.file(t, "stats_test.go"); got != meanTestGo {
		t.Errorf("stats_test.go:\n%s", got)
	}
	if strings.Contains(res.Summary, "test") {
		t.Errorf("summary %q", res.Summary)
	}
}

func diffHash(t *testing.T, r *weakRun) string {
	t.Helper()
	diff, _, err := r.wt.Changes(context.Background(), r.task.StartCommit)
	if err != nil {
		t.Fatal(err)
	}
	return workspace.DiffHash(diff)
}

// A test file too large to ask for whole is asked for the test named for
// the function the task changed, with the new test after it, spliced in by
// name.
func TestALargeTestFileIsAskedForTheNewTestBesideItsNeighbour(t *testing.T) {
	t.Parallel()
	const testMean = "func TestMean(t *testing.T) {\n\tif got := Mean([]int{1, 2}); got != 1.5 {\n\t\tt.Fatalf(\"Mean = %v\", got)\n\t}\n}\n"
	r := newAskedRun(t, "Fix Mean in stats.go, with a test in stats_test.go",
		text("```go\n"+meanFixed+"```\n"), text("```go\n"+testMean+meanOfThree+"```\n"))
	r.d.Settings.WholeFileLines = 5
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished || len(r.model.recorded()) != 2 {
		t.Fatalf("status %s after %d calls: %s", res.Status, len(r.model.recorded()), res.Summary)
	}
	if ask := r.lastUser(1); !strings.Contains(ask, "Write the function TestMean as it is and your new test after it") {
		t.Errorf("the test request is not for TestMean and the new test:\n%s", ask)
	}
	if got := r.file(t, "stats_test.go"); got != meanTestGo+meanOfThree {
		t.Errorf("stats_test.go:\n%s", got)
	}
}

// Code that still fails its gates when the attempt ends gets no test call:
// a test beside it could not be told apart from it.
func TestCodeThatFailsItsGatesGetsNoTestCall(t *testing.T) {
	t.Parallel()
	wrong := strings.Replace(meanGo, "// Mean returns", "// Mean gives", 1)
	alsoWrong := strings.Replace(meanGo, "// Mean returns", "// Mean yields", 1)
	r := newAskedRun(t, "Fix Mean in stats.go, with a test in stats_test.go",
		text("```go\n"+wrong+"```\n"), text("```go\n"+alsoWrong+"```\n"), text("```go\n"+meanTestGo+meanOfThree+"```\n"))
	r.d.Settings.Draws = 1
	res, evs := r.runQuickEvents(t)
	if n := len(r.model.recorded()); n != 2 {
		t.Errorf("%d calls, want the code and its fix round", n)
	}
	if got := r.file(t, "stats_test.go"); got != meanTestGo {
		t.Errorf("stats_test.go:\n%s", got)
	}
	if d := evs["implementor_test_dropped"]; len(d) != 1 || !strings.Contains(d[0]["reason"].(string), "the code's gates fail") {
		t.Errorf("dropped events %v", d)
	}
	if !strings.Contains(res.Summary, "was not written") {
		t.Errorf("summary %q", res.Summary)
	}
}

// evidenceGate passes at the start and with the fix; with TestMeanOfThree in
// the test file it fails on the unfixed Mean, as go test would.
var evidenceGate = workspace.Gate{Name: "test", Command: `if grep -q TestMeanOfThree stats_test.go && ! grep -q 'float64(total) / float64' stats.go; then echo "--- FAIL: TestMeanOfThree (0.00s)"; exit 1; fi`}

// A remit that brings no failing test: once the code passes, one call adds a
// test, which is kept as evidence only when it fails without the change and
// passes with it; QA then decides the remit's words by it, without a review.
func TestATestThatShowsTheChangeIsWrittenWhenNoTestFailedAtTheStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, test string
		evidence   bool
	}{
		{"a test that fails without the change is kept as evidence", meanOfThree, true},
		{"a test that passes without the change shows nothing and is dropped", "\nfunc TestNothing(t *testing.T) {}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newDirectRun(t, text("```go\n"+meanFixed+"```\n"), text(strings.TrimPrefix(tc.test, "\n")+"```\n"))
			r.d.Gates = []workspace.Gate{evidenceGate}
			r.task.StartTested, r.task.StartPassed = true, true // the test gates ran at the start, and passed
			r.task.Attempt = 2                                  // the first attempt writes its test first
			res := r.runQuick(t)
			if res.Status != runstate.ImplFinished {
				t.Fatalf("status %s: %s", res.Status, res.Summary)
			}
			if n := len(r.model.recorded()); n != 2 {
				t.Fatalf("%d calls, want 2: the code, then the test", n)
			}
			if ask := r.model.recorded()[1].LastUser(); !strings.Contains(ask, "fails without your change and passes with it") {
				t.Errorf("the test request does not ask for a test that shows the change:\n%s", ask)
			}
			kept := strings.Contains(r.file(t, "stats_test.go"), strings.TrimSpace(tc.test))
			if (res.Evidence != "") != tc.evidence || kept != tc.evidence {
				t.Errorf("evidence %q, test kept %v; want %v", res.Evidence, kept, tc.evidence)
			}
			if got := r.file(t, "stats.go"); got != meanFixed {
				t.Errorf("the change is not back in place after the check without it:\n%s", got)
			}
		})
	}
}

// On a task's first attempt the test comes first: it must fail with the code
// as it is, and the code's draws are gated against it; when they pass, it is
// the evidence. A test that passes already is dropped, and no second test
// call follows the code.
func TestATestWrittenFirstIsWhatTheCodeIsGatedAgainst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, test string
		kept       bool
	}{
		{"a test that fails now is kept and the code passes it", meanOfThree, true},
		{"a test that passes already is dropped", "\nfunc TestNothing(t *testing.T) {}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newDirectRun(t, text(strings.TrimPrefix(tc.test, "\n")+"```\n"), text("```go\n"+meanFixed+"```\n"))
			r.d.Gates = []workspace.Gate{evidenceGate}
			r.task.StartTested, r.task.StartPassed = true, true
			res := r.runQuick(t)
			calls := r.model.recorded()
			if res.Status != runstate.ImplFinished || len(calls) != 2 {
				t.Fatalf("status %s after %d calls, want 2 (the test, then the code): %s", res.Status, len(calls), res.Summary)
			}
			if ask := calls[0].LastUser(); !strings.Contains(ask, "it must fail with the code as it is now") || !strings.Contains(ask, "func Mean(xs []int) float64") {
				t.Errorf("the first request does not ask for a failing test, showing the code:\n%s", ask)
			}
			kept := strings.Contains(r.file(t, "stats_test.go"), strings.TrimSpace(tc.test))
			if (res.Evidence != "") != tc.kept || kept != tc.kept {
				t.Errorf("evidence %q, test kept %v; want %v (summary %s)", res.Evidence, kept, tc.kept, res.Summary)
			}
			if got := r.file(t, "stats.go"); got != meanFixed {
				t.Errorf("stats.go:\n%s", got)
			}
		})
	}
}

func TestEvidenceDecidesTheRemitsWordsAndNothingElse(t *testing.T) {
	t.Parallel()
	gates := []runstate.GateOutcome{{Name: "test", Command: "go test ./...", Passed: true}}
	ev := reviewEvidence{change: "+x", added: "x", gates: gates}
	crit, ok := evidenceDecides([]string{critGates, critRemit + ": fix Mean"}, ev, "a test fails without the change", "diff --git a/stats.go b/stats.go\n+x\n")
	if !ok || !allMet(crit) || crit[1].By != "evidence" {
		t.Fatalf("criteria %+v ok %v", crit, ok)
	}
	if _, ok := evidenceDecides([]string{critRemit + ": fix Mean", "Mean is documented"}, ev, "e", ""); ok {
		t.Error("a criterion only a reviewer can judge was decided by the evidence")
	}
	if _, ok := evidenceDecides([]string{critRemit + ": fix Mean"}, ev, "e", "diff --git a/stats_test.go b/stats_test.go\n-\tif got != 1.5 {\n"); ok {
		t.Error("a change that edits a test's lines was decided by the evidence")
	}
}
