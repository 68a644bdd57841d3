package nodes

// The direct first attempt of a quick task (direct.go), driven
// through the real Implementor: scripted model, real git work tree, real
// gates and parsers.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

const meanTestGo = "package stats\n\nimport \"testing\"\n\nfunc TestMean(t *testing.T) {\n\tif got := Mean([]int{1, 2}); got != 1.5 {\n\t\tt.Fatalf(\"Mean = %v\", got)\n\t}\n}\n"

// floatGate passes when stats.go divides as floats, and says why it fails.
var floatGate = workspace.Gate{Name: "check", Command: `grep -q 'float64(total) / float64' stats.go || { echo "stats.go:9:9: integer division: Mean(1, 2) = 1, want 1.5"; exit 1; }`}

func newDirectRun(t *testing.T, replies ...llmtest.Reply) *weakRun {
	t.Helper()
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo, "stats_test.go": meanTestGo}, replies...)
	r.task.TargetFiles = []string{"stats.go", "stats_test.go"}
	r.d.Gates = []workspace.Gate{floatGate}
	return r
}

func (r *weakRun) runQuick(t *testing.T) *runstate.ImplResult {
	t.Helper()
	out, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	return out.Implementation
}

// A quick task with one file to change costs one call when the code is
// right: no action round, no finish call. The prompt is short: a system line
// naming the language, the task, the file, and the request last (a small
// coder given the shared context, the role text and the test copied the file
// back unchanged).
func TestADirectAttemptAsksForTheCodeAtOnce(t *testing.T) {
	t.Parallel()
	r := newDirectRun(t, text("```go\n"+meanFixed+"```\n"))
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	calls := r.model.recorded()
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	c := calls[0]
	if c.Format != nil {
		t.Errorf("the direct call asked for JSON: %s", c.Format)
	}
	if sys := c.Messages[0]; sys.Role != "system" || !strings.Contains(sys.Content, "You are the Implementor") || !strings.Contains(sys.Content, "expert Go programmer") {
		t.Errorf("system message %q", sys.Content)
	}
	prompt := c.Prompt
	for _, absent := range []string{"The actions", `"action": "read_file"`, "## ", "func TestMean", "stats_test.go", "   1| "} {
		if strings.Contains(prompt, absent) {
			t.Errorf("the direct prompt carries %q:\n%s", absent, prompt)
		}
	}
	// The task, the file, then the request, last: right where the reply
	// starts, and nothing in a fence but real code (a small coder copies a
	// placeholder in a fence as its answer).
	ask := c.LastUser()
	iTask, iFile, iAsk := strings.Index(ask, "Mean must divide as floats."), strings.Index(ask, "func Mean(xs []int) float64"), strings.Index(ask, "Write the complete new stats.go that does this")
	if iTask < 0 || iFile < iTask || iAsk < iFile || !strings.HasSuffix(strings.TrimSpace(ask), "fenced block.") {
		t.Errorf("the request does not give the task, show stats.go, then ask for it last:\n%s", ask)
	}
	if strings.Contains(ask, "<every line") || strings.Contains(ask, "<the whole") {
		t.Errorf("the request carries a placeholder to copy:\n%s", ask)
	}
	// The reply is opened for the model inside the fenced block, and ends
	// at its close: no prose to pay for before or after the code.
	if last := c.Messages[len(c.Messages)-1]; last.Role != "assistant" || last.Content != "```go\n" {
		t.Errorf("no prefill: the last message is %s %q", last.Role, last.Content)
	}
	// It stops at the fence's close, and where a small coder starts the
	// tests it appends to the file (it did on most exercises).
	if stop, _ := c.Options["stop"].([]any); len(stop) < 2 || stop[0] != "\n```" || stop[1] != "\nfunc Test" {
		t.Errorf("stop %v, want the closing fence, then a test's start", c.Options["stop"])
	}
	for _, m := range c.Messages[:len(c.Messages)-1] {
		if m.Role == "user" && strings.HasPrefix(m.Content, "Now write") {
			t.Error("the request is a second user turn after the prompt, not part of it")
		}
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}
	if len(res.Gates) != 1 || !res.Gates[0].Passed {
		t.Errorf("the gates' pass is not kept for QA: %+v", res.Gates)
	}
}

