package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// The doctor measures how fast the primary model answers, with one short
// call, because speed decides whether a run takes minutes or hours: every
// action, plan and review is a reply of a few hundred tokens, and a code
// reply may be a thousand or more.

// Typical reply sizes, in tokens, that the speed line turns into seconds.
const (
	actionReplyTokens = 300
	codeReplyTokens   = 1500
	speedProbeTokens  = 64
)

// slowTokensPerSecond: under this a run is slow enough to warn about (an
// action reply then takes over a minute).
const slowTokensPerSecond = 5.0

// speedProbe is the question the doctor asks: a reply the model cannot
// shorten much, with nothing to think about.
var speedProbe = []llm.Message{
	{Role: "system", Content: prompts.MarkerDoctor + ". Answer with the numbers only."},
	{Role: "user", Content: "Count from 1 to 30, separated by spaces."},
}

// speedCheck measures the primary model's generation speed (a local model
// only: a cloud call costs money and its speed is the provider's), and says
// what a run's replies will take at that speed.
func speedCheck(ctx context.Context, r *llm.Router, cfg *config.Config) *Check {
	role, err := cfg.ResolvedRole(config.RolePrimary)
	if err != nil || !r.Local(config.RolePrimary) {
		return nil
	}
	var first time.Duration
	ctx = llm.WithObserver(ctx, func(_ context.Context, n llm.Note) {
		if n.Kind == llm.NoteProgress && first == 0 {
			first = n.Elapsed
		}
	})
	zero := 0.0
	start := time.Now()
	resp, err := r.Chat(ctx, llm.Request{Role: config.RolePrimary, Label: "doctor", Messages: speedProbe, MaxTokens: speedProbeTokens, Temperature: &zero})
	took := time.Since(start)
	if err != nil {
		return &Check{"speed", "warn", fmt.Sprintf("%s did not answer a %d-token question: %s", role.Model, speedProbeTokens, causeOf(err)), llmHint(err)}
	}
	tps := resp.Usage.TokensPerSecond()
	if tps <= 0 {
		return &Check{"speed", "warn", fmt.Sprintf("%s answered in %s but reported no token counts: its speed is unknown", role.Model, took.Round(100*time.Millisecond)), ""}
	}
	// Each rate with its own tokens and seconds, as Ollama counts them: the
	// reply's tokens over the generation time, the prompt's over its reading.
	u := resp.Usage
	gen := u.GenDuration
	if gen <= 0 {
		gen = u.Elapsed
	}
	detail := fmt.Sprintf("%s: generates %.1f tokens/s (%d tokens in %s)", role.Model, tps, u.CompletionTokens, seconds(gen))
	if pps := u.PromptTokensPerSecond(); pps > 0 {
		detail += fmt.Sprintf(", reads the prompt at %.1f tokens/s (%d tokens in %s)", pps, u.PromptTokens, seconds(u.PromptDuration))
	}
	detail += fmt.Sprintf("; the call took %s, its first token after %s (loading the model included): an action reply (~%d tokens) takes ~%s, a code reply (~%d) ~%s",
		seconds(took), seconds(first), actionReplyTokens, secondsFor(actionReplyTokens, tps), codeReplyTokens, secondsFor(codeReplyTokens, tps))
	if tps < slowTokensPerSecond {
		return &Check{"speed", "warn", detail + ": a run will be slow",
			"a smaller model (--model qwen2.5-coder:7b), a GPU, or fewer layers on the CPU (roles.primary.options.num_gpu) speeds it up; a slow run stops at limits.max_wall_time"}
	}
	return &Check{"speed", "ok", detail, ""}
}

// seconds writes a duration of a short call readably: 0.21s, 1.5s, 12s.
func seconds(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func secondsFor(tokens int, tps float64) time.Duration {
	return (time.Duration(float64(tokens)/tps*float64(time.Second)) + time.Second/2).Round(time.Second)
}
