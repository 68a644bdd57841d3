package nodes

// A task's tests at its start. A weak local reviewer (Qwen2.5-Coder-1.5B in
// the three-task remit of docs/testing-real-models.md) rejected a correct
// fix on a claim the diff did not bear out, and the task was re-planned and
// lost. Tests that failed when the task started, that name what the task
// names, and that pass on the change are evidence no reviewer's "no"
// overrules: the gates decide what the user's words asked, as they do when
// the remit says "make the tests pass".

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// failingTestName finds a failing test's name in test output: Go's
// `--- FAIL: TestX`, pytest's `FAILED path::test_x`, cargo's
// `test m::x ... FAILED`.
var failingTestName = regexp.MustCompile(`(?m)^\s*--- FAIL: (\w+)|^FAILED [^\s:]+::(?:\w+::)*(\w+)|^test (?:\w+::)*(\w+) \.\.\. FAILED`)

// failingTests are the names of the tests a gate run reports failing.
func failingTests(results []workspace.GateResult) []string {
	var out []string
	for _, r := range results {
		if r.Passed || r.Canceled {
			continue
		}
		for _, m := range failingTestName.FindAllStringSubmatch(r.Output, -1) {
			name := textutil.FirstNonEmpty(m[1], m[2], m[3])
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// modelReviewed says whether QA would ask a model about some criterion of
// t: one the gates or an added literal do not decide.
func modelReviewed(t *runstate.Task, gates []workspace.Gate) bool {
	passing := make([]runstate.GateOutcome, len(gates))
	for i, g := range gates {
		passing[i] = runstate.GateOutcome{Name: g.Name, Command: g.Command, Passed: true}
	}
	return !checkedWithoutModel(t.AcceptanceCriteria, reviewEvidence{gates: passing})
}

// recordStartTests runs the test gates on the task's start tree, once a
// task, when a model will review it: which tests fail before the change.
// One gate run in the sandbox, no model call.
func (d *Deps) recordStartTests(ctx context.Context, t *runstate.Task) {
	if t.StartTested || t.Attempt > 1 || t.AttemptBase != t.StartCommit || !modelReviewed(t, d.Gates) {
		return
	}
	tests := placerOf(d).testGates()
	if len(tests) == 0 {
		return
	}
	results := workspace.RunGates(ctx, d.Sandbox, d.Work.Dir(), tests, d.Settings.GateOutputBytes)
	if ctx.Err() != nil {
		return
	}
	t.StartTested, t.StartFailing, t.StartPassed = true, failingTests(results), workspace.AllPassed(results)
	events.Emit(ctx, events.StartTests{Task: t.ID, Failing: t.StartFailing})
}

// fixedTest is a test that failed at the task's start, passes now (every
// gate passed) and names a symbol the task names; "" when there is none, or
// when the change removes a line of a test file (a test edited to pass is
// no evidence).
func fixedTest(t *runstate.Task, diff string) string {
	if len(t.StartFailing) == 0 || removesTestLines(diff) {
		return ""
	}
	var names []string
	for _, id := range remitIdentifiers(t.Title + "\n" + t.Instructions) {
		if n := squash(id); len(n) >= 4 {
			names = append(names, n)
		}
	}
	for _, test := range t.StartFailing {
		st := squash(test)
		for _, n := range names {
			if strings.Contains(st, n) {
				return test
			}
		}
	}
	return ""
}

// squash lowers a name and drops its underscores: TestMeanWordLength and
// test_mean_word_length both hold meanwordlength.
func squash(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "") }

// removesTestLines says whether a diff removes or changes a line of a test
// file.
func removesTestLines(diff string) bool {
	test := false
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			f := strings.Fields(l)
			test = isTestFile(strings.TrimPrefix(f[len(f)-1], "b/"))
		case test && strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
			return true
		}
	}
	return false
}

// startTestsDecide meets the criteria QA holds for the user's words
// (critRemit) with a test that failed at the task's start and passes now,
// when the reviewer said no.
func startTestsDecide(t *runstate.Task, criteria []runstate.CriterionResult, diff string) bool {
	test := fixedTest(t, diff)
	if test == "" {
		return false
	}
	changed := false
	for i, c := range criteria {
		if !c.Met && strings.HasPrefix(c.Criterion, critRemit) {
			criteria[i].Met, criteria[i].By = true, "gates"
			criteria[i].Evidence = fmt.Sprintf("%s failed when the task started and passes with the change (the reviewer said: %s)", test, textutil.ClipTrimmed(c.Evidence, 200))
			changed = true
		}
	}
	return changed
}

// evidenceDecides judges the criteria with a test the attempt added that
// fails without the change and passes with it: it meets the criterion of the
// user's words (critRemit); the gates and lemmings' checks decide the rest.
// False when some other criterion needs a reviewer, or the change removes a
// line of a test (a test edited to pass is no evidence).
func evidenceDecides(criteria []string, ev reviewEvidence, evidence, diff string) ([]runstate.CriterionResult, bool) {
	if removesTestLines(diff) {
		return nil, false
	}
	var others []string
	remit := false
	for _, c := range criteria {
		if strings.HasPrefix(c, critRemit) {
			remit = true
		} else {
			others = append(others, c)
		}
	}
	if !remit || (len(others) > 0 && !checkedWithoutModel(others, ev)) {
		return nil, false
	}
	out, _ := judgeReview(criteria, nil, ev)
	for i, c := range out {
		if strings.HasPrefix(c.Criterion, critRemit) {
			out[i].Met, out[i].By, out[i].Evidence = true, "evidence", evidence
		}
	}
	return out, true
}

// allMet says whether every criterion is met.
func allMet(criteria []runstate.CriterionResult) bool {
	for _, c := range criteria {
		if !c.Met {
			return false
		}
	}
	return len(criteria) > 0
}
