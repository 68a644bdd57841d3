package implementor

// The Implementor's own interceptors (intercept.go has the chain and its
// order), and the finish that runs the gates: the fix round.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// wallTime: the run's wall time is checked before every action, not only
// between tasks: a slow model must not run hours past the limit.
func wallTime(l *implLoop) Interceptor {
	return Interceptor{Name: "wall time", BeforeModel: func(_ context.Context, c *ModelCall) Verdict {
		if left, limited := l.d.Clock.WallTimeLeft(l.s, l.d.Clock.Now()); limited && left <= 0 {
			return Verdict{End: &runstate.ImplResult{Status: runstate.ImplExhausted, Actions: c.N - 1, Summary: l.d.Clock.WallTimeReached()}}
		}
		return Verdict{}
	}}
}

// variation: after a runaway reply the next asks vary the sampling further.
func variation() Interceptor {
	runaways := 0
	return Interceptor{Name: "variation",
		BeforeModel: func(_ context.Context, c *ModelCall) Verdict {
			c.Variation = runaways
			return Verdict{}
		},
		AfterModel: func(_ context.Context, c *ModelCall) Verdict {
			if llm.Runaway(c.Err) {
				runaways++
			}
			return Verdict{}
		}}
}

// proseEdits: many local coding models answer with SEARCH/REPLACE blocks in
// prose: take those rather than waste the attempt. A reply cut at the length
// limit is missing its end: nothing is taken from it.
func proseEdits() Interceptor {
	return Interceptor{Name: "prose edits", AfterModel: func(_ context.Context, c *ModelCall) Verdict {
		var se *llm.StructuredError
		if errors.As(c.Err, &se) && se.Stop != llm.StopLength {
			if edits, perr := workspace.ParseEditBlocks(se.Raw); perr == nil && len(edits) > 0 {
				c.act = Action{actionHead: actionHead{Action: "edit_blocks", Thought: "(edit blocks in prose)"}, Blocks: se.Raw}
				c.Err = nil
			}
		}
		return Verdict{}
	}}
}

// replyFormat answers a reply that is no valid action with what was wrong,
// and one cut at the reply limit that carries code (the JSON repair may
// close it: never write half a change); maxBadReplies in a row end the
// attempt: the model is not following the format.
func replyFormat(l *implLoop) Interceptor {
	bad := 0
	return Interceptor{Name: "reply format", AfterModel: func(_ context.Context, c *ModelCall) Verdict {
		switch {
		case c.Err != nil:
			bad++
			l.coder.malformed++
			if bad >= maxBadReplies {
				return Verdict{End: &runstate.ImplResult{Status: runstate.ImplError, Actions: c.N, Summary: "the model's replies were not valid actions: " + c.Err.Error()}}
			}
			return Verdict{Answer: "Your reply was not a valid action (" + c.Err.Error() + "). " + l.reminder()}
		case c.Reply.DoneReason == "length" && writesCode(c.act):
			bad++
			l.coder.malformed++
			if bad >= maxBadReplies {
				return Verdict{End: &runstate.ImplResult{Status: runstate.ImplError, Actions: c.N, Summary: "the model's replies kept hitting the reply limit"}}
			}
			return Verdict{Answer: fmt.Sprintf("Your reply was cut off at %d tokens (the reply limit), so nothing was written. Make a smaller change. %s", c.Reply.Usage.CompletionTokens, l.reminder())}
		}
		bad = 0
		return Verdict{}
	}}
}

// progress shows each action as it happens: one that may end the attempt
// before it runs (its summary or question), the others with their result.
func progress(l *implLoop) Interceptor {
	return Interceptor{Name: "progress",
		BeforeTool: func(ctx context.Context, c *ToolCall) Verdict {
			if c.Ends {
				l.d.emitAction(ctx, l.t, c.N, c.act, c.act.Summary+c.act.Question)
			}
			return Verdict{}
		},
		AfterTool: func(ctx context.Context, c *ToolCall) Verdict {
			if !c.Ends {
				l.d.emitAction(ctx, l.t, c.N, c.act, c.Result)
			}
			return Verdict{}
		}}
}