// The gates' failure goes back as a fix round that asks for the code again,
// with what failed; the request stays one user turn after the last reply.
func TestADirectAttemptSendsTheFailingGateBack(t *testing.T) {
	t.Parallel()
	wrong := strings.Replace(meanGo, "// Mean returns", "// Mean gives", 1) // a change, not the fix
	r := newDirectRun(t, text("```go\n"+wrong+"```\n"), text("```go\n"+meanFixed+"```\n"))
	r.d.Settings.Samples, r.d.Settings.Draws = 1, 1
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished || res.FixRounds != 1 {
		t.Fatalf("status %s after %d fix rounds: %s", res.Status, res.FixRounds, res.Summary)
	}
	calls := r.model.recorded()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	ask := calls[1].LastUser()
	for _, want := range []string{"integer division: Mean(1, 2) = 1, want 1.5", "Fix the cause", "Write the complete new stats.go"} {
		if !strings.Contains(ask, want) {
			t.Errorf("the fix round lacks %q:\n%s", want, ask)
		}
	}
	// The file first, what failed after it: the part of the prompt a round
	// shares with the last stays a prefix the server's cache serves.
	if iFile, iFail := strings.Index(ask, "func Mean(xs []int) float64"), strings.Index(ask, "integer division"); iFile < 0 || iFail < iFile {
		t.Errorf("the fix round puts what failed before the file:\n%s", ask)
	}
	msgs := calls[1].Messages
	if n := len(msgs); n < 3 || msgs[n-3].Role != "assistant" || msgs[n-2].Role != "user" || msgs[n-1].Role != "assistant" {
		t.Errorf("the fix round is not the user's turn after the model's reply, then the prefill: %+v", msgs)
	}
	if r.file(t, "stats.go") != meanFixed {
		t.Errorf("stats.go:\n%s", r.file(t, "stats.go"))
	}
}

// A weak model that sends the file back unchanged is stopped at the second
// time: the same gates would fail the same way, so no more calls are spent.
func TestADirectAttemptEndsWhenTheCodeStopsChanging(t *testing.T) {
	t.Parallel()
	same := text("```go\n" + meanGo + "```\n")
	r := newDirectRun(t, same, same, same, same, same)
	r.d.Settings.Samples, r.d.Settings.Draws = 1, 1
	res := r.runQuick(t)
	if res.Status != runstate.ImplLoop || !strings.Contains(res.Summary, "left stats.go as it was") {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	if n := len(r.model.recorded()); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

// Replies that hold no usable code — prose, a JSON action, a file that no
// longer parses — write nothing, and two rounds of them end the attempt.
func TestADirectAttemptWritesNothingFromUnusableReplies(t *testing.T) {
	t.Parallel()
	broken := strings.Replace(meanFixed, "\t}\n\treturn", "\treturn", 1)
	for name, first := range map[string]llmtest.Reply{
		"prose":         text("I would change the division so that it uses floats."),
		"a JSON action": text(`{"thought":"done","action":"finish","summary":"done"}`),
		"a loop":        {Content: strings.Repeat("The project consists of two files and a remit.\n", 3), DoneReason: "looping"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newDirectRun(t, first, text("```go\n"+broken+"```\n"))
			r.d.Settings.Samples, r.d.Settings.Draws = 1, 1
			res := r.runQuick(t)
			if res.Status != runstate.ImplError || !strings.Contains(res.Summary, "could not be used") {
				t.Fatalf("status %s: %s", res.Status, res.Summary)
			}
			if got := r.file(t, "stats.go"); got != meanGo {
				t.Errorf("stats.go was written from an unusable reply:\n%s", got)
			}
			if n := len(r.model.recorded()); n != 2 {
				t.Errorf("%d calls for two unusable rounds of one sample each", n)
			}
			if ask := r.lastUser(1); !strings.Contains(ask, "No file was changed") {
				t.Errorf("the second round does not say why the first was not used:\n%s", ask)
			}
		})
	}
}

// With two candidates drawn per request, one round of two unusable replies
// ends the attempt: a third draw of the same request would not do better.
func TestADirectAttemptWithTwoSamplesEndsAfterOneUnusableRound(t *testing.T) {
	t.Parallel()
	r := newDirectRun(t, text("I would change the division."), text("Use floats in Mean."), text("```go\n"+meanFixed+"```\n"))
	r.d.Settings.Samples, r.d.Settings.Draws = 2, 2
	res := r.runQuick(t)
	if res.Status != runstate.ImplError {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	if n := len(r.model.recorded()); n != 2 {
		t.Errorf("%d calls, want the two candidates of one round", n)
	}
}

// The direct attempt has one fix round, of one candidate: the fix round is
// its second try, and a model that fails it is better served by the next
// attempt's tool loop than by more rewrites of the same file.
func TestADirectAttemptHasOneFixRoundOfOneCandidate(t *testing.T) {
	t.Parallel()
	wrong := strings.Replace(meanGo, "// Mean returns", "// Mean still returns", 1)
	r := newDirectRun(t, text("```go\n"+wrong+"```\n"), text("```go\n"+meanGo+"\n// x\n```\n"), text("```go\n"+meanFixed+"```\n"))
	r.d.Settings.Samples, r.d.Settings.Draws = 2, 1
	res := r.runQuick(t)
	if res.FixRounds != 1 {
		t.Errorf("%d fix rounds, want 1", res.FixRounds)
	}
	if n := len(r.model.recorded()); n != 2 {
		t.Errorf("%d calls, want the code and one fix", n)
	}
	if calls := r.model.recorded(); len(calls) > 0 && calls[0].NumCtx < 4096 {
		t.Errorf("the first call's window %d has no room for the fix round", calls[0].NumCtx)
	}
}

// The action loop, not the direct request, where it would not serve: two
// files to change, the JSON protocol, the setting off, or a task of the full
// pipeline.
func TestADirectAttemptOnlyWhereItServes(t *testing.T) {
	t.Parallel()
	finish := act(t, map[string]any{"thought": "look first", "action": "finish", "summary": "done"})
	for _, tc := range []struct {
		name  string
		setup func(r *weakRun)
		quick bool
	}{
		{"two files to change", func(r *weakRun) { r.task.TargetFiles = []string{"stats.go", "other.go"} }, true},
		{"the setting off", func(r *weakRun) { r.d.Settings.Direct = false }, true},
		{"the full pipeline", func(r *weakRun) {}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newDirectRun(t, finish)
			tc.setup(r)
			if _, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task, Quick: tc.quick}); err != nil {
				t.Fatal(err)
			}
			calls := r.model.recorded()
			if len(calls) == 0 || calls[0].Format == nil || !strings.Contains(calls[0].Prompt, "The actions, with an example") {
				t.Errorf("the first call is not an action call (%d calls)", len(calls))
			}
		})
	}
}

