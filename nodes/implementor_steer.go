package nodes

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/workspace"
)

// steer watches for a model going round in circles. A repeat (same action,
// same arguments, same result: loopThreshold times) gets a nudge appended to
// its result that names it and suggests another way; the same once more
// ends the attempt. Edits that keep failing are nudged, then end it too.
func (l *implLoop) steer(act implAction, signature string, result *string) string {
	hint := l.hint
	l.hint = ""
	defer func() {
		if hint != "" {
			*result += "\n" + hint
		}
	}()
	if repeated, count := l.detector.Record(act.Action, signature, *result); repeated {
		if count > loopThreshold {
			return fmt.Sprintf("repeated the same %s action %d times with the same result, after a nudge", act.Action, count)
		}
		*result += fmt.Sprintf("\nNOTE: this is the %s time you did this same %s and got this same result. Doing it again will not help: %s",
			ordinal(count), act.Action, suggestion(act.Action))
	}
	switch {
	case l.failStreak >= failedEditLimit:
		return fmt.Sprintf("%d edits in a row did not apply", l.failStreak)
	case l.failStreak >= failedEditNudge && strings.HasPrefix(*result, "error"):
		*result += fmt.Sprintf("\nNOTE: your last %d edits did not apply. Read the file again (read_file) and copy the lines exactly, or change a smaller part.", l.failStreak)
		if l.text {
			*result += " The file can also be rewritten whole (write_file)."
		}
	}
	return ""
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "first"
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return fmt.Sprintf("%dth", n)
}

func suggestion(action string) string {
	if t, ok := toolNamed(action); ok && t.onRepeat != "" {
		return t.onRepeat
	}
	return "take another approach."
}

// finish runs the gates inside the loop before the attempt ends: a failure
// goes back to the model, summarised, up to FixRounds times; then the
// attempt ends anyway and QA judges it. It returns nil when the loop goes on.
func (l *implLoop) finish(ctx context.Context, act implAction, args string, n int) *ImplResult {
	tree := l.treeHash(ctx)
	if l.failedTree != "" && tree == l.failedTree {
		// The gates failed on this very code: lemmings answers without
		// running them again, and a second such finish ends the attempt
		// (a small coder said finish four times in a row with the test
		// failing, each a model call).
		graph.Emit(ctx, "implementor_finish_refused", map[string]any{"task": l.t.ID, "attempt": l.t.Attempt})
		return &ImplResult{Status: ImplLoop, Actions: n,
			Summary: "said finish twice while a gate failed on the same code: " + textutil.FirstLine(strings.TrimSpace(l.failedGates))}
	}
	done, feedback := l.finishGates(ctx, act, n)
	if done != nil {
		return done
	}
	l.failedTree, l.failedGates = tree, feedback
	l.note(args, "RESULT of finish: not finished yet: "+feedback+"\nChange the code to fix the cause, then finish again: finishing again without a change ends the attempt.\n"+l.reminder())
	return nil
}

// treeHash identifies the attempt's work as it stands ("" when git cannot
// say).
func (l *implLoop) treeHash(ctx context.Context) string {
	diff, _, err := l.d.Work.Changes(ctx, l.t.StartCommit)
	if err != nil {
		return ""
	}
	return workspace.DiffHash(diff) + "/" + strconv.Itoa(len(diff))
}

// finishGates runs the gates on the work as it stands: the attempt's result
// when they pass or no fix round is left, else (nil and) what failed, for the
// fix round it starts.
func (l *implLoop) finishGates(ctx context.Context, act implAction, n int) (*ImplResult, string) {
	done := &ImplResult{Status: ImplFinished, Actions: n, Summary: firstNonEmpty(act.Summary, act.Thought)}
	gates := l.d.Gates
	if l.fixLimit() <= 0 || len(gates) == 0 {
		return done, ""
	}
	dir := l.d.Work.Dir()
	results := workspace.RunGates(ctx, l.d.Sandbox, dir, gates, l.d.Settings.GateOutputBytes)
	var passed []string
	for _, r := range results {
		emitGate(ctx, l.t, "finish", r)
		if r.Passed {
			passed = append(passed, r.Name)
		}
	}
	if workspace.AllPassed(results) && ctx.Err() == nil {
		// QA reuses these results if nothing changes before it looks.
		if diff, _, err := l.d.Work.Changes(ctx, l.t.StartCommit); err == nil {
			done.GatesDiffHash = workspace.DiffHash(diff)
			for _, r := range results {
				done.Gates = append(done.Gates, GateOutcome{Name: r.Name, Command: r.Command, Passed: r.Passed, ExitCode: r.ExitCode, Duration: r.Duration, Output: r.Output})
			}
		}
		return done, ""
	}
	if ctx.Err() != nil {
		return done, ""
	}
	failed := results[len(results)-1]
	if failed.Canceled || l.fixRounds >= l.fixLimit() {
		return done, ""
	}
	l.fixRounds++
	var b strings.Builder
	fmt.Fprintf(&b, "a gate fails (fix round %d of %d).\n", l.fixRounds, l.fixLimit())
	if len(passed) > 0 {
		fmt.Fprintf(&b, "Passed: %s.\n", strings.Join(passed, ", "))
	}
	b.WriteString(failed.ModelFeedback(dir, workspace.DefaultSummaryBytes))
	return nil, b.String()
}

// fixLimit is how many fix rounds the attempt's gates may start: the
// configured ones in the tool loop, at most directFixRounds in a direct
// attempt, whose next attempt looks around instead of rewriting the same
// file again.
func (l *implLoop) fixLimit() int {
	if l.direct {
		return min(l.d.Settings.FixRounds, directFixRounds)
	}
	return l.d.Settings.FixRounds
}