// finishOnFailedGates: when the gates failed on this very code at a finish,
// lemmings answers the next finish without running them again by ending the
// attempt (a small coder said finish four times in a row with the test
// failing, each a model call).
func finishOnFailedGates(l *implLoop) Interceptor {
	var tree, failedTree, failedGates string
	return Interceptor{Name: "finish gates",
		BeforeTool: func(ctx context.Context, c *ToolCall) Verdict {
			if c.Action != "finish" {
				return Verdict{}
			}
			tree = l.gates.treeHash(ctx)
			if failedTree != "" && tree == failedTree {
				l.d.emit(ctx, events.ImplementorFinishRefused{Task: l.t.ID, Attempt: l.t.Attempt})
				return Verdict{End: &runstate.ImplResult{Status: runstate.ImplLoop, Actions: c.N,
					Summary: "said finish twice while a gate failed on the same code: " + textutil.FirstLine(strings.TrimSpace(failedGates))}}
			}
			return Verdict{}
		},
		AfterTool: func(_ context.Context, c *ToolCall) Verdict {
			if c.Action == "finish" { // the attempt goes on: the gates failed
				failedTree, failedGates = tree, c.Result
			}
			return Verdict{}
		}}
}

// repeats watches for a model going round in circles. A repeat (same
// action, same arguments, same result: loopThreshold times) gets a nudge
// appended to its result that names it and suggests another way; the same
// once more ends the attempt. Edits that keep failing are nudged, then end
// it too.
func repeats(l *implLoop) Interceptor {
	detector := workspace.NewActionLoop(loopWindow, loopThreshold)
	return Interceptor{Name: "repeats", AfterTool: func(_ context.Context, c *ToolCall) Verdict {
		if c.Ends {
			return Verdict{}
		}
		if end := l.steer(detector, c.act, c.signature, &c.Result); end != "" {
			return Verdict{End: &runstate.ImplResult{Status: runstate.ImplLoop, Actions: c.N, Summary: end}}
		}
		return Verdict{}
	}}
}

// steer is the repeats' judgement of one result; the hint on the last
// failed edit is added after the detector has seen the result, so advice
// that varies does not hide a repeat.
func (l *implLoop) steer(detector *workspace.ActionLoop, act Action, signature string, result *string) string {
	hint := l.tree.hint
	l.tree.hint = ""
	defer func() {
		if hint != "" {
			*result += "\n" + hint
		}
	}()
	if repeated, count := detector.Record(act.Action, signature, *result); repeated {
		if count > loopThreshold {
			return fmt.Sprintf("repeated the same %s action %d times with the same result, after a nudge", act.Action, count)
		}
		*result += fmt.Sprintf("\nNOTE: this is the %s time you did this same %s and got this same result. Doing it again will not help: %s",
			ordinal(count), act.Action, suggestion(act.Action))
	}
	switch {
	case l.tree.failStreak >= failedEditLimit:
		return fmt.Sprintf("%d edits in a row did not apply", l.tree.failStreak)
	case l.tree.failStreak >= failedEditNudge && strings.HasPrefix(*result, "error"):
		*result += fmt.Sprintf("\nNOTE: your last %d edits did not apply. Read the file again (read_file) and copy the lines exactly, or change a smaller part.", l.tree.failStreak)
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
// goes back to the model, summarised, up to FixRounds times (c.Result is
// what failed); then the attempt ends anyway and QA judges it. It returns
// nil when the loop goes on.
func (l *implLoop) finish(ctx context.Context, c *ToolCall) *runstate.ImplResult {
	done, feedback := l.gates.finishGates(ctx, c.act, c.N)
	if done != nil {
		return done
	}
	c.Result = feedback
	l.conv.note(c.Args, "RESULT of finish: not finished yet: "+feedback+"\nChange the code to fix the cause, then finish again: finishing again without a change ends the attempt.\n"+l.reminder())
	return nil
}