// A later attempt of a quick task is direct too, and its first request
// says what was found wrong with the last one, after the file.
func TestALaterAttemptIsDirectWithTheLastFeedback(t *testing.T) {
	t.Parallel()
	r := newDirectRun(t, text("```go\n"+meanFixed+"```\n"))
	r.task.Attempt, r.task.Feedback = 2, "Acceptance criteria not met: Mean still divides ints"
	res := r.runQuick(t)
	calls := r.model.recorded()
	if res.Status != runstate.ImplFinished || len(calls) != 1 || calls[0].Format != nil {
		t.Fatalf("status %s after %d calls: want one direct call", res.Status, len(calls))
	}
	ask := calls[0].LastUser()
	if iFile, iFb := strings.Index(ask, "func Mean(xs []int) float64"), strings.Index(ask, "Mean still divides ints"); iFile < 0 || iFb < iFile {
		t.Errorf("the request does not show the file, then the last attempt's feedback:\n%s", ask)
	}
}

func TestTestFilesAreKnownByTheirLanguagesNames(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"stats_test.go": true, "pkg/x_test.go": true, "test_calc.py": true, "calc_test.py": true, "src/app.test.ts": true,
		"src/app.spec.js": true, "src/test/java/FooTest.java": true, "tests/integration.rs": true, "spec/foo_spec.rb": true,
		"stats.go": false, "calc.py": false, "src/app.ts": false, "Foo.java": false, "testdata.go": false, "contest.py": false, "latest.go": false,
	} {
		if got := isTestFile(p); got != want {
			t.Errorf("isTestFile(%q) = %v, want %v", p, got, want)
		}
	}
}

// Qwen2.5-Coder-0.5B wrote the exercise's markdown instructions at the top
// of its code block: the prose is dropped when the rest is the code.
func TestProseBeforeTheCodeIsDropped(t *testing.T) {
	r := newDirectRun(t, text("```go\n# Instructions\n\n`Mean` must divide as floats.\n\n"+meanFixed+"```\n"))
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}
}

