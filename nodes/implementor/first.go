package implementor

// The test written first: before a task's first code, a test of what it
// asks, kept only when it fails on the code as it is (docs/implementor.md).

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
	"github.com/lemmings-dev/lemmings/workspace"
	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// reproduction is a test written before any code: the file it is in, what
// the file was before it, and whether it was kept.
type reproduction struct {
	path, was string
	tried     bool // a test was asked for first (kept or not)
	kept      bool
}

// reproduce asks, before any code, for a test of what the task asks for,
// one that fails with the code as it is: when the tests pass at a task's
// start, nothing tells a small coder its change is wrong, and its draws are
// gated on tests that pass either way. Kept — it landed and the gates fail
// on it, in its file — it is what the code's draws are gated against, and
// the evidence QA decides by when they pass. One call; a test that passes
// already, does not build or fails elsewhere is dropped and the attempt
// goes on as before.
func (tw *testWriter) reproduce(ctx context.Context, codeAct Action) (reproduction, error) {
	p, ok := tw.evidenceTest()
	if !ok || IsTestFile(codeAct.Path) {
		return reproduction{}, nil
	}
	old, readErr := tw.d.Work.FS().ReadFile(p)
	act := Action{actionHead: actionHead{Action: "edit", Thought: "(lemmings) a test of what the task asks, first", Path: p}}
	switch {
	case errors.Is(readErr, fs.ErrNotExist):
		act.Action = "write_file"
	case readErr != nil:
		return reproduction{}, nil
	}
	code, err := tw.d.Work.FS().ReadFile(codeAct.Path)
	if err != nil {
		return reproduction{}, nil
	}
	g := tw.requests.chooseGrain(ctx, codeAct, codeAct.Path, string(code), true)
	if act.Action == "edit" {
		act.Symbol = tw.reproAnchor(ctx, p, string(old), g.unit.Short())
	}
	lead := fmt.Sprintf("Before any change, write a test in %s of what the task asks for: it must fail with the code as it is now, and pass once the task is done.\n%s",
		p, strings.TrimSpace(tw.requests.grainView(codeAct.Path, string(code), true, g)))
	tw.conv.history = nil
	tw.requests.writingTest = true
	ex, err := tw.coder.codeEdit(ctx, act, "", lead)
	tw.requests.writingTest = false
	tw.conv.history = nil // the code's requests start afresh
	tried := reproduction{tried: true}
	if err != nil {
		if ctx.Err() != nil {
			return reproduction{}, ctx.Err()
		}
		tw.dropRepro(ctx, p, "the model call failed: "+textutil.FirstLine(err.Error()))
		return tried, nil
	}
	tw.d.emitAction(ctx, tw.t, 0, act, ex.result)
	drop := func(why string) (reproduction, error) {
		if ex.land.landed {
			if err := tw.tree.undo(ex.land); err != nil {
				return reproduction{}, fmt.Errorf("implementor: put back %s: %w", p, err)
			}
		}
		tw.dropRepro(ctx, p, why)
		return tried, nil
	}
	switch {
	case !ex.land.landed:
		return drop("the reply could not be used: " + textutil.FirstLine(strings.TrimPrefix(ex.result, "error: ")))
	case ex.land.introduced != "" && !strings.Contains(ex.land.introduced, path.Base(p)):
		return drop("it breaks the build elsewhere: " + textutil.FirstLine(ex.land.introduced))
	}
	results := workspace.RunGates(ctx, tw.d.Sandbox, tw.d.Work.Dir(), tw.d.Gates, tw.d.Settings.GateOutputBytes)
	for _, r := range results {
		tw.d.emitGate(ctx, tw.t, "test first", r)
	}
	if err := ctx.Err(); err != nil {
		return reproduction{}, err
	}
	if workspace.AllPassed(results) {
		return drop("it passes with the code as it is, so it does not show what the task asks for")
	}
	failing := ""
	for _, r := range results {
		if !r.Passed {
			failing += r.Output
		}
	}
	if !tw.failsOnNewTest(ctx, p, string(old), failing) {
		return drop("the checks fail, but not on the new test in " + p + ": " + tw.gates.gateFailure(results))
	}
	return reproduction{path: p, was: string(old), tried: true, kept: true}, nil
}

// reproAnchor is the test a request for a test written first shows and
// asks back with the new one: the shortest test that calls the target, else
// the shortest test, else the file's last function. Every line of it is
// written again, and a long helper asked back ran a small coder's reply
// into its limit before the new test began.
func (tw *testWriter) reproAnchor(ctx context.Context, p, test, target string) string {
	units, err := tw.d.Parser.Units(ctx, p, []byte(test))
	if err != nil {
		return ""
	}
	lines := strings.Split(test, "\n")
	var best splice.Unit
	bestCalls, last := false, ""
	for _, u := range units {
		if u.Kind != "func" && u.Kind != "def" && u.Kind != "method" {
			continue
		}
		last = u.Name
		if name := u.Short(); !strings.HasPrefix(name, "Test") && !strings.HasPrefix(name, "test") {
			continue
		}
		body := strings.Join(lines[max(0, u.Start-1):min(u.End, len(lines))], "\n")
		calls := target != "" && strings.Contains(body, target+"(")
		if best.Name == "" || (calls && !bestCalls) || (calls == bestCalls && u.Lines() < best.Lines()) {
			best, bestCalls = u, calls
		}
	}
	if best.Name == "" {
		return last
	}
	return best.Name
}

// failsOnNewTest says whether a failure is the new test's: the output names
// the test file, or a test the file has now and did not have before.
func (tw *testWriter) failsOnNewTest(ctx context.Context, p, before, output string) bool {
	if strings.Contains(output, path.Base(p)) {
		return true
	}
	now, err := tw.d.Work.FS().ReadFile(p)
	if err != nil {
		return false
	}
	was, _ := tw.d.Parser.Units(ctx, p, []byte(before))
	units, _ := tw.d.Parser.Units(ctx, p, now)
	for _, u := range units {
		if !slices.ContainsFunc(was, func(w splice.Unit) bool { return w.Name == u.Name }) && strings.Contains(output, u.Short()) {
			return true
		}
	}
	return false
}

// dropRepro records a test written first that was not kept.
func (tw *testWriter) dropRepro(ctx context.Context, p, why string) {
	tw.d.emit(ctx, events.ImplementorTestDropped{Task: tw.t.ID, Attempt: tw.t.Attempt, Path: p, Reason: "test first: " + textutil.Clip(why, 300)})
}
