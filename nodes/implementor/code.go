package implementor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
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
func (cd *coder) codeEdit(ctx context.Context, act Action, args, lead string) (codeExchange, error) {
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
func (cd *coder) afterDraws(ctx context.Context, act Action, a codeAsk, t drawTally) (codeExchange, error) {
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

// sameCode reports whether two texts are the same code but for white space.
func sameCode(a, b string) bool { return compact(a) == compact(b) }

// compact makes every run of white space one space.
func compact(s string) string { return strings.Join(strings.Fields(s), " ") }

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
