package implementor

import (
	"context"
	"path"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
)

// requestBuilder composes a code request: the grain it asks at, the view
// of the file it shows, the words it asks with and the reply's budget.
type requestBuilder struct {
	*scope
	conv  *conversation
	views *views
	tree  *treeWriter
	gates *gateRunner
	// diagnose: the next direct code call asks for the failure's cause in a
	// sentence before the code (after code that changed nothing).
	diagnose bool
	// writingTest: the code call is the one for a test (asked.go).
	writingTest bool
}

// drawCount is how many candidates a code request may draw: the verified
// draws of a direct attempt (implementor.draws), else samples; one for a
// fix round, a reason-first re-ask or the asked-for test, which are tries
// of their own.
func (rb *requestBuilder) drawCount() int {
	if !rb.direct {
		return max(1, rb.d.Settings.Samples)
	}
	if rb.gates.fixRounds > 0 || rb.diagnose || rb.writingTest {
		return 1
	}
	return max(1, rb.d.Settings.Draws)
}

// codeAsk is a code request's parts: what the plain draw sends, how its
// reply opens and ends, and how a lesson or a plan changes it.
type codeAsk struct {
	p      string
	g      grain
	old    string
	exists bool
	// instr is the request as kept in the history; msgs the plain draw's
	// messages; request the direct request's words (a repair ends with them).
	instr   string
	msgs    []llm.Message
	request string
	// lessons builds a direct request with what a failure taught before its
	// last words (nil: no lesson or planned draws).
	lessons func(lesson, request string) []llm.Message
	prefill string
	stops   []string
	budget  int
}

// askFor composes a code request at its grain.
func (rb *requestBuilder) askFor(p string, g grain, old string, exists bool, args, lead string) codeAsk {
	a := codeAsk{p: p, g: g, old: old, exists: exists, budget: rb.grainReply(old, exists, g)}
	a.instr = rb.grainInstruction(p, g, exists, old)
	view := rb.grainView(p, old, exists, g)
	a.msgs = append(rb.conv.messages(""), llm.Message{Role: "assistant", Content: args}, llm.Message{Role: "user", Content: a.instr + view})
	if !rb.direct {
		return a
	}
	// No action was asked for: the request follows the prefix (or the last
	// code reply) as the user's turn — the file first, what the last round
	// found after it, and the request last, right where the reply starts,
	// with nothing in a fence but the file (a small coder copies a
	// placeholder there as its answer).
	if g.kind != grainBlocks {
		a.instr = directRequest(p, g, exists, lead != "")
		switch {
		case rb.writingTest:
			a.instr = testRequest(p, g, exists)
		case rb.diagnose:
			a.instr = diagnoseRequest(p, g, exists)
		}
	}
	a.request = a.instr
	a.instr = textutil.JoinParagraphs(strings.TrimSpace(view), lead, a.request)
	if rb.writingTest {
		// The test's one call shows the code it tests before the test file.
		a.instr = textutil.JoinParagraphs(lead, strings.TrimSpace(view), a.request)
	}
	a.msgs = append(rb.conv.messages(""), llm.Message{Role: "user", Content: a.instr})
	if g.kind != grainBlocks && !rb.diagnose {
		a.lessons = func(lesson, asked string) []llm.Message {
			return append(rb.conv.messages(""), llm.Message{Role: "user", Content: textutil.JoinParagraphs(strings.TrimSpace(view), lead, lesson, asked)})
		}
	}
	switch {
	case g.kind == grainBlocks:
	case rb.diagnose:
		// A sentence, then the block: no prefill, and no stop at a fence
		// (the block's opening one would end the reply).
		a.stops = appendedTests(p, old)
		a.budget += diagnoseTokens
	default:
		// The reply starts inside the one fenced block asked for and ends
		// at its close: no prose before or after it to pay for.
		a.prefill, a.stops = fenceFor(p)+langOf(p)+"\n", append([]string{"\n" + fenceFor(p)}, appendedTests(p, old)...)
		if rb.writingTest && g.kind == grainWhole && strings.TrimSpace(old) != "" {
			// The test file as it is starts the reply, so the model writes
			// only its new test after it and cannot break the tests there.
			a.prefill += strings.TrimRight(old, "\n") + "\n\n"
			a.stops = append(a.stops, nextTest(p)...)
		}
	}
	return a
}

