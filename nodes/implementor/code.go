package implementor

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// coder makes the code calls of an edit: it draws candidates by the draw
// policy, reads each reply into a change, lands it and keeps the first
// that passes.
type coder struct {
	*scope
	conv     *conversation
	tree     *treeWriter
	gates    *gateRunner
	requests *requestBuilder
	// expect is the direct attempt's expected size (llm.Request.Expect).
	expect int
	// codeCalls counts the code calls made (each candidate drawn).
	codeCalls int
	malformed int
}

// codeEdit asks for the code of an edit or write_file action as plain text,
// at the grain chooseGrain picks: the whole file, one function, method or
// type (spliced by the syntax tree), a new declaration, or SEARCH/REPLACE
// blocks. The draws (draws.go) come one after another until a candidate
// lands cleanly (parses, adds no check problem and, where candidates are
// verified, passes the gates); a failed candidate is undone, and when none
// passes the first that landed is put back for the next try. Nothing
// half-made is written.
//
// lead, in a direct attempt, says what the last round found.
func (cd *coder) codeEdit(ctx context.Context, act implAction, args, lead string) (codeExchange, error) {
	p := strings.TrimSpace(act.Path)
	if p == "" {
		return codeExchange{instruction: "error: " + act.Action + " needs a path.", reply: "(no code asked for)",
			result: "error: give the path of the file to " + act.Action}, nil
	}
	oldBytes, readErr := cd.d.Work.FS().ReadFile(p)
	old, exists := string(oldBytes), readErr == nil
	g := cd.requests.chooseGrain(ctx, act, p, old, exists)
	ask := cd.requests.askFor(p, g, old, exists, args, lead)
	pol := newDrawPolicy(cd.requests.drawCount(), ask.lessons != nil, cd.direct && g.kind != grainBlocks)
	tally := drawTally{tried: map[string]int{}}
	for d, ok := pol.first(), true; ok; {
		if left, limited := cd.d.Clock.WallTimeLeft(cd.s, cd.d.Clock.Now()); pol.drawn > 1 && limited && left <= 0 {
			break // the run's wall is spent: what was drawn is all there is
		}
		req := ask.call(d, tally)
		resp, err := cd.chatText(ctx, req)
		if err != nil {
			return codeExchange{}, err
		}
		v, passed := cd.tryCandidate(ctx, ask, d, req, resp, pol.drawn-1, pol.left+pol.drawn, &tally)
		if passed != nil {
			return *passed, nil
		}
		d, ok = pol.next(v)
	}
	return cd.afterDraws(ctx, act, ask, tally)
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

// drawTally is what the draws of one request have left behind.
type drawTally struct {
	firstProblem string
	firstResp    llm.Response
	// fallback is the first candidate that landed and failed: put back
	// when none passes (the next try starts from it, not from the last
	// and wildest draw).
	fallback *codeCandidate
	// failed is the first candidate that did not land.
	failed *codeExchange
	// tried holds the code of every candidate that failed.
	tried map[string]int
	// lesson is what the first failing candidate's build or gates said;
	// repair the conversation a repair draw sends, and base the candidate
	// it repairs (a repair written as SEARCH/REPLACE blocks edits it).
	lesson string
	repair []llm.Message
	base   string
}

// tryCandidate reads, lands and checks one draw's reply. It returns the
// exchange when the candidate is kept, else what became of it.
func (cd *coder) tryCandidate(ctx context.Context, a codeAsk, d draw, req codeRequest, resp llm.Response, i, n int, t *drawTally) (verdict, *codeExchange) {
	p, g := a.p, a.g
	code := candidateKey(resp.Content, p)
	if k, seen := t.tried[code]; seen {
		cd.recordSample(ctx, p, g, i, n, false, fmt.Sprintf("the same code as candidate %d", k+1), resp)
		return verdict{repeated: true}, nil
	}
	c := cd.readCode(ctx, resp, p, g, a.old)
	if d.kind == drawRepair && c.problem == "" {
		c.change = onto(c.change, p, t.base)
	}
	if c.problem != "" {
		cd.malformed++
		cd.recordSample(ctx, p, g, i, n, false, c.problem, resp)
		if t.firstProblem == "" {
			t.firstProblem, t.firstResp = c.problem, resp
		}
		return verdict{unusable: true, cut: resp.DoneReason == "length"}, nil
	}
	land := cd.tree.land(ctx, c.change)
	text := c.note + land.text
	copied := land.landed && a.exists && sameCode(c.change.files[p], a.old)
	if land.landed && land.introduced == "" && !copied && cd.gates.sampleGatesPass(ctx, n) {
		cd.recordSample(ctx, p, g, i, n, true, "", resp)
		return verdict{passed: true}, &codeExchange{instruction: a.instr, reply: resp.Content, result: text, land: land}
	}
	if n <= 1 && land.landed {
		// One draw: its code stays, and the gates judge it at the finish.
		return verdict{landed: true}, &codeExchange{instruction: a.instr, reply: resp.Content, result: text, land: land}
	}
	problem := land.introduced
	switch {
	case !land.landed:
		problem = land.text
	case copied:
		problem = "it leaves " + p + " as it was"
	case problem == "":
		problem = "the gates fail with it"
	}
	cd.recordSample(ctx, p, g, i, n, false, problem, resp)
	t.tried[code] = i
	v := verdict{landed: land.landed, build: land.introduced}
	if land.landed {
		why := "The checks ran on your code: " + cd.gates.gatedFailure()
		v.failure = failureSignature(cd.gates.gatedFailure())
		if copied {
			why, v.failure = "Your code is "+p+" exactly as it was: it changes nothing.", "unchanged"
		}
		if land.introduced != "" {
			why = "Your code does not build:\n" + directNote(land.introduced)
			v.failure = "build: " + failureSignature(land.introduced)
		}
		if t.lesson == "" {
			t.lesson = "An earlier try at this failed the checks: " + directNote(cd.gates.gatedFailure())
			if land.introduced != "" {
				t.lesson = "An earlier try at this did not build:\n" + directNote(land.introduced)
			}
		}
		v.copied = copied
		if b, err := cd.d.Work.FS().ReadFile(p); err == nil {
			t.base = string(b)
		}
		t.repair = append(slices.Clone(req.messages), llm.Message{Role: "assistant", Content: resp.Content},
			llm.Message{Role: "user", Content: textutil.JoinParagraphs(why, "Fix the cause.", directRequest(p, g, a.exists, true))})
		if err := cd.tree.undo(land); err != nil {
			cd.d.emit(ctx, events.Warning{Message: "implementor: put back a rejected candidate: " + err.Error()})
		}
		if t.fallback == nil {
			c.resp = resp
			t.fallback = &c
		}
	} else if t.failed == nil {
		t.failed = &codeExchange{instruction: a.instr, reply: resp.Content, result: text}
	}
	return v, nil
}

// afterDraws ends a request whose draws did not pass: the first candidate
// that landed is put back, else the first that did not land is reported;
// with no readable candidate, a direct attempt reports the problem for its
// next round and the tool loop asks once more, saying why.
func (cd *coder) afterDraws(ctx context.Context, act implAction, a codeAsk, t drawTally) (codeExchange, error) {
	p, g, old, exists := a.p, a.g, a.old, a.exists
	if t.fallback != nil {
		land := cd.tree.land(ctx, t.fallback.change)
		return codeExchange{instruction: a.instr, reply: t.fallback.resp.Content, result: t.fallback.note + land.text, land: land}, nil
	}
	if t.failed != nil {
		return *t.failed, nil
	}
	if cd.direct {
		cd.tree.failStreak++
		return codeExchange{instruction: a.instr, reply: t.firstResp.Content, result: "error: " + t.firstProblem + "\nNo file was changed."}, nil
	}
	retry := t.firstProblem
	if t.firstResp.DoneReason == "length" {
		retry = fmt.Sprintf("Your reply was cut off at %d tokens (the reply limit), so nothing was written. Make a smaller change.", t.firstResp.Usage.CompletionTokens)
		if g.kind == grainWhole && exists && strings.Count(old, "\n") > 40 {
			g = cd.requests.smallerGrain(ctx, act, p, old) // a smaller change: a unit or blocks, not the whole file
		}
	}
	retry += "\n" + cd.requests.grainInstruction(p, g, exists, old)
	cd.d.emit(ctx, events.ImplementorBadCode{Task: cd.t.ID, Path: p, Problem: t.firstProblem, DoneReason: t.firstResp.DoneReason, Grain: g.kind})
	msgs := append(slices.Clone(a.msgs), llm.Message{Role: "assistant", Content: t.firstResp.Content}, llm.Message{Role: "user", Content: retry})
	resp, err := cd.chatText(ctx, codeRequest{messages: msgs, budget: cd.requests.grainReply(old, exists, g)})
	if err != nil {
		return codeExchange{}, err
	}
	c := cd.readCode(ctx, resp, p, g, old)
	if c.problem != "" {
		cd.malformed++
		cd.tree.failStreak++
		return codeExchange{instruction: a.instr, reply: resp.Content, result: "error: " + c.problem + "\nNo file was changed."}, nil
	}
	land := cd.tree.land(ctx, c.change)
	return codeExchange{instruction: a.instr, reply: resp.Content, result: c.note + land.text, land: land}, nil
}

// candidateKey is a reply's code with its white space made one: what tells
// a candidate written before (a planned draw's plan may differ, its code
// not).
func candidateKey(reply, p string) string {
	if code, ok := fencedBlock(reply, fenceFor(p)); ok && !hasBlockMarkers(reply) {
		reply = code
	}
	return compact(reply)
}

// closingFence ends a planned draw at its code block's close: after it,
// Qwen-1.5B went on with "Now, let's verify…" and a block of tests, which
// cost tokens and, were it the longest block, would be read as the file.
// The opening fence names the language, so this does not match it.
func closingFence(p string) []string {
	return []string{"\n" + fenceFor(p) + "\n"}
}

// sameCode reports whether two texts are the same code but for white space.
func sameCode(a, b string) bool { return compact(a) == compact(b) }

// compact makes every run of white space one space.
func compact(s string) string { return strings.Join(strings.Fields(s), " ") }

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

// codeCandidate is one code reply read into a change.
type codeCandidate struct {
	change  change
	note    string // what the model should know about how it was read
	problem string // why it cannot be used ("" when it can)
	resp    llm.Response
}

// readCode reads a code reply at its grain. SEARCH/REPLACE blocks are taken
// at any grain; a whole-file reply that holds only some units of a file a
// parser serves is spliced by unit rather than cutting the file.
func (cd *coder) readCode(ctx context.Context, resp llm.Response, p string, g grain, old string) codeCandidate {
	switch resp.Stop() {
	case llm.StopLength:
		return codeCandidate{problem: fmt.Sprintf("the reply was cut off at %d tokens (the reply limit)", resp.Usage.CompletionTokens)}
	case llm.StopLooping:
		return codeCandidate{problem: "the reply kept repeating the same lines and was stopped; write only the code asked for, once"}
	}
	if (g.kind == grainUnit || g.kind == grainAdd) && !hasBlockMarkers(resp.Content) {
		return cd.readUnit(ctx, resp.Content, p, g, old)
	}
	edits, content, problem := parseCode(resp, p, g.kind == grainWhole, old)
	if problem != "" {
		return codeCandidate{problem: problem}
	}
	if edits != nil {
		return codeCandidate{change: change{edits: edits}}
	}
	if old != "" && content != old && splice.Language(p) != "" && (partOfFile(p, content, old) || cd.dropsUsed(ctx, p, content, old)) {
		r, err := cd.d.Parser.Rewrite(ctx, splice.Request{Path: p, Src: old, Code: content, Rename: cd.requests.renameAllowed})
		if err == nil {
			return codeCandidate{change: change{files: map[string]string{p: r.Content}, lines: map[string]int{p: r.Line}},
				note: fmt.Sprintf("(your block held only part of %s: %s put in place, the rest of the file kept)\n", p, strings.Join(append(r.Replaced, r.Added...), ", "))}
		}
	}
	note := ""
	if trimmed, n := cd.dropLeadingProse(ctx, p, content); n > 0 {
		content, note = trimmed, fmt.Sprintf("(lemmings dropped the %d lines of prose before your code)\n", n)
	}
	return codeCandidate{change: change{files: map[string]string{p: content}, lines: map[string]int{p: firstDifferentLine(old, content)}}, note: note}
}

// codeStart is a line that can only open code: a declaration, an import, a
// package clause, a decorator.
var codeStart = regexp.MustCompile(`^(?:package |import |from \S+ import |def |async def |class |func |type |const |var |@\w|#!|"""|//|/\*|use |fn |pub |struct |enum |#include|public |private )`)

// dropLeadingProse takes off the lines of prose a small coder writes before
// the code in its block (Qwen2.5-Coder-0.5B copied the exercise's markdown
// instructions there): when the block does not parse and does from its first
// line of code on, that is the code. It gives the code and how many lines it
// dropped (0: the block stays as it was).
func (cd *coder) dropLeadingProse(ctx context.Context, p, content string) (string, int) {
	if splice.Language(p) == "" || cd.tree.parses(ctx, p, []byte(content)) == nil {
		return content, 0
	}
	lines := strings.Split(content, "\n")
	for i, line := range lines {
		if i == 0 || !codeStart.MatchString(line) {
			continue
		}
		rest := strings.Join(lines[i:], "\n")
		if cd.tree.parses(ctx, p, []byte(rest)) == nil {
			return rest, i
		}
		break
	}
	return content, 0
}

// partOfFile says whether a whole-file reply is only a piece of the file: Go
// code without a package clause, or under half the file's lines (a weak
// model's "whole file" of ten lines for a file of a hundred).
func partOfFile(p, content, old string) bool {
	if splice.Language(p) == "go" {
		for _, line := range strings.Split(content, "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "//") {
				if !strings.HasPrefix(t, "package ") {
					return true
				}
				break
			}
		}
	}
	return strings.Count(content, "\n")*2 < strings.Count(old, "\n")
}

