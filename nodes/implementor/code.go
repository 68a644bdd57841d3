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

// codeEdit asks for the code of an edit or write_file action as plain text,
// at the grain chooseGrain picks: the whole file, one function, method or
// type (spliced by the syntax tree), or SEARCH/REPLACE blocks. Up to
// Settings.Samples candidates are drawn over the same prompt, the later ones
// at a raised temperature, and the first that lands cleanly (parses, adds no
// check problem and, in a fix round, passes the gates) is kept. A reply that
// cannot be read gets one re-ask; nothing half-made is written.
//
// lead, in a direct attempt, opens the request (what the last round found).
func (l *implLoop) codeEdit(ctx context.Context, act implAction, args, lead string) (codeExchange, error) {
	p := strings.TrimSpace(act.Path)
	if p == "" {
		return codeExchange{instruction: "error: " + act.Action + " needs a path.", reply: "(no code asked for)",
			result: "error: give the path of the file to " + act.Action}, nil
	}
	oldBytes, readErr := l.d.Work.FS().ReadFile(p)
	old, exists := string(oldBytes), readErr == nil
	g := l.chooseGrain(ctx, act, p, old, exists)
	instr := l.grainInstruction(p, g, exists, old)
	view := l.grainView(p, old, exists, g)
	msgs := append(l.messages(""), llm.Message{Role: "assistant", Content: args}, llm.Message{Role: "user", Content: instr + view})
	// withLesson is the direct request, or the one given, with what an
	// earlier candidate's failure taught put before it (nil when it is not
	// a direct one).
	var withLesson func(lesson, request string) []llm.Message
	if l.direct {
		// No action was asked for: the request follows the prefix (or the
		// last code reply) as the user's turn — the file first and the
		// request last, right where the reply starts, with nothing in a
		// fence but the file (a small coder copies a placeholder there as
		// its answer).
		if g.kind != grainBlocks {
			instr = directRequest(p, g, exists, lead != "")
			switch {
			case l.writingTest:
				instr = testRequest(p, g, exists)
			case l.diagnose:
				instr = diagnoseRequest(p, g, exists)
			}
		}
		// The file first and what the last round found after it, so every
		// round's prompt shares the file with the one before and the
		// server's cache reads it once.
		request := instr
		instr = textutil.JoinParagraphs(strings.TrimSpace(view), lead, request)
		if l.writingTest {
			// The test's one call shows the code it tests before the test file.
			instr = textutil.JoinParagraphs(lead, strings.TrimSpace(view), request)
		}
		msgs = append(l.messages(""), llm.Message{Role: "user", Content: instr})
		if g.kind != grainBlocks && !l.diagnose {
			withLesson = func(lesson, asked string) []llm.Message {
				if asked == "" {
					asked = request
				}
				return append(l.messages(""), llm.Message{Role: "user", Content: textutil.JoinParagraphs(strings.TrimSpace(view), lead, lesson, asked)})
			}
		}
	}
	l.codeBudget = l.grainReply(old, exists, g)
	l.prefill, l.stopping = "", nil
	if l.direct && g.kind != grainBlocks && l.diagnose {
		// A sentence, then the block: no prefill, and no stop at a fence
		// (the block's opening one would end the reply).
		l.stopping = appendedTests(p, old)
		l.codeBudget += diagnoseTokens
	} else if l.direct && g.kind != grainBlocks {
		// The reply starts inside the one fenced block asked for and ends
		// at its close: no prose before or after it to pay for.
		l.prefill, l.stopping = fenceFor(p)+langOf(p)+"\n", append([]string{"\n" + fenceFor(p)}, appendedTests(p, old)...)
		if l.writingTest && g.kind == grainWhole && strings.TrimSpace(old) != "" {
			// The test file as it is starts the reply, so the model writes
			// only its new test after it and cannot break the tests there
			// (Qwen-1.5B, writing the file back whole, left out the closing
			// brace before its new test, twice in one remit).
			l.prefill += strings.TrimRight(old, "\n") + "\n\n"
			l.stopping = append(l.stopping, nextTest(p)...)
		}
	}
	// A planned draw's reply opens with the plan, not the fence: it has its
	// own prefill and stops, and the next draw gets the block's back.
	blockPrefill, blockStops, blockBudget := l.prefill, l.stopping, l.codeBudget
	n := max(1, l.d.Settings.Samples)
	if l.direct {
		// Verified best-of-n (implementor.draws, in place of samples): each
		// candidate runs against the gates, so a small coder's second or
		// third draw can be the one that passes.
		n = max(1, l.d.Settings.Draws)
		if l.fixRounds > 0 || l.diagnose || l.writingTest {
			// The fix round and the reason-first re-ask are tries of their
			// own; the test the remit asks for gets one call.
			n = 1
		}
	}
	var (
		firstProblem string
		firstResp    llm.Response
		fallback     *codeCandidate
		failed       *codeExchange
		// repair, when set, is the next draw: the first candidate that
		// failed, what failed (build or gates), and the request again.
		repair   []llm.Message
		repaired bool
		// base is the repaired candidate's text: a repair written as
		// SEARCH/REPLACE blocks edits it, not the file.
		base string
		// lesson is what the first failing candidate's build or gates
		// said; fresh draws after it are asked with it (and without the
		// failed code, which a small coder copies back), the first of them
		// at the role's temperature.
		lesson  string
		learned int
		// buildProblem is what the last candidate that did not build was
		// told.
		buildProblem string
		// tried holds the code of every candidate that failed: the same
		// code again is known to fail without landing or gating it.
		tried = map[string]int{}
	)
	for i := 0; i < n; i++ {
		if left, limited := l.d.Clock.WallTimeLeft(l.s, l.d.Clock.Now()); i > 0 && limited && left <= 0 {
			break // the run's wall is spent: what was drawn is all there is
		}
		ask, sample, repairing := msgs, i, repair != nil
		l.prefill, l.stopping, l.codeBudget = blockPrefill, blockStops, blockBudget
		switch {
		case repairing:
			ask, sample, repair = repair, 0, nil
		case lesson != "" && withLesson != nil && learned == 0:
			ask, sample = withLesson(lesson, ""), 0
			learned++
		case lesson != "" && withLesson != nil:
			// The draws after that are asked for a short plan before the
			// code, as Aider's replies open: replayed on the server,
			// Qwen-1.5B wrote go/difference-of-squares right so at
			// temperature 0 and in 2 of 4 at 0.6 (0 of 6 at 0–1.0 with the
			// lesson and the bare request), python/isogram in 4 of 4 at 0.6.
			ask, sample = withLesson(lesson, planRequest(p, g, exists)), learned-1
			l.prefill, l.stopping, l.codeBudget = planOpening, append(closingFence(p), appendedTests(p, old)...), blockBudget+planTokens
			learned++
		}
		resp, err := l.chatText(ctx, ask, sample)
		if err != nil {
			return codeExchange{}, err
		}
		code := candidateKey(resp.Content, p)
		if k, seen := tried[code]; seen {
			l.recordSample(ctx, p, g, i, n, false, fmt.Sprintf("the same code as candidate %d", k+1), resp)
			continue
		}
		c := l.readCode(ctx, resp, p, g, old)
		if repairing && c.problem == "" {
			c.change = onto(c.change, p, base)
		}
		if c.problem != "" {
			l.malformed++
			l.recordSample(ctx, p, g, i, n, false, c.problem, resp)
			if firstProblem == "" {
				firstProblem, firstResp = c.problem, resp
			}
			if resp.DoneReason == "length" {
				break // the same prompt would be cut again: ask for less
			}
			continue
		}
		land := l.land(ctx, c.change)
		text := c.note + land.text
		if land.landed && land.introduced == "" && l.sampleGatesPass(ctx, n) {
			l.recordSample(ctx, p, g, i, n, true, "", resp)
			return codeExchange{instruction: instr, reply: resp.Content, result: text, land: land}, nil
		}
		problem := land.introduced
		if !land.landed {
			problem = land.text
		} else if problem == "" {
			problem = "the gates fail with it"
		}
		if i == n-1 && fallback == nil {
			l.recordSample(ctx, p, g, i, n, true, problem, resp)
			return codeExchange{instruction: instr, reply: resp.Content, result: text, land: land}, nil
		}
		l.recordSample(ctx, p, g, i, n, false, problem, resp)
		tried[code] = i
		if land.landed && lesson == "" {
			lesson = "An earlier try at this did not build:\n" + directNote(land.introduced)
			if land.introduced == "" {
				lesson = "An earlier try at this failed the checks: " + directNote(l.gatedFailure())
			}
		}
		// A candidate that is the file as it was shown, failing as it did,
		// says the bare request is answered by copying: no repair of it
		// (a copy again) and no plain draw, the plan asked for at once
		// (Qwen-1.5B wrote the failed file of the eval's second try back at
		// every temperature, docs/eval.md).
		copied := land.landed && land.introduced == "" && exists && sameCode(c.change.files[p], old)
		if copied && lesson != "" && learned == 0 {
			learned = 1
		}
		// A repair that builds no better but fails on another line is
		// progress, as in Aider's lint rounds: it is repaired in turn
		// (Qwen-1.5B turned `strings.ToUpper(word[0])` into
		// `WriteRune(strings.ToUpper(string(word[0])))`, a new type error).
		onward := repairing && land.introduced != "" && land.introduced != buildProblem
		if land.introduced != "" {
			buildProblem = land.introduced
		}
		if l.direct && g.kind != grainBlocks && land.landed && !copied && (!repaired || onward) {
			// The first candidate that fails is repaired once, in the same
			// conversation, with the compiler's or the tests' words (as
			// Aider's lint round and second try do), before fresh draws:
			// Qwen-1.5B drew the same type error at every temperature, and
			// fixes it when shown it.
			repaired = true
			if b, err := l.d.Work.FS().ReadFile(p); err == nil {
				base = string(b)
			}
			why := "Your code does not build:\n" + directNote(land.introduced)
			if land.introduced == "" {
				why = "The checks ran on your code: " + l.gatedFailure()
			}
			repair = append(slices.Clone(ask), llm.Message{Role: "assistant", Content: resp.Content},
				llm.Message{Role: "user", Content: textutil.JoinParagraphs(why, "Fix the cause.", directRequest(p, g, exists, true))})
		}
		if land.landed {
			if err := l.undo(land); err != nil {
				return codeExchange{}, fmt.Errorf("implementor: put back a rejected candidate: %w", err)
			}
			if fallback == nil {
				c.resp = resp
				fallback = &c
			}
		} else if failed == nil {
			failed = &codeExchange{instruction: instr, reply: resp.Content, result: text}
		}
	}
	l.prefill, l.stopping, l.codeBudget = blockPrefill, blockStops, blockBudget
	if fallback != nil {
		land := l.land(ctx, fallback.change)
		return codeExchange{instruction: instr, reply: fallback.resp.Content, result: fallback.note + land.text, land: land}, nil
	}
	if failed != nil {
		return *failed, nil
	}
	if l.direct {
		// The direct attempt's next round is the re-ask, with the problem.
		l.failStreak++
		return codeExchange{instruction: instr, reply: firstResp.Content, result: "error: " + firstProblem + "\nNo file was changed."}, nil
	}
	// No candidate could be read: one re-ask that says why.
	retry := firstProblem
	if firstResp.DoneReason == "length" {
		retry = fmt.Sprintf("Your reply was cut off at %d tokens (the reply limit), so nothing was written. Make a smaller change.", firstResp.Usage.CompletionTokens)
		if g.kind == grainWhole && exists && strings.Count(old, "\n") > 40 {
			g = l.smallerGrain(ctx, act, p, old) // a smaller change: a unit or blocks, not the whole file
		}
	}
	retry += "\n" + l.grainInstruction(p, g, exists, old)
	l.codeBudget = l.grainReply(old, exists, g)
	l.d.emit(ctx, events.ImplementorBadCode{Task: l.t.ID, Path: p, Problem: firstProblem, DoneReason: firstResp.DoneReason, Grain: g.kind})
	msgs = append(msgs, llm.Message{Role: "assistant", Content: firstResp.Content}, llm.Message{Role: "user", Content: retry})
	resp, err := l.chatText(ctx, msgs, 0)
	if err != nil {
		return codeExchange{}, err
	}
	c := l.readCode(ctx, resp, p, g, old)
	if c.problem != "" {
		l.malformed++
		l.failStreak++
		return codeExchange{instruction: instr, reply: resp.Content, result: "error: " + c.problem + "\nNo file was changed."}, nil
	}
	land := l.land(ctx, c.change)
	return codeExchange{instruction: instr, reply: resp.Content, result: c.note + land.text, land: land}, nil
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
func (l *implLoop) readCode(ctx context.Context, resp llm.Response, p string, g grain, old string) codeCandidate {
	switch resp.Stop() {
	case llm.StopLength:
		return codeCandidate{problem: fmt.Sprintf("the reply was cut off at %d tokens (the reply limit)", resp.Usage.CompletionTokens)}
	case llm.StopLooping:
		return codeCandidate{problem: "the reply kept repeating the same lines and was stopped; write only the code asked for, once"}
	}
	if (g.kind == grainUnit || g.kind == grainAdd) && !hasBlockMarkers(resp.Content) {
		return l.readUnit(ctx, resp.Content, p, g, old)
	}
	edits, content, problem := parseCode(resp, p, g.kind == grainWhole, old)
	if problem != "" {
		return codeCandidate{problem: problem}
	}
	if edits != nil {
		return codeCandidate{change: change{edits: edits}}
	}
	if old != "" && content != old && splice.Language(p) != "" && (partOfFile(p, content, old) || l.dropsUsed(ctx, p, content, old)) {
		r, err := l.parser().Rewrite(ctx, splice.Request{Path: p, Src: old, Code: content, Rename: l.renameAllowed})
		if err == nil {
			return codeCandidate{change: change{files: map[string]string{p: r.Content}, lines: map[string]int{p: r.Line}},
				note: fmt.Sprintf("(your block held only part of %s: %s put in place, the rest of the file kept)\n", p, strings.Join(append(r.Replaced, r.Added...), ", "))}
		}
	}
	note := ""
	if trimmed, n := l.dropLeadingProse(ctx, p, content); n > 0 {
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
func (l *implLoop) dropLeadingProse(ctx context.Context, p, content string) (string, int) {
	if splice.Language(p) == "" || l.parses(ctx, p, []byte(content)) == nil {
		return content, 0
	}
	lines := strings.Split(content, "\n")
	for i, line := range lines {
		if i == 0 || !codeStart.MatchString(line) {
			continue
		}
		rest := strings.Join(lines[i:], "\n")
		if l.parses(ctx, p, []byte(rest)) == nil {
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
func (l *implLoop) dropsUsed(ctx context.Context, p, content, old string) bool {
	was, err := l.parser().Units(ctx, p, []byte(old))
	if err != nil {
		return false
	}
	now, err := l.parser().Units(ctx, p, []byte(content))
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
func (l *implLoop) readUnit(ctx context.Context, reply, p string, g grain, old string) codeCandidate {
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
	req := splice.Request{Path: p, Src: old, Target: g.unit.Name, Code: code, Rename: l.renameAllowed, Others: l.renameAllowed}
	if g.kind == grainAdd {
		req.Add, req.Owner, req.Others = true, g.add.owner.Name, l.addAllowed(g)
	}
	r, err := l.parser().Rewrite(ctx, req)
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
func (l *implLoop) smallerGrain(ctx context.Context, act implAction, p, old string) grain {
	if units, err := l.parser().Units(ctx, p, []byte(old)); err == nil {
		if u, ok := l.pickUnit(units, act.Symbol, p); ok {
			return grain{kind: grainUnit, unit: u, units: units, why: "whole file cut at the limit"}
		}
	}
	return grain{kind: grainBlocks, why: "whole file cut at the limit"}
}

// grainReply is the reply budget of a code call at its grain (codeReply):
// for a unit, what the unit whole would take.
func (l *implLoop) grainReply(old string, exists bool, g grain) int {
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
func (l *implLoop) grainInstruction(p string, g grain, exists bool, old string) string {
	if g.kind == grainAdd {
		return addRequest(p, g, false)
	}
	if g.kind == grainUnit {
		return unitInstruction(p, g)
	}
	return codeInstruction(p, g.kind == grainWhole, exists, strings.Count(old, "\n"))
}

// grainView is the file as the code call shows it (not kept in the history).
func (l *implLoop) grainView(p, old string, exists bool, g grain) string {
	if g.kind == grainAdd {
		return addView(p, old, g)
	}
	if g.kind == grainUnit {
		return unitView(p, old, g)
	}
	return l.codeView(p, old, exists, g.kind == grainWhole)
}

// sampleGatesPass: with more than one candidate to draw, in a direct
// attempt or a fix round (the gates failed on finish), a candidate is kept
// at once only when the gates pass on it.
func (l *implLoop) sampleGatesPass(ctx context.Context, samples int) bool {
	if samples <= 1 || !(l.direct || l.fixRounds > 0) || len(l.d.Gates) == 0 {
		return true
	}
	results := workspace.RunGates(ctx, l.d.Sandbox, l.d.Work.Dir(), l.d.Gates, l.d.Settings.GateOutputBytes)
	for _, r := range results {
		l.d.emitGate(ctx, l.t, "sample", r)
	}
	l.gated = gatedTree{}
	if diff, _, err := l.d.Work.Changes(ctx, l.t.StartCommit); err == nil && ctx.Err() == nil {
		l.gated = gatedTree{diffHash: workspace.DiffHash(diff), results: results}
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
func (l *implLoop) gatedFailure() string {
	for _, r := range l.gated.results {
		if !r.Passed {
			return r.ModelFeedback(l.d.Work.Dir(), workspace.DefaultSummaryBytes)
		}
	}
	return "the gates fail with it."
}

// gatedNow is the last candidate's gate run when the tree is still the one
// it ran on.
func (l *implLoop) gatedNow(ctx context.Context) ([]workspace.GateResult, bool) {
	if l.gated.diffHash == "" {
		return nil, false
	}
	diff, _, err := l.d.Work.Changes(ctx, l.t.StartCommit)
	if err != nil || workspace.DiffHash(diff) != l.gated.diffHash {
		return nil, false
	}
	return l.gated.results, true
}

// recordSample puts a candidate of a sampled code call in the event log.
func (l *implLoop) recordSample(ctx context.Context, p string, g grain, i, n int, kept bool, problem string, resp llm.Response) {
	if n <= 1 {
		return
	}
	l.d.emit(ctx, events.ImplementorSample{Task: l.t.ID, Attempt: l.t.Attempt, Path: p, Grain: g.kind,
		Sample: i + 1, Of: n, Kept: kept, Problem: problem, Reply: resp.Content, Tokens: resp.Usage.CompletionTokens})
}

// chatText makes a plain-text call after the prefix, counting its usage.
// Sample i > 0 is drawn at a raised temperature.
func (l *implLoop) chatText(ctx context.Context, msgs []llm.Message, sample int) (llm.Response, error) {
	req := request(l.prefix, msgs, l.codeBudget)
	if sample > 0 {
		t := min(0.6+0.2*float64(sample-1), 1.2)
		// Seeded by its place, so a run made again draws the same (a
		// bench run moved by an exercise on one unseeded draw).
		seed := sample
		req.Temperature, req.Seed = &t, &seed
	}
	if l.prefill != "" {
		req.Prefill = l.prefill
		req.Stop = l.stopping
	}
	if l.direct {
		// The window for the whole attempt from its first call: one that
		// grows mid-attempt reloads the model and evaluates the prompt
		// afresh (99 s instead of 4 in bench-aider).
		if l.expect == 0 {
			l.expect = tokensOf(req.Messages) + (1+l.fixLimit())*(l.codeBudget+directFeedbackTokens)
		}
		req.Expect = l.expect
	}
	l.codeCalls++
	resp, err := l.d.Model.Chat(ctx, req)
	l.s.AddUsage(runstate.NodeImplementor, usageOf(resp.Usage))
	if llm.Runaway(err) && resp.Stop() == llm.StopLooping {
		err = nil // a reply like any unusable one: readCode says why, the next sample varies
	}
	if err != nil {
		l.d.Prompts.Failed(ctx, events.ModelError{Label: runstate.NodeImplementor, Error: err.Error()})
		return resp, fmt.Errorf("%s: %w", runstate.NodeImplementor, err)
	}
	l.d.Prompts.Called(ctx, runstate.NodeImplementor, resp)
	return resp, nil
}
