package implementor

import (
	"context"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Interceptors carry the tool loop's optional behaviour around its model and
// tool calls, so the loop itself only asks, runs and notes. Each hook may be
// nil. Every hook of a kind runs in the chain's order (implLoop.chain); the first
// that ends the attempt or answers for the call stops the rest of that kind.
type Interceptor struct {
	Name string
	// BeforeModel runs before the model is asked for the next action; it
	// may set the sampling's variation, or end the attempt (an Answer is
	// not taken here).
	BeforeModel func(ctx context.Context, c *ModelCall) Verdict
	// AfterModel sees the reply (or the model's error) before the loop acts
	// on it: it may take another action from it (clearing Err), answer it
	// with a note the model reads instead (Verdict.Answer), or end the
	// attempt.
	AfterModel func(ctx context.Context, c *ModelCall) Verdict
	// BeforeTool runs before an action runs: it may answer for it (the
	// action does not run, Answer is its result) or end the attempt.
	BeforeTool func(ctx context.Context, c *ToolCall) Verdict
	// AfterTool sees the action's result (c.Result, which it may add to)
	// before the model reads it, or ends the attempt (an Answer is not
	// taken here). An action that ended the attempt has no after.
	AfterTool func(ctx context.Context, c *ToolCall) Verdict
}

// Verdict is what a hook decides; the zero Verdict lets the call go on.
type Verdict struct {
	// End ends the attempt with this result.
	End *runstate.ImplResult
	// Answer short-circuits the call: after a model call it is what the
	// model reads back instead of its reply being acted on (the loop asks
	// again); before a tool call it is the action's result.
	Answer string
}

func (v Verdict) stops() bool { return v.End != nil || v.Answer != "" }

// ModelCall is one ask for the next action of the tool loop.
type ModelCall struct {
	// N is the number of the action asked for (1-based).
	N int
	// Variation > 0 varies the sampling (set before the call).
	Variation int
	// Reply and Err are the model's answer (after the call). A hook that
	// finds a usable action in a failed reply clears Err.
	Reply llm.Response
	Err   error
	// act is the action the reply holds.
	act Action
}

// Action is the name of the action the reply holds ("" when none).
func (c *ModelCall) Action() string { return c.act.Action }

// ToolCall is one action of the tool loop.
type ToolCall struct {
	N      int
	Action string
	// Args is the action as the conversation records it (its JSON, or
	// the code of a text-protocol edit).
	Args string
	// Result is what the model reads back (after the call).
	Result string
	// Ends: an action that may end the attempt (finish, blocked, ask).
	Ends bool
	act  Action
	// signature is what the repeat detector compares (Args, or the code).
	signature string
}

// chain is the Implementor's own interceptors in the order they run,
// followed by extra (Deps.Interceptors):
//
//  1. wall time: no action starts past limits.max_wall_time
//  2. variation: runaway replies vary the next sampling
//  3. prose edits: SEARCH/REPLACE blocks written as prose are taken
//  4. reply format: an unusable reply, or one cut at the reply limit that
//     carries code, is answered with what was wrong (maxBadReplies in a row
//     end the attempt)
//  5. progress: each action as an event while it happens
//  6. finish gates: a finish on code the gates just failed on ends the
//     attempt instead of running them again
//  7. repeats: the same action with the same result is nudged, then ends
//     the attempt; so do edits that keep failing
func (l *implLoop) chain(extra ...Interceptor) []Interceptor {
	return append([]Interceptor{wallTime(l), variation(), proseEdits(), replyFormat(l), progress(l),
		finishOnFailedGates(l), repeats(l)}, extra...)
}

func beforeModel(ctx context.Context, chain []Interceptor, c *ModelCall) Verdict {
	for _, i := range chain {
		if i.BeforeModel != nil {
			if v := i.BeforeModel(ctx, c); v.End != nil {
				return v
			}
		}
	}
	return Verdict{}
}

func afterModel(ctx context.Context, chain []Interceptor, c *ModelCall) Verdict {
	for _, i := range chain {
		if i.AfterModel != nil {
			if v := i.AfterModel(ctx, c); v.stops() {
				return v
			}
		}
	}
	return Verdict{}
}

func beforeTool(ctx context.Context, chain []Interceptor, c *ToolCall) Verdict {
	for _, i := range chain {
		if i.BeforeTool != nil {
			if v := i.BeforeTool(ctx, c); v.stops() {
				return v
			}
		}
	}
	return Verdict{}
}

func afterTool(ctx context.Context, chain []Interceptor, c *ToolCall) Verdict {
	for _, i := range chain {
		if i.AfterTool != nil {
			if v := i.AfterTool(ctx, c); v.End != nil {
				return v
			}
		}
	}
	return Verdict{}
}
