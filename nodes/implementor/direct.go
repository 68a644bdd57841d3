package implementor

// The direct first attempt of a quick task (implementor.direct: auto). When
// the task has one file to change, the first call asks for that file's code
// at once: the action that would only say "edit this file" and the finish
// call after it are what lemmings can do itself. The gates run when the code
// lands; their failure goes back as a fix round that asks for the code again.
// A one-line change costs one call instead of three, the prompt carries no
// action protocol, and a weak model answers a request for code better than it
// picks actions (SmolLM2 in `lemmings eval` answered `finish` without an edit
// in every action-loop attempt). Later attempts use the action loop.

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
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// directStill rounds in a row whose code left the work as it was end the
// direct attempt: the same gates would fail the same way. directUnusable
// candidates drawn in a row without usable code end it too — one round when
// it drew two (implementor.samples), two rounds of one: a model that could
// not write the file twice is not helped by a third draw of the same
// request, and the next attempt tries it another way.
const (
	directStill    = 2
	directUnusable = 2
	// directFixRounds bounds the direct attempt's fix rounds.
	directFixRounds = 1
	// directFeedbackTokens is room for what a round adds besides the code:
	// the gates' summarised failure and the request.
	directFeedbackTokens = 600
)

// directTarget is the one file a direct attempt changes, when the attempt
// may be direct: the first of a quick task or of one whose files lemmings
// placed (a list remit's item), in the text protocol, with one target file
// that is not a test (tests named beside it are shown, not changed).
func (l *implLoop) directTarget() (string, bool) {
	if !l.text || !l.d.Settings.Direct || !(l.s.Quick || l.t.Placed) {
		return "", false
	}
	var change []string
	for _, p := range CleanFiles(l.t.TargetFiles) {
		if !IsTestFile(p) && !slices.Contains(change, p) {
			change = append(change, p)
		}
	}
	if len(change) != 1 {
		return "", false
	}
	return change[0], true
}

// IsTestFile says whether a path is a test by the naming conventions of the
// languages lemmings' gates run.
func IsTestFile(p string) bool {
	base := path.Base(p)
	name := strings.TrimSuffix(base, path.Ext(base))
	switch {
	case strings.HasSuffix(base, "_test.go"),
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"),
		strings.HasSuffix(base, "_test.py"),
		strings.HasSuffix(name, ".test"), strings.HasSuffix(name, ".spec"), // JS/TS
		strings.HasSuffix(base, ".java") && (strings.HasSuffix(name, "Test") || strings.HasSuffix(name, "Tests")),
		strings.HasSuffix(base, "_spec.rb"):
		return true
	}
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "tests" || dir == "__tests__" || dir == "spec" {
			return true
		}
	}
	return false
}

// directAttempt asks for the code of p, lands it, runs the gates and sends
// their failure back, until they pass, the fix rounds are spent, the code
// stops changing or cannot be used.
func (l *implLoop) directAttempt(ctx context.Context, p string) (*runstate.ImplResult, error) {
	l.direct, l.directPath = true, p
	if err := l.prefix.buildPrefix(ctx); llm.TooLarge(err) {
		return &runstate.ImplResult{Status: runstate.ImplExhausted, Summary: "the task's prompt does not fit the model's context window: " + err.Error()}, nil
	} else if err != nil {
		return nil, err
	}
	act := Action{actionHead: actionHead{Action: "edit", Thought: "(lemmings) the task's one file", Path: p}}
	if _, err := l.d.Work.FS().ReadFile(p); errors.Is(err, fs.ErrNotExist) {
		act.Action = "write_file"
	}
	l.d.emit(ctx, events.ImplementorDirect{Task: l.t.ID, Attempt: l.t.Attempt, Path: p})
	before, _ := l.d.Work.FS().ReadFile(p) // what the test of the change is told changed
	var repro reproduction
	if l.t.Attempt == 1 && l.t.StartTested && l.t.StartPassed {
		var err error
		if repro, err = l.tests.reproduce(ctx, act); err != nil {
			return nil, err
		}
	}
	res, err := l.directRounds(ctx, act, string(before), repro)
	if err == nil && repro.kept && (res.Status != runstate.ImplFinished || l.gates.gatesFailed) {
		// The code did not pass the test it was written against: the next
		// attempt and QA go without it (a small coder's test can be wrong).
		if rerr := l.d.Work.FS().Restore(repro.path, []byte(repro.was)); rerr != nil {
			return nil, fmt.Errorf("implementor: put back %s: %w", repro.path, rerr)
		}
		res.Summary = strings.TrimSpace(res.Summary + fmt.Sprintf(" The test written first in %s was dropped: the code did not pass it.", repro.path))
	}
	return res, err
}