// A task of the full pipeline whose files lemmings placed (a list remit's
// item) gets the direct attempt too: one call when the code is right. One
// the planner targeted does not.
func TestAPlacedTaskOfTheFullPipelineIsAskedForItsCodeAtOnce(t *testing.T) {
	t.Parallel()
	r := newDirectRun(t, text("```go\n"+meanFixed+"```\n"))
	r.task.Placed = true
	out, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Implementation; res.Status != runstate.ImplFinished || len(r.model.recorded()) != 1 {
		t.Fatalf("status %s after %d calls: %s", res.Status, len(r.model.recorded()), res.Summary)
	}
	if c := r.model.recorded()[0]; c.Format != nil || !strings.Contains(c.LastUser(), "Write the complete new stats.go") {
		t.Errorf("not a direct request: %s", c.LastUser())
	}

	planned := newDirectRun(t, text(`{"action":"read_file","path":"stats.go"}`))
	planned.d.Settings.MaxActions = 1
	if _, err := planned.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: planned.task}); err != nil {
		t.Fatal(err)
	}
	if c := planned.model.recorded(); len(c) == 0 || c[0].Format == nil {
		t.Error("a planner's task was asked for its code at once: its first call is an action")
	}
}

// Code that leaves the file as it was (Qwen2.5-Coder-1.5B copied the failing
// file back in the eval's second attempt) is asked for once more, with the
// cause first: no prefilled fence, no stop at one. With no fix round left
// (an eval's run), the attempt would otherwise end on the unchanged file.
func TestUnchangedCodeIsAskedAgainForTheCauseFirst(t *testing.T) {
	t.Parallel()
	r := newDirectRun(t, text("```go\n"+meanGo+"```\n"), text("It divides two ints.\n\n```go\n"+meanFixed+"```\n"))
	r.d.Settings.Samples, r.d.Settings.Draws, r.d.Settings.FixRounds = 1, 1, 0
	res := r.runQuick(t)
	calls := r.model.recorded()
	if len(calls) != 2 || res.Status != runstate.ImplFinished {
		t.Fatalf("%d calls, status %s: %s", len(calls), res.Status, res.Summary)
	}
	c := calls[1]
	for _, want := range []string{"exactly as it was", "integer division: Mean(1, 2) = 1", "First say in one sentence what in stats.go makes it fail"} {
		if !strings.Contains(c.LastUser(), want) {
			t.Errorf("the second request lacks %q:\n%s", want, c.LastUser())
		}
	}
	if last := c.Messages[len(c.Messages)-1]; last.Role != "user" {
		t.Errorf("the reason-first request is prefilled: %s %q", last.Role, last.Content)
	}
	if stop, _ := c.Options["stop"].([]any); len(stop) > 0 && stop[0] == "\n```" {
		t.Errorf("the reason-first request stops at a fence: %v", stop)
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}

	// A tree that passes as it is (no test shows the task): code that
	// changes nothing is not the change, and is asked for again.
	ok := newDirectRun(t, text("```go\n"+meanGo+"```\n"), text("```go\n"+meanFixed+"```\n"))
	ok.d.Gates = []workspace.Gate{{Name: "check", Command: "true"}}
	ok.d.Settings.Samples, ok.d.Settings.Draws = 1, 1
	res = ok.runQuick(t)
	if calls := ok.model.recorded(); res.Status != runstate.ImplFinished || len(calls) != 2 || !strings.Contains(calls[1].LastUser(), "it changes nothing, and the task asks for a change") {
		t.Errorf("status %s after %d calls", res.Status, len(calls))
	}
	if got := ok.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}
}

