package implementor

// The test a remit asks for. The direct attempt changes the one source file
// and only shows the tests, so a remit that asked for a test with each
// change ("each with a test in textstats_test.go") got the code and no test,
// and QA's review let it pass (Qwen2.5-Coder-1.5B). Once the code has passed
// its gates, one more code call asks for the test: the test file as it is,
// the code the task changed, and a request to add a test of it. It lands and
// the gates run in the sandbox, as the code's did. A test that fails them,
// or a reply that cannot be used, is put back and the code stays: the code
// passed, and a small coder's wrong test is no reason to lose it. One call:
// no draws, no repair.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// testWriter asks for a test in a call of its own: the one a remit asks
// for, one that shows the change, or one written before the code.
type testWriter struct {
	*scope
	conv     *conversation
	tree     *treeWriter
	gates    *gateRunner
	requests *requestBuilder
	coder    *coder
}

// askedCodeLines bound the changed code the test request shows: the new
// or changed functions, not the file.
const askedCodeLines = 60

// askedTest is the test file the task asks a test in: the first the remit
// named that the attempt did not change as its code.
func (tw *testWriter) askedTest() (string, bool) {
	for _, p := range CleanFiles(tw.t.Tests) {
		if IsTestFile(p) && p != tw.directPath {
			return p, true
		}
	}
	return "", false
}

// writeTest makes the one call for a test of the code done finished with:
// the test the remit asks for, else — when a model would judge the task
// and no test failed at its start — the test that shows the change
// (evidence). It lands the test, runs the gates, and says in done's summary
// what became of it. codeBefore is the code file as the attempt found it.
// An error is a system fault or the run being stopped.
func (tw *testWriter) writeTest(ctx context.Context, done *runstate.ImplResult, codeBefore string, evidence bool) error {
	if p, ok := tw.askedTest(); ok {
		return tw.addTest(ctx, done, codeBefore, p, false)
	}
	if p, ok := tw.evidenceTest(); ok && evidence && tw.t.StartTested && tw.t.StartPassed {
		return tw.addTest(ctx, done, codeBefore, p, true)
	}
	return nil
}

// addTest asks for a test in p and keeps it when the gates pass with it;
// evidence: when it also fails without the change.
func (tw *testWriter) addTest(ctx context.Context, done *runstate.ImplResult, codeBefore, p string, evidence bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if tw.gates.gatesFailed {
		// A test beside code that fails could not be told apart from it.
		tw.dropTest(ctx, done, p, evidence, "the code's gates fail, so no test was asked for")
		return nil
	}
	if left, limited := tw.d.Clock.WallTimeLeft(tw.s, tw.d.Clock.Now()); limited && left <= 0 {
		tw.dropTest(ctx, done, p, evidence, "the run's wall time is spent")
		return nil
	}
	codeAfter, err := tw.d.Work.FS().ReadFile(tw.directPath)
	if err != nil {
		return fmt.Errorf("implementor: read %s for its test: %w", tw.directPath, err)
	}
	act := Action{actionHead: actionHead{Action: "edit", Thought: "(lemmings) the test the remit asks for", Path: p}}
	if evidence {
		act.Thought = "(lemmings) a test that shows the change"
	}
	old, readErr := tw.d.Work.FS().ReadFile(p)
	switch {
	case errors.Is(readErr, fs.ErrNotExist):
		act.Action = "write_file"
	case readErr == nil:
		act.Symbol = tw.testAnchor(ctx, p, string(old), codeBefore, string(codeAfter))
	}
	fence := fenceFor(tw.directPath)
	ask := fmt.Sprintf("The task also asks for a test in %s: add one that checks what the task did (%s).", p, tw.t.Title)
	if evidence {
		ask = fmt.Sprintf("Now add a test to %s that checks what the task asks (%s): one that fails without your change and passes with it.", p, tw.t.Title)
	}
	lead := fmt.Sprintf("Your change to %s is in place and passes the checks:\n%s%s\n%s\n%s\n\n%s",
		tw.directPath, fence, langOf(tw.directPath), tw.changedCode(ctx, codeBefore, string(codeAfter)), fence, ask)
	// A conversation of its own: the code exchange is done, and the changed
	// code is all of it the test needs.
	tw.conv.history = nil
	tw.requests.writingTest = true
	ex, err := tw.coder.codeEdit(ctx, act, "", lead)
	tw.requests.writingTest = false
	done.Actions++
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		tw.dropTest(ctx, done, p, evidence, "the model call failed: "+textutil.FirstLine(err.Error()))
		return nil
	}
	tw.d.emitAction(ctx, tw.t, done.Actions, act, ex.result)
	switch {
	case !ex.land.landed:
		tw.dropTest(ctx, done, p, evidence, "the reply could not be used: "+textutil.FirstLine(strings.TrimPrefix(ex.result, "error: ")))
		return nil
	case ex.land.introduced != "":
		return tw.undoTest(ctx, done, p, evidence, ex.land, "it does not build: "+textutil.FirstLine(ex.land.introduced))
	}
	return tw.keepTest(ctx, done, p, evidence, ex.land, codeBefore, string(codeAfter))
}