// dropsUsed says whether a whole-file reply leaves out a top-level
// declaration of the file that it still uses: Qwen2.5-Coder-1.5B, asked to
// add UniqueWords, wrote the file with UniqueWords and the functions calling
// Words, but not Words, in every draw. A reply that means to delete a
// declaration does not call it, so splicing such a reply by unit keeps what
// it forgot and changes nothing it meant.
func (cd *coder) dropsUsed(ctx context.Context, p, content, old string) bool {
	was, err := cd.d.Parser.Units(ctx, p, []byte(old))
	if err != nil {
		return false
	}
	now, err := cd.d.Parser.Units(ctx, p, []byte(content))
	if err != nil {
		return false
	}
	declared := map[string]bool{}
	for _, u := range now {
		for _, n := range append([]string{u.Name}, u.Names...) {
			declared[n] = true
		}
	}
	for _, u := range was {
		if u.Kind == "method" || strings.Contains(u.Name, ".") || declared[u.Name] {
			continue
		}
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(u.Name) + `\b`).MatchString(content) {
			return true
		}
	}
	return false
}

// readUnit reads a unit reply: the fenced block (or the whole reply when a
// weak model left the fence out), spliced into the file by name.
func (cd *coder) readUnit(ctx context.Context, reply, p string, g grain, old string) codeCandidate {
	code, ok := fencedBlock(reply, fenceFor(p))
	if !ok {
		code = reply
	}
	if strings.TrimSpace(code) == "" {
		return codeCandidate{problem: "the code block is empty"}
	}
	lines := strings.Split(old, "\n")
	oldUnit := strings.Join(lines[g.unit.Start-1:min(g.unit.End, len(lines))], "\n")
	if m := lazyElision.FindString(code); m != "" && !lazyElision.MatchString(oldUnit) {
		return codeCandidate{problem: fmt.Sprintf("the %s has a part left out (%q): write every line of it", kindWord(g.unit), strings.TrimSpace(m))}
	}
	req := splice.Request{Path: p, Src: old, Target: g.unit.Name, Code: code, Rename: cd.requests.renameAllowed, Others: cd.requests.renameAllowed}
	if g.kind == grainAdd {
		req.Add, req.Owner, req.Others = true, g.add.owner.Name, cd.requests.addAllowed(g)
	}
	r, err := cd.d.Parser.Rewrite(ctx, req)
	if err != nil {
		return codeCandidate{problem: err.Error()}
	}
	var note string
	switch {
	case r.Whole:
		note = fmt.Sprintf("(your block was the whole of %s: it replaced the file)\n", p)
	case r.Renamed != "":
		note = fmt.Sprintf("(renamed %s)\n", r.Renamed)
	}
	if len(r.Added) > 0 {
		note += fmt.Sprintf("(added %s after %s)\n", strings.Join(r.Added, ", "), g.unit.Name)
	}
	said := fmt.Sprintf("%s: rewrote %s (%d lines now)", p, strings.Join(r.Replaced, ", "), strings.Count(r.Content, "\n"))
	if r.Whole {
		said = ""
	}
	return codeCandidate{change: change{files: map[string]string{p: r.Content}, lines: map[string]int{p: r.Line}, said: map[string]string{p: said}}, note: note}
}