// Verified best-of-n (implementor.draws): when the gates fail on the first
// candidate, it is repaired once in the same conversation with what failed,
// then fresh candidates are drawn over the first prompt at a raised
// temperature, each run against the gates; the first that passes is kept,
// and the finish reuses that gate run instead of running the gates again.
func TestADirectAttemptDrawsUntilACandidatePassesTheGates(t *testing.T) {
	t.Parallel()
	wrong := strings.Replace(meanGo, "// Mean returns", "// Mean gives", 1)
	alsoWrong := strings.Replace(meanGo, "// Mean returns", "// Mean yields", 1)
	r := newDirectRun(t, text("```go\n"+wrong+"```\n"), text("```go\n"+alsoWrong+"```\n"), text("```go\n"+meanFixed+"```\n"), text("```go\n"+wrong+"```\n"))
	r.d.Settings.Draws, r.d.Settings.FixRounds = 4, 1
	countRuns(t, r)
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished || res.FixRounds != 0 {
		t.Fatalf("status %s after %d fix rounds: %s", res.Status, res.FixRounds, res.Summary)
	}
	calls := r.model.recorded()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3: the draws stop at the one that passes", len(calls))
	}
	repair := calls[1]
	if repair.Temperature != nil || !strings.Contains(repair.LastUser(), "integer division: Mean(1, 2) = 1") || !strings.Contains(repair.LastUser(), "Fix the cause") {
		t.Errorf("the second draw is not the repair at the role's temperature with the failure (%v):\n%s", repair.Temperature, repair.LastUser())
	}
	// The fresh draw is the first request with what the failure taught,
	// at the role's temperature, and without the failed code.
	fresh := calls[2]
	if fresh.Temperature != nil {
		t.Errorf("the first fresh draw at temperature %v, not the role's own", *fresh.Temperature)
	}
	ask := fresh.LastUser()
	lesson := strings.Index(ask, "An earlier try at this failed the checks")
	if lesson < 0 || !strings.Contains(ask[lesson:], "integer division: Mean(1, 2) = 1") || strings.Contains(ask, "// Mean yields") {
		t.Errorf("the fresh draw does not carry the failure alone:\n%s", ask)
	}
	if first := calls[0].LastUser(); strings.Replace(ask, ask[lesson:strings.Index(ask, "Write the complete")], "", 1) != first {
		t.Errorf("the fresh draw is not the first request with the lesson:\n%s\n---\n%s", ask, first)
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}
	if n := gateRuns(t, r); n != 3 {
		t.Errorf("the gates ran %d times, want once per candidate (3): the finish ran them again", n)
	}
	if len(res.Gates) != 1 || !res.Gates[0].Passed || res.GatesDiffHash == "" {
		t.Errorf("the passing run is not handed to QA: %+v %q", res.Gates, res.GatesDiffHash)
	}
}

// After the lesson's first draw, the draws ask for a short plan before the
// code (Aider's replies open so): the reply starts with the plan's opening,
// no stop ends it at the code block's opening fence, the first at the role's
// temperature and the next raised; the plan is not part of the code.
func TestLaterDrawsAskForAPlanBeforeTheCode(t *testing.T) {
	t.Parallel()
	var replies []llmtest.Reply
	for _, word := range []string{"gives", "yields", "makes"} {
		replies = append(replies, text("```go\n"+strings.Replace(meanGo, "// Mean returns", "// Mean "+word, 1)+"```\n"))
	}
	planned := " Divide as floats.\n\n```go\n"
	replies = append(replies, text(planned+strings.Replace(meanGo, "// Mean returns", "// Mean computes", 1)+"```\nThis divides.\n"),
		text(planned+meanFixed+"```\n"))
	r := newDirectRun(t, replies...)
	r.d.Gates = []workspace.Gate{sayingGate}
	r.d.Settings.Draws, r.d.Settings.FixRounds = 5, 0
	res := r.runQuick(t)
	calls := r.model.recorded()
	if res.Status != runstate.ImplFinished || len(calls) != 5 {
		t.Fatalf("status %s after %d calls, want 5: %s", res.Status, len(calls), res.Summary)
	}
	if strings.Contains(calls[2].LastUser(), "Say briefly") {
		t.Errorf("the lesson's first draw asks for a plan:\n%s", calls[2].LastUser())
	}
	for i, want := range []*float64{nil, ptr(0.6)} {
		c := calls[3+i]
		if ask := c.LastUser(); !strings.Contains(ask, "An earlier try at this failed the checks") || !strings.HasSuffix(ask, "Say briefly what you will do, then write the complete new stats.go in one ```go fenced block.") {
			t.Errorf("draw %d is not the lesson with the plan asked for:\n%s", 4+i, ask)
		}
		if last := c.Messages[len(c.Messages)-1]; last.Role != "assistant" || last.Content != "Ok, I will:\n\n1." {
			t.Errorf("draw %d's reply does not start with the plan's opening: %+v", 4+i, last)
		}
		if stops, _ := c.Options["stop"].([]any); !slices.Contains(stops, any("\n```\n")) || slices.Contains(stops, any("\n```")) {
			t.Errorf("draw %d does not stop at the closing fence alone (a bare fence would end it at the code's opening): %q", 4+i, stops)
		}
		if (c.Temperature == nil) != (want == nil) || (want != nil && *c.Temperature != *want) {
			t.Errorf("draw %d at temperature %v, want %v", 4+i, c.Temperature, want)
		}
		// A raised temperature's draw is seeded by its place: the run made
		// again draws the same.
		if seed := c.Options["seed"]; (want == nil) != (seed == nil) || (want != nil && seed != 1.0) {
			t.Errorf("draw %d seeded %v", 4+i, seed)
		}
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go is not the planned draw's code alone:\n%s", got)
	}
}

