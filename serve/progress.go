package serve

import (
	"fmt"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// workText is the timeline's line for the events that show a run working:
// model calls (start, progress, retries, re-asks, errors) and the
// Implementor's actions, checks and gates. ok is false for other events.
func workText(data events.Payload) (string, bool) {
	switch d := data.(type) {
	case *events.LLMStart:
		text := fmt.Sprintf("%s asks %s", d.Label, d.Model)
		if d.PromptTokens > 0 {
			text += fmt.Sprintf(" (prompt ~%d tokens)", d.PromptTokens)
		}
		return text, true
	case *events.LLMProgress:
		return fmt.Sprintf("%s: %d tokens, %.1f tok/s", d.Label, d.Tokens, d.TokensPerS), true
	case *events.LLMCall:
		return fmt.Sprintf("%s: %d prompt + %d reply tokens in %s", d.Label, d.PromptTokens, d.CompletionTokens,
			(time.Duration(d.ElapsedMS) * time.Millisecond).Round(100*time.Millisecond)), true
	case *events.LLMRetry:
		return fmt.Sprintf("%s: retry, attempt %d in %s: %s", d.Label, d.Attempt,
			(time.Duration(d.WaitMS) * time.Millisecond).Round(100*time.Millisecond), textutil.FirstLine(d.Error)), true
	case *events.Reask:
		switch d.Name {
		case events.KindReplyCutOff:
			return fmt.Sprintf("%s: reply cut off at %d tokens, asked again", d.Label, d.Tokens), true
		case events.KindReplyRunaway:
			return fmt.Sprintf("%s: reply ran on until the server stopped it, asked again", d.Label), true
		}
		return fmt.Sprintf("%s: reply unusable (%s), asked again", d.Label, textutil.Clip(d.Problem, 160)), true
	case *events.ModelError:
		return fmt.Sprintf("%s: %s", d.Label, textutil.Clip(textutil.FirstLine(d.Error), 300)), true
	case *events.Action:
		return textutil.Clip(fmt.Sprintf("%s #%d %s %s → %s", d.Task, d.N, d.Action, d.What(), d.Result), 300), true
	case *events.Check:
		if d.Passed {
			return fmt.Sprintf("%s: check passed", d.Task), true
		}
		return fmt.Sprintf("%s: check FAILED: %s", d.Task, d.Problem), true
	case *events.ImplementorGate:
		if d.Passed {
			return fmt.Sprintf("%s: gate %s passed (in the attempt)", d.Task, d.Gate), true
		}
		return fmt.Sprintf("%s: gate %s FAILED, exit %d (in the attempt)", d.Task, d.Gate, d.ExitCode), true
	case *events.ClaimOverruled:
		return fmt.Sprintf("%s: %s", d.Who, d.Why), true
	case *events.Evidence:
		return d.Evidence, true
	}
	return "", false
}