// smallerGrain is the grain of a re-ask after a whole file was cut at the
// reply limit: the unit in view, else blocks.
func (rb *requestBuilder) smallerGrain(ctx context.Context, act implAction, p, old string) grain {
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

// onto makes a change of SEARCH/REPLACE blocks on p into p's whole text,
// the blocks applied to base (the candidate they were written against).
// Any other change, or blocks that do not apply there, stay as they are.
func onto(c change, p, base string) change {
	if len(c.edits) == 0 || len(c.files) > 0 || base == "" {
		return c
	}
	text := base
	for _, e := range c.edits {
		if e.Path != p {
			return c
		}
		next, err := workspace.ApplyEdit(text, e)
		if err != nil {
			return c
		}
		text = next
	}
	return change{files: map[string]string{p: text}}
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

// recordSample puts a candidate of a sampled code call in the event log.
func (cd *coder) recordSample(ctx context.Context, p string, g grain, i, n int, kept bool, problem string, resp llm.Response) {
	if n <= 1 {
		return
	}
	cd.d.emit(ctx, events.ImplementorSample{Task: cd.t.ID, Attempt: cd.t.Attempt, Path: p, Grain: g.kind,
		Sample: i + 1, Of: n, Kept: kept, Problem: problem, Reply: resp.Content, Tokens: resp.Usage.CompletionTokens})
}

// chatText makes one code call after the prefix, counting its usage.
// Sample i > 0 is drawn at a raised temperature.
func (cd *coder) chatText(ctx context.Context, r codeRequest) (llm.Response, error) {
	req := request(cd.conv.prefix, r.messages, r.budget)
	if r.sample > 0 {
		t := min(0.6+0.2*float64(r.sample-1), 1.2)
		// Seeded by its place, so a run made again draws the same (a
		// bench run moved by an exercise on one unseeded draw).
		seed := r.sample
		req.Temperature, req.Seed = &t, &seed
	}
	if r.prefill != "" {
		req.Prefill = r.prefill
		req.Stop = r.stops
	}
	if cd.direct {
		// The window for the whole attempt from its first call: one that
		// grows mid-attempt reloads the model and evaluates the prompt
		// afresh.
		if cd.expect == 0 {
			cd.expect = tokensOf(req.Messages) + (1+cd.gates.fixLimit())*(r.budget+directFeedbackTokens)
		}
		req.Expect = cd.expect
	}
	cd.codeCalls++
	resp, err := cd.d.Model.Chat(ctx, req)
	cd.s.AddUsage(runstate.NodeImplementor, usageOf(resp.Usage))
	if llm.Runaway(err) && resp.Stop() == llm.StopLooping {
		err = nil // a reply like any unusable one: readCode says why, the next sample varies
	}
	if err != nil {
		cd.d.Prompts.Failed(ctx, events.ModelError{Label: runstate.NodeImplementor, Error: err.Error()})
		return resp, fmt.Errorf("%s: %w", runstate.NodeImplementor, err)
	}
	cd.d.Prompts.Called(ctx, runstate.NodeImplementor, resp)
	return resp, nil
}