func ptr(f float64) *float64 { return &f }

// sayingGate fails as floatGate does, saying the doc line each candidate
// wrote: every candidate fails in its own way, so none ends the drawing as
// one that came no closer.
var sayingGate = workspace.Gate{Name: "check", Command: `grep -q 'float64(total) / float64' stats.go || { echo "stats.go:9:9: integer division in the Mean that $(grep -o '// Mean [a-z]*' stats.go | cut -c9-): Mean(1, 2) = 1, want 1.5"; exit 1; }`}

// Candidates that fail as the one before them end the drawing: two in a row
// that come no closer (the same failure) and no more calls are spent, so a
// task the model cannot do costs three calls, not five.
func TestTheDrawsStopWhenTheCandidatesStopGettingCloser(t *testing.T) {
	t.Parallel()
	var replies []llmtest.Reply
	for _, word := range []string{"gives", "yields", "makes", "computes", "finds"} {
		replies = append(replies, text("```go\n"+strings.Replace(meanGo, "// Mean returns", "// Mean "+word, 1)+"```\n"))
	}
	r := newDirectRun(t, replies...)
	r.d.Settings.Draws, r.d.Settings.FixRounds = 5, 0
	res := r.runQuick(t)
	if n := len(r.model.recorded()); n != 3 {
		t.Errorf("%d calls, want 3: the first candidate, then two that failed the same way", n)
	}
	if got := r.file(t, "stats.go"); res.Status != runstate.ImplFinished || !strings.Contains(got, "// Mean gives") {
		t.Errorf("status %s; stats.go is not the first candidate:\n%s", res.Status, got)
	}
}

// Code that is the file as it was shown, failing as before, is not repaired
// (the model would copy it again) nor drawn plainly: the next draw asks for
// the plan at once.
func TestACopiedFileIsFollowedByAPlannedDraw(t *testing.T) {
	t.Parallel()
	r := newDirectRun(t, text("```go\n"+meanGo+"```\n"), text(" Divide as floats.\n\n```go\n"+meanFixed+"```\n"))
	r.d.Settings.Draws, r.d.Settings.FixRounds = 5, 0
	res := r.runQuick(t)
	calls := r.model.recorded()
	if res.Status != runstate.ImplFinished || len(calls) != 2 {
		t.Fatalf("status %s after %d calls, want 2: %s", res.Status, len(calls), res.Summary)
	}
	next := calls[1]
	if ask := next.LastUser(); !strings.Contains(ask, "An earlier try at this failed the checks") || !strings.Contains(ask, "Say briefly what you will do") || strings.Contains(ask, "Fix the cause") {
		t.Errorf("the draw after the copy is not the planned one with the lesson:\n%s", ask)
	}
	if next.Temperature != nil {
		t.Errorf("the first planned draw at temperature %v, not the role's own", *next.Temperature)
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}
}

// A candidate the model wrote before and that failed is known to fail: it
// is neither written nor gated again, and the draws go on.
func TestADirectAttemptDoesNotGateTheSameCandidateTwice(t *testing.T) {
	t.Parallel()
	wrong := strings.Replace(meanGo, "// Mean returns", "// Mean gives", 1)
	r := newDirectRun(t, text("```go\n"+wrong+"```\n"), text("```go\n"+wrong+"```\n"), text("```go\n"+meanFixed+"```\n"))
	r.d.Settings.Draws, r.d.Settings.FixRounds = 4, 0
	countRuns(t, r)
	res := r.runQuick(t)
	if res.Status != runstate.ImplFinished || len(r.model.recorded()) != 3 {
		t.Fatalf("status %s after %d calls: %s", res.Status, len(r.model.recorded()), res.Summary)
	}
	if n := gateRuns(t, r); n != 2 {
		t.Errorf("the gates ran %d times, want 2: the repeated candidate ran them again", n)
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}
}