// keepTest runs the gates with a landed test and keeps it when they pass
// (evidence: and fail without the change), saying in done's summary what
// became of it; QA reuses the gate run on the tree it ran on.
func (tw *testWriter) keepTest(ctx context.Context, done *runstate.ImplResult, p string, evidence bool, land landing, codeBefore, codeAfter string) error {
	if len(tw.d.Gates) > 0 {
		results := workspace.RunGates(ctx, tw.d.Sandbox, tw.d.Work.Dir(), tw.d.Gates, tw.d.Settings.GateOutputBytes)
		for _, r := range results {
			tw.d.emitGate(ctx, tw.t, "test", r)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !workspace.AllPassed(results) {
			return tw.undoTest(ctx, done, p, evidence, land, "the gates fail with it: "+tw.gates.gateFailure(results))
		}
		if evidence {
			fails, err := tw.failsWithout(ctx, codeBefore, codeAfter)
			if err != nil {
				return err
			}
			if !fails {
				return tw.undoTest(ctx, done, p, evidence, land, "it passes without the change too, so it shows nothing the change did")
			}
		}
		// QA reuses the run on the tree it ran on, the test included.
		done.Gates, done.GatesDiffHash = nil, ""
		if diff, _, err := tw.d.Work.Changes(ctx, tw.t.StartCommit); err == nil {
			done.GatesDiffHash = workspace.DiffHash(diff)
			for _, r := range results {
				done.Gates = append(done.Gates, runstate.GateOutcome{Name: r.Name, Command: r.Command, Passed: r.Passed, ExitCode: r.ExitCode, Duration: r.Duration, Output: r.Output})
			}
		}
	}
	if evidence {
		if len(tw.d.Gates) == 0 {
			return tw.undoTest(ctx, done, p, evidence, land, "no gate runs it")
		}
		done.Evidence = fmt.Sprintf("a test lemmings added to %s fails without the change and passes with it", p)
		done.Summary = strings.TrimSpace(done.Summary + " Added a test to " + p + " that fails without the change and passes with it.")
		return nil
	}
	checked := "the gates pass with it"
	if len(tw.d.Gates) == 0 {
		checked = "no gate runs it"
	}
	done.Summary = strings.TrimSpace(done.Summary + fmt.Sprintf(" Wrote the test the task asks for in %s; %s.", p, checked))
	return nil
}

// failsWithout runs the gates with the code file as the attempt found it
// and the new test in place, then puts the change back: whether they fail.
func (tw *testWriter) failsWithout(ctx context.Context, before, after string) (bool, error) {
	if len(tw.d.Gates) == 0 {
		return false, nil
	}
	if err := tw.d.Work.FS().Restore(tw.directPath, []byte(before)); err != nil {
		return false, fmt.Errorf("implementor: put %s back as it was to check its test: %w", tw.directPath, err)
	}
	results := workspace.RunGates(ctx, tw.d.Sandbox, tw.d.Work.Dir(), tw.d.Gates, tw.d.Settings.GateOutputBytes)
	if err := tw.d.Work.FS().Restore(tw.directPath, []byte(after)); err != nil {
		return false, fmt.Errorf("implementor: put the change to %s back after checking its test: %w", tw.directPath, err)
	}
	for _, r := range results {
		tw.d.emitGate(ctx, tw.t, "without the change", r)
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return !workspace.AllPassed(results), nil
}

// evidenceTest is the test file a test that shows the change goes in: one
// the task shows that is named for the changed file, else one beside it,
// else one the task shows; a test file named for the changed file in the
// work tree otherwise. False when there is none: a new test file would have
// to guess how the project's tests import its code.
func (tw *testWriter) evidenceTest() (string, bool) {
	var shown []string
	for _, p := range CleanFiles(tw.t.TargetFiles) {
		if IsTestFile(p) {
			shown = append(shown, p)
		}
	}
	for _, p := range shown {
		if sameStem(tw.directPath, p) {
			return p, true
		}
	}
	for _, p := range shown {
		if path.Dir(p) == path.Dir(tw.directPath) {
			return p, true
		}
	}
	if len(shown) > 0 {
		return shown[0], true
	}
	dir, base := path.Dir(tw.directPath), path.Base(tw.directPath)
	stem := strings.TrimSuffix(base, path.Ext(base))
	var cands []string
	switch path.Ext(base) {
	case ".go":
		cands = []string{path.Join(dir, stem+"_test.go")}
	case ".py":
		cands = []string{path.Join(dir, "test_"+stem+".py"), path.Join("tests", "test_"+stem+".py"), path.Join(dir, "tests", "test_"+stem+".py")}
	}
	for _, p := range cands {
		if ok, err := tw.d.Work.FS().Exists(p); err == nil && ok {
			return p, true
		}
	}
	return "", false
}

// sameStem says whether a test file is named for a source file (leap.py
// and test_leap.py, add.go and add_test.go).
func sameStem(src, test string) bool {
	stem := strings.TrimSuffix(path.Base(src), path.Ext(src))
	t := strings.TrimSuffix(path.Base(test), path.Ext(test))
	for _, cut := range []string{"test_", "_test", ".test", ".spec"} {
		t = strings.TrimPrefix(strings.TrimSuffix(t, cut), cut)
	}
	return stem == t
}

// undoTest puts the test file back as it was before the test landed, and
// says why the test was dropped.
func (tw *testWriter) undoTest(ctx context.Context, done *runstate.ImplResult, p string, evidence bool, land landing, why string) error {
	if err := tw.tree.undo(land); err != nil {
		return fmt.Errorf("implementor: put back %s after its test was dropped: %w", p, err)
	}
	tw.dropTest(ctx, done, p, evidence, why)
	return nil
}

// dropTest records a test not kept: an event, and the summary QA reads.
func (tw *testWriter) dropTest(ctx context.Context, done *runstate.ImplResult, p string, evidence bool, why string) {
	why = textutil.Clip(why, 300)
	tw.d.emit(ctx, events.ImplementorTestDropped{Task: tw.t.ID, Attempt: tw.t.Attempt, Path: p, Reason: why})
	if evidence {
		done.Summary = strings.TrimSpace(done.Summary + fmt.Sprintf(" No test showing the change was kept in %s (%s).", p, why))
		return
	}
	done.Summary = strings.TrimSpace(done.Summary + fmt.Sprintf(" The test the task asks for in %s was not written (%s); %s is as it was.", p, why, p))
}

// testAnchor is the unit of a large test file the test request shows and
// asks the new test after (a small one is asked for whole): the test named
// for a function the task changed, else the file's last function.
func (tw *testWriter) testAnchor(ctx context.Context, p, test, codeBefore, codeAfter string) string {
	units, err := tw.d.Parser.Units(ctx, p, []byte(test))
	if err != nil || len(units) == 0 {
		return ""
	}
	changed := tw.changedUnits(ctx, codeBefore, codeAfter)
	key := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	var last string
	for _, u := range units {
		switch u.Kind {
		case "func", "def", "method":
		default:
			continue
		}
		for _, c := range changed {
			if strings.Contains(key(u.Short()), key(c.Short())) {
				return u.Name
			}
		}
		last = u.Name
	}
	return last
}

// changedUnits are the units of the code file that the task added or
// changed (nil when no parser serves it).
func (tw *testWriter) changedUnits(ctx context.Context, before, after string) []splice.Unit {
	now, err := tw.d.Parser.Units(ctx, tw.directPath, []byte(after))
	if err != nil {
		return nil
	}
	was, _ := tw.d.Parser.Units(ctx, tw.directPath, []byte(before))
	textOf := func(src string, u splice.Unit) string {
		lines := strings.Split(src, "\n")
		return strings.Join(lines[max(0, u.Start-1):min(u.End, len(lines))], "\n")
	}
	var out []splice.Unit
	for _, u := range now {
		i := slices.IndexFunc(was, func(w splice.Unit) bool { return w.Name == u.Name })
		if i < 0 || textOf(before, was[i]) != textOf(after, u) {
			out = append(out, u)
		}
	}
	return out
}

// changedCode is the code the task added or changed, as the test request
// shows it: the changed units whole, else (no parser, or only imports
// changed) the change as a diff; at most askedCodeLines lines.
func (tw *testWriter) changedCode(ctx context.Context, before, after string) string {
	var parts []string
	lines := strings.Split(after, "\n")
	for _, u := range tw.changedUnits(ctx, before, after) {
		parts = append(parts, strings.Join(lines[max(0, u.Start-1):min(u.End, len(lines))], "\n"))
	}
	text := strings.Join(parts, "\n\n")
	if text == "" {
		if diff, _, err := tw.d.Work.Changes(ctx, tw.t.StartCommit); err == nil {
			text = strings.TrimSpace(diff)
		}
	}
	if all := strings.Split(text, "\n"); len(all) > askedCodeLines {
		text = strings.Join(all[:askedCodeLines], "\n") + "\n…"
	}
	return text
}

// testRequest asks the test call for the test file or its anchor unit with
// a new test added, after the view of it: plain words, as directRequest.
func testRequest(p string, g grain, exists bool) string {
	fence := fenceFor(p) + langOf(p)
	switch {
	case g.kind == grainUnit:
		return fmt.Sprintf("Write the %s %s as it is and your new test after it, in one %s fenced block.", kindWord(g.unit), g.unit.Name, fence)
	case !exists:
		return fmt.Sprintf("Write the new file %s with the test, complete, in one %s fenced block.", p, fence)
	}
	return fmt.Sprintf("Write the complete new %s: the tests it has, then your new test, in one %s fenced block.", p, fence)
}
