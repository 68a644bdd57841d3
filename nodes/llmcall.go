package nodes

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Model roles (config roles), distinct from the labels that name who asks.
const (
	RolePrimary    = "primary"
	RolePlanner    = "planner"
	RoleSummarizer = "summarizer"
)

// LabelSummarizer is the accounting label (and template) of the done-list
// summary.
const LabelSummarizer = "summarizer"

// call is one structured question to a model: the template to use, its data,
// and the context sections in their fixed order.
type call struct {
	Label    string // template name and accounting label
	Role     string
	Data     any
	Sections []llm.Section
	// Messages extends the composed prompt (a plan sent back).
	Messages []llm.Message
	// Budget overrides the label's token budget for the composed part.
	Budget int
	// Reply is the reply budget in tokens (num_predict): what this call's
	// answer needs, so the window is sized to the prompt and it. 0: the
	// label's (replyBudget).
	Reply int
	// State, when set, gives a local role's prompt the run's shared prefix
	// (sharedPrefix); ask sets it.
	State *runstate.State
}

// ask composes the prompt, asks for a T and folds the usage into the state.
// Usage is counted even when the answer is unusable: the tokens were spent.
func ask[T any](ctx context.Context, d *Deps, s *runstate.State, c call) (T, llm.Response, error) {
	var zero T
	if c.State == nil {
		c.State = s
	}
	req, err := d.compose(ctx, c)
	if err != nil {
		return zero, llm.Response{}, err
	}
	if req.Schema, err = schemaFor[T](d, s); err != nil {
		return zero, llm.Response{}, err
	}
	out, resp, err := llm.Structured[T](ctx, d.Model, req)
	account(ctx, s, d.Settings.Supervisors, c.Label, c.Role, resp)
	if err != nil {
		ev := events.ModelError{Label: c.Label, Error: err.Error()}
		if tokens, cut := llm.CutOff(err); cut {
			ev.Stop, ev.Tokens = string(llm.StopLength), tokens
		} else if llm.Runaway(err) {
			ev.Stop = string(llm.StopRunaway)
		}
		emitModelError(ctx, ev)
		return zero, resp, fmt.Errorf("%s: %w", c.Label, err)
	}
	emitCall(ctx, c.Label, resp)
	return out, resp, nil
}

// account folds a call's usage into the state; a cloud call's cost (an
// escalation, a disputed review, a cloud planner) is paid from the
// supervisor budget. Usage is counted even when the answer is unusable: the
// tokens were spent.
func account(ctx context.Context, s *runstate.State, sup supervisors.Settings, label, role string, resp llm.Response) {
	s.AddUsage(label, totals(resp.Usage))
	if resp.Usage.CostUSD > 0 && (role == supervisors.Role || role == RolePlanner) {
		supervisors.Spend(ctx, s, sup.BudgetUSD, resp.Usage.CostUSD)
	}
}

// compose builds the request of c. The prompt of a role the primary model (or
// the planner's) answers starts with the shared prefix of c.State
// (sharedPrefix). The others are composed on their own: a supervisor's, and
// the summarizer's, which a small model of its own answers (another runner,
// another cache), in a few hundred tokens.
func (d *Deps) compose(ctx context.Context, c call) (llm.Request, error) {
	role := c.Role
	if role == "" {
		role = RolePrimary
	}
	reply := c.Reply
	if reply <= 0 {
		reply = replyBudget(c.Label)
	}
	budget := d.Settings.Budget(c.Label)
	if c.Budget > 0 {
		budget = c.Budget
	}
	var p llm.Prompt
	var err error
	if c.State != nil && (role == RolePrimary || role == RolePlanner) {
		var sh llm.Shared
		if sh, err = d.sharedPrefix(ctx, c.State); err != nil {
			return llm.Request{}, fmt.Errorf("compose %s prompt: %w", c.Label, err)
		}
		p, err = composeAfter(d.Composer, sh, c.Label, c.Data, budget, c.Sections)
	} else {
		p, err = d.composePrompt(c.Label, c.Data, budget, c.Sections)
	}
	if err != nil {
		return llm.Request{}, err
	}
	if len(p.Dropped) > 0 {
		events.Emit(ctx, events.PromptPacked{Label: c.Label, Dropped: p.Dropped, Tokens: p.Tokens})
	}
	msgs := llm.JoinUserTurns(append(p.Messages, c.Messages...))
	return llm.Request{Role: role, Label: c.Label, Messages: msgs, MaxTokens: reply}, nil
}

