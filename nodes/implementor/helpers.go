package implementor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// maxNeighbourBytes: a file larger than this is not shown as a neighbour
// of a change (the locator's limit on a source file).
const maxNeighbourBytes = 256 << 10

// rolePrimary is the model role the Implementor's calls go to.
const rolePrimary = "primary"

// CleanFiles keeps the plausible repository paths of a model's list.
func CleanFiles(fs []string) []string {
	var out []string
	for _, f := range fs {
		f = strings.TrimPrefix(strings.TrimSpace(f), "./")
		if f != "" && !strings.HasPrefix(f, "/") && !strings.Contains(f, "..") && !strings.ContainsAny(f, " \n") {
			out = append(out, f)
		}
	}
	return out
}

func usageOf(u llm.Usage) runstate.UsageTotals {
	return runstate.UsageTotals{Calls: u.Calls, PromptTokens: u.PromptTokens, PromptCached: u.PromptCached, CompletionTokens: u.CompletionTokens, CostUSD: u.CostUSD, Elapsed: u.Elapsed}
}

// request is a call after the attempt's prefix: the prompt is not composed
// again, so every call starts with the same bytes.
func request(prefix, msgs []llm.Message, reply int) llm.Request {
	if reply <= 0 {
		reply = ActionReplyTokens
	}
	return llm.Request{Role: rolePrimary, Label: runstate.NodeImplementor,
		Messages: llm.JoinUserTurns(append(slices.Clone(prefix), msgs...)), MaxTokens: reply}
}

// schemaOf is T's reply schema with the workflow's bounds.
func schemaOf[T any](p Prompts) (json.RawMessage, error) {
	raw, err := llm.SchemaFor[T]()
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	p.Bound(root)
	return json.Marshal(root)
}

// ask asks for a T after the prefix and counts the usage in the state, also
// of an unusable answer: the tokens were spent.
func ask[T any](ctx context.Context, d *Deps, s *runstate.State, req llm.Request) (T, llm.Response, error) {
	var zero T
	var err error
	if req.Schema, err = schemaOf[T](d.Prompts); err != nil {
		return zero, llm.Response{}, err
	}
	out, resp, err := llm.Structured[T](ctx, d.Model, req)
	s.AddUsage(req.Label, usageOf(resp.Usage))
	if err != nil {
		ev := events.ModelError{Label: req.Label, Error: err.Error()}
		if tokens, cut := llm.CutOff(err); cut {
			ev.Stop, ev.Tokens = string(llm.StopLength), tokens
		} else if llm.Runaway(err) {
			ev.Stop = string(llm.StopRunaway)
		}
		d.Prompts.Failed(ctx, ev)
		return zero, resp, fmt.Errorf("%s: %w", req.Label, err)
	}
	d.Prompts.Called(ctx, req.Label, resp)
	return out, resp, nil
}
