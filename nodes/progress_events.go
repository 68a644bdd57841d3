package nodes

import (
	"context"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
)

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
		ev := events.LLMStart{Label: n.Label, Role: n.Role, Model: n.Model, Attempt: n.Attempt}
		if n.PromptTokens > 0 {
			ev.PromptTokens, ev.NumCtx = n.PromptTokens, n.NumCtx
		}
		events.Emit(ctx, ev)
	case llm.NoteProgress:
		events.Emit(ctx, events.LLMProgress{Label: n.Label, Model: n.Model, Tokens: n.Tokens,
			TokensPerS: n.TokensPerSecond, ElapsedMS: n.Elapsed.Milliseconds(), Text: n.Text})
	case llm.NoteRetry:
		events.Emit(ctx, events.LLMRetry{Label: n.Label, Role: n.Role, Model: n.Model, Attempt: n.Attempt,
			WaitMS: n.Wait.Milliseconds(), Error: textutil.Clip(n.Err, 400)})
	case llm.NoteReask:
		name := events.KindReplyUnusable
		switch n.Stop {
		case llm.StopLength:
			name = events.KindReplyCutOff
		case llm.StopRunaway:
			name = events.KindReplyRunaway
		}
		events.Emit(ctx, events.Reask{Name: name, Label: n.Label, Tokens: n.Tokens, Problem: n.Problem, Reasked: true})
	}
}