// call is the code call of one draw.
func (a codeAsk) call(d draw, t drawTally) codeRequest {
	r := codeRequest{messages: a.msgs, prefill: a.prefill, stops: a.stops, budget: a.budget, sample: d.sample}
	switch d.kind {
	case drawRepair:
		r.messages = t.repair
	case drawLesson:
		r.messages = a.lessons(t.lesson, a.request)
	case drawPlanned:
		// The reply opens with the plan, not the fence, and ends at the
		// block's close (after it, Qwen-1.5B went on with tests).
		r.messages = a.lessons(t.lesson, planRequest(a.p, a.g, a.exists))
		r.prefill, r.stops, r.budget = planOpening, append(closingFence(a.p), appendedTests(a.p, a.old)...), a.budget+planTokens
	}
	return r
}

// closingFence ends a planned draw at its code block's close: after it,
// Qwen-1.5B went on with "Now, let's verify…" and a block of tests, which
// cost tokens and, were it the longest block, would be read as the file.
// The opening fence names the language, so this does not match it.
func closingFence(p string) []string {
	return []string{"\n" + fenceFor(p) + "\n"}
}

// appendedTests are where a small coder starts the tests it appends to the
// file it was asked to write (Qwen2.5-Coder-0.5B did on most exercises):
// stopping there saves the tokens, and tidy drops what was copied anyway.
func appendedTests(p, old string) []string {
	if IsTestFile(p) {
		return nil
	}
	var stops []string
	switch path.Ext(p) {
	case ".go":
		stops = []string{"\nfunc Test", "\nfunc Benchmark"}
		if !goPackageMain.MatchString(old) {
			stops = append(stops, "\nfunc main()")
		}
	case ".py":
		stops = []string{"\nclass Test", "\ndef test_"}
		if !strings.Contains(old, "__name__") {
			stops = append(stops, "\nif __name__")
		}
	}
	return stops
}

// nextTest are where a second new test starts after the first, in a reply
// that goes on from the test file: one test is asked for, and Qwen-1.5B
// wrote on until the reply limit cut it (the prefilled file ends in a blank
// line, so the first test's own start does not match).
func nextTest(p string) []string {
	switch path.Ext(p) {
	case ".go":
		return []string{"\nfunc "}
	case ".py":
		return []string{"\ndef test", "\n    def test", "\nclass "}
	}
	return nil
}

var goPackageMain = regexp.MustCompile(`(?m)^package\s+main\b`)

// smallerGrain is the grain of a re-ask after a whole file was cut at the
// reply limit: the unit in view, else blocks.
func (rb *requestBuilder) smallerGrain(ctx context.Context, act Action, p, old string) grain {
	if units, err := rb.d.Parser.Units(ctx, p, []byte(old)); err == nil {
		if u, ok := rb.pickUnit(units, act.Symbol, p); ok {
			return grain{kind: grainUnit, unit: u, units: units, why: "whole file cut at the limit"}
		}
	}
	return grain{kind: grainBlocks, why: "whole file cut at the limit"}
}

// grainReply is the reply budget of a code call at its grain (codeReply):
// for a unit, what the unit whole would take.
func (rb *requestBuilder) grainReply(old string, exists bool, g grain) int {
	if g.kind == grainAdd {
		lines := strings.Split(old, "\n")
		sibling := strings.Join(lines[g.unit.Start-1:min(g.unit.End, len(lines))], "\n")
		return min(max(llm.CountTokens(sibling)*2+256, 512), 2048)
	}
	if g.kind == grainUnit {
		lines := strings.Split(old, "\n")
		unit := strings.Join(lines[g.unit.Start-1:min(g.unit.End, len(lines))], "\n")
		return codeReply(unit, true, true)
	}
	return codeReply(old, g.kind == grainWhole, exists)
}

// grainInstruction asks for the code at its grain; it is kept in the history.
func (rb *requestBuilder) grainInstruction(p string, g grain, exists bool, old string) string {
	if g.kind == grainAdd {
		return addRequest(p, g, false)
	}
	if g.kind == grainUnit {
		return unitInstruction(p, g)
	}
	return codeInstruction(p, g.kind == grainWhole, exists, strings.Count(old, "\n"))
}

// grainView is the file as the code call shows it (not kept in the history).
func (rb *requestBuilder) grainView(p, old string, exists bool, g grain) string {
	if g.kind == grainAdd {
		return addView(p, old, g)
	}
	if g.kind == grainUnit {
		return unitView(p, old, g)
	}
	return rb.views.codeView(p, old, exists, g.kind == grainWhole)
}
