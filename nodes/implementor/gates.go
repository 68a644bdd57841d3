package implementor

import (
	"context"
	"fmt"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// gateRunner runs the gates on the work as it stands: on a drawn candidate,
// at a finish (starting fix rounds) and on a tree left as it was.
type gateRunner struct {
	*scope
	// gated is the last gate run on a drawn candidate, so the finish does
	// not run the same gates on the same tree again.
	gated     gatedTree
	fixRounds int
	// gatesFailed: the finish's gates failed and the attempt ended on them
	// (its fix rounds spent).
	gatesFailed bool
}

// treeHash identifies the attempt's work as it stands ("" when git cannot
// say).
func (gr *gateRunner) treeHash(ctx context.Context) string {
	diff, _, err := gr.d.Work.Changes(ctx, gr.t.StartCommit)
	if err != nil {
		return ""
	}
	return workspace.DiffHash(diff) + "/" + strconv.Itoa(len(diff))
}

// finishGates runs the gates on the work as it stands: the attempt's result
// when they pass or no fix round is left, else (nil and) what failed, for the
// fix round it starts.
func (gr *gateRunner) finishGates(ctx context.Context, act Action, n int) (*runstate.ImplResult, string) {
	done := &runstate.ImplResult{Status: runstate.ImplFinished, Actions: n, Summary: textutil.FirstNonEmpty(act.Summary, act.Thought)}
	gates := gr.d.Gates
	results, gated := gr.gatedNow(ctx)
	if !gated && (gr.fixLimit() <= 0 || len(gates) == 0) {
		return done, ""
	}
	dir := gr.d.Work.Dir()
	if !gated {
		results = workspace.RunGates(ctx, gr.d.Sandbox, dir, gates, gr.d.Settings.GateOutputBytes)
		for _, r := range results {
			gr.d.emitGate(ctx, gr.t, "finish", r)
		}
	}
	var passed []string
	for _, r := range results {
		if r.Passed {
			passed = append(passed, r.Name)
		}
	}
	if workspace.AllPassed(results) && ctx.Err() == nil {
		// QA reuses these results if nothing changes before it looks.
		if diff, _, err := gr.d.Work.Changes(ctx, gr.t.StartCommit); err == nil {
			done.GatesDiffHash = workspace.DiffHash(diff)
			for _, r := range results {
				done.Gates = append(done.Gates, runstate.GateOutcome{Name: r.Name, Command: r.Command, Passed: r.Passed, ExitCode: r.ExitCode, Duration: r.Duration, Output: r.Output})
			}
		}
		return done, ""
	}
	if ctx.Err() != nil {
		return done, ""
	}
	failed := results[len(results)-1]
	if failed.Canceled || gr.fixRounds >= gr.fixLimit() {
		gr.gatesFailed = true
		return done, ""
	}
	gr.fixRounds++
	var b strings.Builder
	fmt.Fprintf(&b, "a gate fails (fix round %d of %d).\n", gr.fixRounds, gr.fixLimit())
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
func (gr *gateRunner) fixLimit() int {
	if gr.direct {
		return min(gr.d.Settings.FixRounds, directFixRounds)
	}
	return gr.d.Settings.FixRounds
}

// gatedTree is a gate run and the change (workspace.DiffHash) it ran on.
type gatedTree struct {
	diffHash string
	results  []workspace.GateResult
}

// sampleGatesPass: with more than one candidate to draw, in a direct
// attempt or a fix round (the gates failed on finish), a candidate is kept
// at once only when the gates pass on it.
func (gr *gateRunner) sampleGatesPass(ctx context.Context, samples int) bool {
	if samples <= 1 || !(gr.direct || gr.fixRounds > 0) || len(gr.d.Gates) == 0 {
		return true
	}
	results := workspace.RunGates(ctx, gr.d.Sandbox, gr.d.Work.Dir(), gr.d.Gates, gr.d.Settings.GateOutputBytes)
	for _, r := range results {
		gr.d.emitGate(ctx, gr.t, "sample", r)
	}
	gr.gated = gatedTree{}
	if diff, _, err := gr.d.Work.Changes(ctx, gr.t.StartCommit); err == nil && ctx.Err() == nil {
		gr.gated = gatedTree{diffHash: workspace.DiffHash(diff), results: results}
	}
	return workspace.AllPassed(results)
}

// gatedFailure is what the last candidate's gate run found, as the model
// reads a failure.
func (gr *gateRunner) gatedFailure() string {
	for _, r := range gr.gated.results {
		if !r.Passed {
			return r.ModelFeedback(gr.d.Work.Dir(), workspace.DefaultSummaryBytes)
		}
	}
	return "the gates fail with it."
}

// gatedNow is the last candidate's gate run when the tree is still the one
// it ran on.
func (gr *gateRunner) gatedNow(ctx context.Context) ([]workspace.GateResult, bool) {
	if gr.gated.diffHash == "" {
		return nil, false
	}
	diff, _, err := gr.d.Work.Changes(ctx, gr.t.StartCommit)
	if err != nil || workspace.DiffHash(diff) != gr.gated.diffHash {
		return nil, false
	}
	return gr.gated.results, true
}

// gateFailure says in a line which gate failed and its first words, for
// the event and the summary.
func (gr *gateRunner) gateFailure(results []workspace.GateResult) string {
	for _, r := range results {
		if r.Passed {
			continue
		}
		var said []string
		for _, line := range strings.Split(workspace.SummarizeGateOutput(r.Output, gr.d.Work.Dir(), workspace.DefaultSummaryBytes), "\n") {
			// The source lines the summary quotes are not the failure.
			if t := strings.TrimSpace(line); t != "" && !numberedLine.MatchString(line) && len(said) < 2 {
				said = append(said, t)
			}
		}
		if len(said) == 0 {
			return r.Name + " (no output)"
		}
		return r.Name + ": " + strings.Join(said, " / ")
	}
	return "a gate was stopped"
}

// unchangedFails runs the gates on a tree the model's code left as it was
// (diff, against the task's start, empty), once an attempt: what fails, for
// the model ("" when the tree passes as it is and needs no change, when the
// code changed something, or when it was asked already).
func (gr *gateRunner) unchangedFails(ctx context.Context, diff string, asked bool) string {
	if asked || strings.TrimSpace(diff) != "" || len(gr.d.Gates) == 0 {
		return ""
	}
	results, gated := gr.gatedNow(ctx)
	if !gated {
		results = workspace.RunGates(ctx, gr.d.Sandbox, gr.d.Work.Dir(), gr.d.Gates, gr.d.Settings.GateOutputBytes)
		for _, r := range results {
			gr.d.emitGate(ctx, gr.t, "unchanged", r)
		}
	}
	if ctx.Err() != nil || workspace.AllPassed(results) {
		return ""
	}
	return results[len(results)-1].ModelFeedback(gr.d.Work.Dir(), workspace.DefaultSummaryBytes)
}
