package nodes

import (
	"context"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
)

// What the Implementor does is shown as it happens: each action, each check
// after an edit, each gate, as events the terminal, `lemmings log` and
// `lemmings serve` show (a run that only says "implementor" for minutes
// looks hung).

// emitAction records one Implementor action and the first line of its result.
func emitAction(ctx context.Context, t *Task, n int, act implAction, result string) {
	data := map[string]any{"task": t.ID, "attempt": t.Attempt, "n": n, "action": act.Action,
		"result": textutil.Clip(textutil.FirstLine(strings.TrimSpace(result)), 160)}
	switch {
	case act.Path != "":
		data["path"] = act.Path
	case act.Pattern != "":
		data["pattern"] = textutil.Clip(act.Pattern, 80)
	case act.Query != "":
		data["query"] = textutil.Clip(act.Query, 80)
	case act.Gate != "":
		data["gate"] = act.Gate
	}
	graph.Emit(ctx, "action", data)
}

// emitCheck records the checks run after an edit: passed, or the problems
// the edit introduced.
func emitCheck(ctx context.Context, t *Task, paths []string, problems string) {
	graph.Emit(ctx, "check", map[string]any{"task": t.ID, "attempt": t.Attempt, "paths": paths, "passed": problems == "",
		"problem": textutil.Clip(textutil.FirstLine(problems), 200)})
}

// ObserveModels returns a context whose model calls are reported as run
// events while they run: llm_start (the prompt is being evaluated),
// llm_progress (tokens so far, tokens/s, the new text), llm_retry, and the
// replies asked again for (reply_cut_off, reply_runaway, reply_unusable),
// each stamped when it happens.
func ObserveModels(ctx context.Context) context.Context {
	return llm.WithObserver(ctx, emitNote)
}

func emitNote(ctx context.Context, n llm.Note) {
	switch n.Kind {
	case llm.NoteStart:
		data := map[string]any{"label": n.Label, "role": n.Role, "model": n.Model, "attempt": n.Attempt}
		if n.PromptTokens > 0 {
			data["prompt_tokens"], data["num_ctx"] = n.PromptTokens, n.NumCtx
		}
		graph.Emit(ctx, n.Kind, data)
	case llm.NoteProgress:
		graph.Emit(ctx, n.Kind, map[string]any{"label": n.Label, "model": n.Model, "tokens": n.Tokens,
			"tokens_per_s": n.TokensPerSecond, "elapsed_ms": n.Elapsed.Milliseconds(), "text": n.Text})
	case llm.NoteRetry:
		graph.Emit(ctx, n.Kind, map[string]any{"label": n.Label, "role": n.Role, "model": n.Model, "attempt": n.Attempt,
			"wait_ms": n.Wait.Milliseconds(), "error": textutil.Clip(n.Err, 400)})
	case llm.NoteReask:
		name := "reply_unusable"
		switch n.Stop {
		case llm.StopLength:
			name = "reply_cut_off"
		case llm.StopRunaway:
			name = "reply_runaway"
		}
		graph.Emit(ctx, name, map[string]any{"label": n.Label, "tokens": n.Tokens, "problem": n.Problem, "reasked": true})
	}
}