// composeAfter composes label's prompt after the shared prefix sh.
func composeAfter(composer *llm.Composer, sh llm.Shared, label string, data any, budget int, sections []llm.Section) (llm.Prompt, error) {
	instr, err := instructionsSection(composer, label, data)
	if err != nil {
		return llm.Prompt{}, fmt.Errorf("compose %s prompt: %w", label, err)
	}
	p, err := composer.ComposeAfter(sh, label, data, budget, append(slices.Clip(sections), instr)...)
	if err != nil {
		return llm.Prompt{}, fmt.Errorf("compose %s prompt: %w", label, err)
	}
	return p, nil
}

// composePrompt composes label's prompt from its template, data and the
// context sections, closing with the template's instructions block.
func (d *Deps) composePrompt(label string, data any, budget int, sections []llm.Section) (llm.Prompt, error) {
	instr, err := instructionsSection(d.Composer, label, data)
	if err != nil {
		return llm.Prompt{}, fmt.Errorf("compose %s prompt: %w", label, err)
	}
	p, err := d.Composer.Compose(label, data, budget, append(slices.Clip(sections), instr)...)
	if err != nil {
		return llm.Prompt{}, fmt.Errorf("compose %s prompt: %w", label, err)
	}
	return p, nil
}

// emitModelError reports a failed model call, unless the run was stopped (a
// halt, the wall time, Ctrl-C): the call that stop cut off is no fault of
// the model, and the run's end says why it stopped.
func emitModelError(ctx context.Context, ev events.ModelError) {
	if stoppedByUser(ctx) {
		return
	}
	events.Emit(ctx, ev)
}

// stoppedByUser reports whether ctx ended by a stop asked for: a cause that
// wraps graph.ErrHalted, or a plain cancel (Ctrl-C). A deadline of its own
// (a node's timeout) is a fault.
func stoppedByUser(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	return errors.Is(context.Cause(ctx), graph.ErrHalted) || errors.Is(ctx.Err(), context.Canceled)
}

func emitCall(ctx context.Context, label string, resp llm.Response) {
	// CostUSD and TokensPerS are written only when above zero.
	events.Emit(ctx, events.LLMCall{
		Label: label, Model: resp.Model, Provider: resp.Provider,
		PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		ElapsedMS: resp.Elapsed.Milliseconds(), CostUSD: max(resp.Usage.CostUSD, 0), TokensPerS: max(resp.Usage.TokensPerSecond(), 0),
	})
}

func totals(u llm.Usage) runstate.UsageTotals {
	return runstate.UsageTotals{Calls: u.Calls, PromptTokens: u.PromptTokens, PromptCached: u.PromptCached, CompletionTokens: u.CompletionTokens, CostUSD: u.CostUSD, Elapsed: u.Elapsed}
}

// Reply budgets (tokens) of the structured answers, by label: what the answer
// needs, not what the window could hold. The JSON schemas bound every string
// and list (replies.go, reply_bounds.go), so a grammar-constrained answer fits
// its budget; a model that rambles inside the grammar is cut here, not after
// thousands of tokens. A role's max_tokens caps them all.
var replyBudgets = map[string]int{
	runstate.NodeScope:       1536,                          // a few milestones of a few tasks (scopeBounds)
	runstate.NodePlanner:     1280,                          // one task, a short carry-forward, the directives' fates
	runstate.NodeImplementor: implementor.ActionReplyTokens, // one action; its code comes in a call of its own
	runstate.NodeQA:          768,                           // a verdict per criterion and the feedback
	runstate.NodeAssessor:    512,
	LabelSummarizer:          256,
	prompts.Architect:        2048, // numbered edit instructions with the code to find
}

// replyBudget is the reply budget of a structured call by label (0: the
// role's max_tokens).
func replyBudget(label string) int { return replyBudgets[label] }

// plannerRole is the role that plans: the planner role when it has a model of
// its own, the primary once a cloud planner's budget is spent.
func (set Settings) plannerRole(s *runstate.State) string {
	r := set.PlannerRole
	if r == "" || (set.CloudPlanner && !budgetLeft(s, set.Supervisors)) {
		return RolePrimary
	}
	return r
}

// denied says whether a file must never leave the machine.
func (set Settings) denied(p string) bool {
	return config.Supervisors{Deny: set.Supervisors.Deny}.Denies(p)
}
