package nodes

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
)

// Model roles (config roles), distinct from the labels that name who asks.
const (
	RolePrimary    = "primary"
	RolePlanner    = "planner"
	RoleSummarizer = "summarizer"
	RoleSupervisor = "supervisor"
)

// call is one structured question to a model: the template to use, its data,
// and the context sections in their fixed order.
type call struct {
	Label    string // template name and accounting label
	Role     string
	Data     any
	Sections []llm.Section
	// Messages extends the composed prompt (the implementor's tool loop).
	Messages []llm.Message
	// Budget overrides the label's token budget for the composed part.
	Budget int
	// Variation > 0 varies the sampling (after runaway replies).
	Variation int
	// Prefix, when set, is the already composed start of the prompt (the
	// implementor's, built once per attempt): nothing is composed again.
	Prefix []llm.Message
}

// ask composes the prompt, asks for a T and folds the usage into the state.
// Usage is counted even when the answer is unusable: the tokens were spent.
func ask[T any](ctx context.Context, d *Deps, s *WorkflowState, c call) (T, llm.Response, error) {
	var zero T
	req, err := d.compose(ctx, c)
	if err != nil {
		return zero, llm.Response{}, err
	}
	req.Variation = c.Variation
	out, resp, err := llm.Structured[T](ctx, d.Model, req)
	s.AddUsage(c.Label, totals(resp.Usage))
	if resp.Usage.CostUSD > 0 && (c.Role == RoleSupervisor || c.Role == RolePlanner) {
		d.spend(ctx, s, resp.Usage.CostUSD) // escalations and a cloud planner share the supervisor budget
	}
	if err != nil {
		data := map[string]any{"label": c.Label, "error": err.Error()}
		if tokens, cut := llm.CutOff(err); cut {
			data["stop"], data["tokens"] = llm.StopLength, tokens
		} else if llm.Runaway(err) {
			data["stop"] = llm.StopRunaway
		}
		graph.Emit(ctx, "model_error", data)
		return zero, resp, fmt.Errorf("%s: %w", c.Label, err)
	}
	emitCall(ctx, c.Label, resp)
	return out, resp, nil
}

func (d *Deps) compose(ctx context.Context, c call) (llm.Request, error) {
	role := c.Role
	if role == "" {
		role = RolePrimary
	}
	if c.Prefix != nil {
		msgs := append(slices.Clone(c.Prefix), c.Messages...)
		return llm.Request{Role: role, Label: c.Label, Messages: msgs}, nil
	}
	budget := d.Settings.Budget(c.Label)
	if c.Budget > 0 {
		budget = c.Budget
	}
	p, err := d.composePrompt(c.Label, c.Data, budget, c.Sections)
	if err != nil {
		return llm.Request{}, err
	}
	if len(p.Dropped) > 0 {
		graph.Emit(ctx, "prompt_packed", map[string]any{"label": c.Label, "dropped": p.Dropped, "tokens": p.Tokens})
	}
	msgs := append(p.Messages, c.Messages...)
	return llm.Request{Role: role, Label: c.Label, Messages: msgs}, nil
}

// composePrompt composes label's prompt from its template, data and the
// context sections, closing with the template's instructions block.
func (d *Deps) composePrompt(label string, data any, budget int, sections []llm.Section) (llm.Prompt, error) {
	instr, err := d.instructionsSection(label, data)
	if err != nil {
		return llm.Prompt{}, fmt.Errorf("compose %s prompt: %w", label, err)
	}
	p, err := d.Composer.Compose(label, data, budget, append(slices.Clip(sections), instr)...)
	if err != nil {
		return llm.Prompt{}, fmt.Errorf("compose %s prompt: %w", label, err)
	}
	return p, nil
}

func emitCall(ctx context.Context, label string, resp llm.Response) {
	data := map[string]any{
		"label": label, "model": resp.Model, "provider": resp.Provider,
		"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens,
		"elapsed_ms": resp.Elapsed.Milliseconds(),
	}
	if resp.Usage.CostUSD > 0 {
		data["cost_usd"] = resp.Usage.CostUSD
	}
	if tps := resp.Usage.TokensPerSecond(); tps > 0 {
		data["tokens_per_s"] = tps
	}
	graph.Emit(ctx, "llm_call", data)
}

func totals(u llm.Usage) UsageTotals {
	return UsageTotals{Calls: u.Calls, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CostUSD: u.CostUSD, Elapsed: u.Elapsed}
}

// modelFault says whether err is the model's failure to answer usefully (bad
// JSON after the re-ask, or a prompt that cannot fit its window) rather than a
// system fault such as a server that is down. The workflow absorbs the first
// kind; the second fails the step.
func modelFault(err error) bool {
	var se *llm.StructuredError
	return errors.As(err, &se) || tooLarge(err) || llm.Runaway(err)
}

func tooLarge(err error) bool {
	var le *llm.Error
	return errors.As(err, &le) && le.Kind == llm.KindContextTooLarge
}