// When no draw passes, the first candidate that landed (the role's own
// temperature) stays for the next try, not the last and wildest one.
func TestADirectAttemptKeepsItsFirstCandidateWhenNoDrawPasses(t *testing.T) {
	t.Parallel()
	var replies []llmtest.Reply
	for _, word := range []string{"gives", "yields", "makes", "computes"} {
		replies = append(replies, text("```go\n"+strings.Replace(meanGo, "// Mean returns", "// Mean "+word, 1)+"```\n"))
	}
	r := newDirectRun(t, replies...)
	r.d.Gates = []workspace.Gate{sayingGate}
	r.d.Settings.Draws, r.d.Settings.FixRounds = 4, 0
	res := r.runQuick(t)
	if n := len(r.model.recorded()); n != 4 {
		t.Errorf("%d calls, want the 4 draws", n)
	}
	if res.Status != runstate.ImplFinished {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	if got := r.file(t, "stats.go"); !strings.Contains(got, "// Mean gives") {
		t.Errorf("stats.go is not the first candidate:\n%s", got)
	}
}

// countRuns makes the run's gate note each of its runs in an ignored file of
// the work tree (the sandbox refuses writes outside it).
func countRuns(t *testing.T, r *weakRun) {
	t.Helper()
	out, err := exec.Command("git", "-C", r.wt.Dir(), "rev-parse", "--path-format=absolute", "--git-path", "info/exclude").Output()
	if err != nil {
		t.Fatal(err)
	}
	exclude := strings.TrimSpace(string(out))
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exclude, []byte("gate-runs.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := r.d.Gates[0]
	g.Command = "echo run >> gate-runs.log; " + g.Command
	r.d.Gates = []workspace.Gate{g}
}

func gateRuns(t *testing.T, r *weakRun) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.wt.Dir(), "gate-runs.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "run\n")
}

// A candidate that does not build is repaired once in the same conversation,
// with the compiler's words, before fresh draws (Qwen-1.5B wrote the same
// type error at every temperature).
func TestADirectAttemptRepairsCodeThatDoesNotBuild(t *testing.T) {
	t.Parallel()
	typeError := strings.Replace(meanFixed, "float64(total) / float64(len(xs))", "float64(total) / len(xs)", 1)
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo, "stats_test.go": meanTestGo, "go.mod": "module stats\n\ngo 1.22\n"},
		text("```go\n"+typeError+"```\n"), text("```go\n"+meanFixed+"```\n"))
	r.task.TargetFiles = []string{"stats.go", "stats_test.go"}
	r.d.Gates = []workspace.Gate{floatGate}
	r.d.Settings.Draws, r.d.Settings.FixRounds = 4, 0
	r.d.Settings.SyntaxChecks = map[string]string{".go": "go vet ./{dir}"}
	res := r.runQuick(t)
	calls := r.model.recorded()
	if res.Status != runstate.ImplFinished || len(calls) != 2 {
		t.Fatalf("status %s after %d calls: %s", res.Status, len(calls), res.Summary)
	}
	repair := calls[1]
	if repair.Temperature != nil {
		t.Errorf("the repair is drawn at temperature %v, not the role's own", *repair.Temperature)
	}
	msgs := repair.Messages
	if len(msgs) < 3 || msgs[len(msgs)-3].Role != "assistant" || !strings.Contains(msgs[len(msgs)-3].Content, "/ len(xs)") {
		t.Fatalf("the repair does not carry the candidate that failed: %+v", msgs)
	}
	ask := repair.LastUser()
	for _, want := range []string{"does not build", "mismatched types", "with the fix"} {
		if !strings.Contains(ask, want) {
			t.Errorf("the repair request lacks %q:\n%s", want, ask)
		}
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}
}