// directRounds are the direct attempt's rounds: the code asked for, landed
// and gated, and a failure sent back, until the gates pass, the rounds are
// spent, or the code stops changing or cannot be used. A test written
// first (repro) is in the tree they are gated on, and the evidence when they
// pass.
func (l *implLoop) directRounds(ctx context.Context, act Action, before string, repro reproduction) (*runstate.ImplResult, error) {
	p := act.Path
	var (
		// A later attempt starts from the last one's work, with what was
		// found wrong with it: as direct as the first (Qwen-1.5B, put in
		// the tool loop for its second attempt, answered code requests with
		// actions and actions with code, 6 calls and nothing landed).
		lead        = l.lastFeedback()
		lastDiff    string
		still       int
		diagnosed   bool
		unusable    int
		lastProblem string
	)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if left, limited := l.d.Clock.WallTimeLeft(l.s, l.d.Clock.Now()); limited && left <= 0 {
			return &runstate.ImplResult{Status: runstate.ImplExhausted, Actions: n - 1, Summary: l.d.Clock.WallTimeReached()}, nil
		}
		drawn := l.coder.codeCalls
		ex, err := l.coder.codeEdit(ctx, act, "", lead)
		drawn = l.coder.codeCalls - drawn
		l.requests.diagnose = false
		if llm.TooLarge(err) {
			return &runstate.ImplResult{Status: runstate.ImplExhausted, Actions: n, Summary: "the conversation no longer fits the model's context window: " + err.Error()}, nil
		}
		if err != nil {
			return nil, err
		}
		l.conv.history = append(l.conv.history, llm.Message{Role: "user", Content: ex.instruction}, llm.Message{Role: "assistant", Content: ex.reply})
		l.conv.compact()
		l.d.emitAction(ctx, l.t, n, act, ex.result)
		if strings.HasPrefix(ex.result, "error") {
			unusable += drawn
			lastProblem = ex.result
			if unusable >= directUnusable {
				return &runstate.ImplResult{Status: runstate.ImplError, Actions: n, Summary: "the model's code could not be used: " + textutil.FirstLine(strings.TrimSpace(lastProblem))}, nil
			}
			lead = "Your reply could not be used: " + strings.TrimPrefix(directNote(ex.result), "error: ")
			continue
		}
		unusable = 0
		diff, _, err := l.d.Work.Changes(ctx, l.t.StartCommit)
		if err != nil {
			return nil, fmt.Errorf("implementor: read the attempt's change: %w", err)
		}
		hash := workspace.DiffHash(diff)
		if strings.TrimSpace(diff) == "" || hash == lastDiff {
			still++
		} else {
			still = 0
		}
		lastDiff = hash
		if still >= directStill {
			return &runstate.ImplResult{Status: runstate.ImplLoop, Actions: n, Summary: fmt.Sprintf("the code of %d rounds in a row left %s as it was", still, p)}, nil
		}
		if failing := l.gates.unchangedFails(ctx, diff, diagnosed); failing != "" {
			// Code that changes nothing fails as the start did, and would
			// end the attempt or spend its fix round on that: asked once
			// more, for the cause first.
			diagnosed, l.requests.diagnose = true, true
			lead = fmt.Sprintf("Your code is %s exactly as it was: it changes nothing, so the checks fail as before:\n%s", p, failing)
			continue
		}
		if strings.TrimSpace(diff) == "" {
			// The checks pass on the tree as it was (no test there shows
			// the task): code that changes nothing is not the change.
			lead = fmt.Sprintf("Your code is %s exactly as it was: it changes nothing, and the task asks for a change.", p)
			continue
		}
		done, failed := l.gates.finishGates(ctx, Action{actionHead: actionHead{Action: "finish"}, actionTail: actionTail{Summary: "Changed " + p + " as the task asks."}}, n)
		if done != nil && repro.kept {
			done.Evidence = fmt.Sprintf("a test lemmings wrote first in %s failed before the change and passes with it", repro.path)
			done.Summary = strings.TrimSpace(done.Summary + " The test written first in " + repro.path + " passes with it.")
			return done, nil
		}
		if done != nil {
			if err := l.tests.writeTest(ctx, done, before, !repro.tried); err != nil {
				return nil, err
			}
			return done, nil
		}
		lead = textutil.JoinParagraphs(directNote(ex.result), "The checks ran on your code: "+failed, "Fix the cause.")
		if still > 0 {
			lead += fmt.Sprintf("\nNOTE: your code left %s as it was; the same code will fail the same way.", p)
		}
	}
}

// lastFeedback is what an earlier attempt of the task was told, for the
// next one's first request ("" on the first attempt).
func (l *implLoop) lastFeedback() string {
	if l.t.Attempt <= 1 || strings.TrimSpace(l.t.Feedback) == "" {
		return ""
	}
	return "The last attempt at this was not accepted:\n" + textutil.Clip(strings.TrimSpace(l.t.Feedback), 1500) + "\nFix that."
}