// A repair that still does not build, with another error, is repaired in
// turn in the same conversation; one that fails the same way is not.
func TestARepairThatFailsAnotherWayIsRepairedAgain(t *testing.T) {
	t.Parallel()
	files := map[string]string{"stats.go": meanGo, "stats_test.go": meanTestGo, "go.mod": "module stats\n\ngo 1.22\n"}
	first := strings.Replace(meanFixed, "float64(total) / float64(len(xs))", "float64(total) / len(xs)", 1)
	second := strings.Replace(meanFixed, "float64(total) / float64(len(xs))", "total / float64(len(xs))", 1)
	setUp := func(replies ...llmtest.Reply) *weakRun {
		r := newWeakRun(t, implementor.EditText, files, replies...)
		r.task.TargetFiles = []string{"stats.go", "stats_test.go"}
		r.d.Gates = []workspace.Gate{floatGate}
		r.d.Settings.Draws, r.d.Settings.FixRounds = 4, 0
		r.d.Settings.SyntaxChecks = map[string]string{".go": "go vet ./{dir}"}
		return r
	}

	r := setUp(text("```go\n"+first+"```\n"), text("```go\n"+second+"```\n"), text("```go\n"+meanFixed+"```\n"))
	res := r.runQuick(t)
	calls := r.model.recorded()
	if res.Status != runstate.ImplFinished || len(calls) != 3 {
		t.Fatalf("status %s after %d calls: %s", res.Status, len(calls), res.Summary)
	}
	again := calls[2]
	var replies []string
	for _, m := range again.Messages {
		if m.Role == "assistant" && strings.Contains(m.Content, "func Mean") {
			replies = append(replies, m.Content)
		}
	}
	if again.Temperature != nil || len(replies) != 2 || !strings.Contains(replies[1], "total / float64") || !strings.Contains(again.LastUser(), "does not build") {
		t.Errorf("the second repair does not follow the first in one conversation (%d replies, temperature %v):\n%s", len(replies), again.Temperature, again.LastUser())
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go:\n%s", got)
	}

	// The same error again is no progress: the next draw is a fresh one.
	sameError := strings.Replace(first, "// Mean returns", "// Mean gives", 1)
	r = setUp(text("```go\n"+first+"```\n"), text("```go\n"+sameError+"```\n"), text("```go\n"+meanFixed+"```\n"))
	if res := r.runQuick(t); res.Status != runstate.ImplFinished {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	if fresh := r.model.recorded()[2]; !strings.Contains(fresh.LastUser(), "An earlier try at this did not build") || len(fresh.Messages) > 3 {
		t.Errorf("after a repair that failed the same way, the third call is not a fresh draw:\n%+v", fresh.Messages)
	}
}

// A whole file that leaves out a declaration it still calls is spliced by
// unit, so what the model forgot stays (Qwen-1.5B, adding UniqueWords,
// dropped the Words its functions call, in every draw); a file that leaves
// out one it no longer calls is written as it is.
func TestAWholeFileThatDropsWhatItCallsIsSplicedByUnit(t *testing.T) {
	t.Parallel()
	const sum = "// Sum adds xs.\nfunc Sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n"
	const file = "package stats\n\n" + sum + "\n// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\treturn float64(Sum(xs) / len(xs))\n}\n"
	const fixedMean = "// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\treturn float64(Sum(xs)) / float64(len(xs))\n}\n"
	const ownMean = "// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn float64(t) / float64(len(xs))\n}\n"
	// Over half the file's lines, so the reply does not read as a piece of it.
	const maxFunc = "\n// Max is the largest of xs.\nfunc Max(xs []int) int {\n\tm := xs[0]\n\tfor _, x := range xs {\n\t\tm = max(m, x)\n\t}\n\treturn m\n}\n"
	for name, tc := range map[string]struct {
		reply   string
		keepSum bool
	}{
		"calls what it dropped":           {"package stats\n\n" + fixedMean + maxFunc, true},
		"no longer calls what it dropped": {"package stats\n\n" + ownMean + maxFunc, false},
	} {
		t.Run(name, func(t *testing.T) {
			r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": file}, text("```go\n"+tc.reply+"```\n"))
			r.task.TargetFiles = []string{"stats.go"}
			r.d.Gates = []workspace.Gate{{Name: "check", Command: "grep -q 'float64(.*) / float64(len(xs))' stats.go"}}
			r.d.Settings.Draws = 1
			if res := r.runQuick(t); res.Status != runstate.ImplFinished {
				t.Fatalf("status %s: %s", res.Status, res.Summary)
			}
			got := r.file(t, "stats.go")
			if strings.Contains(got, "func Sum(") != tc.keepSum {
				t.Errorf("Sum kept: %v, want %v:\n%s", !tc.keepSum, tc.keepSum, got)
			}
			if !strings.Contains(got, "/ float64(len(xs))") {
				t.Errorf("the reply's Mean is not in place:\n%s", got)
			}
		})
	}
}
