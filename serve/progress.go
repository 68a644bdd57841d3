package serve

import (
	"fmt"
	"time"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// workText is the timeline's line for the events that show a run working:
// model calls (start, progress, retries, re-asks, errors) and the
// Implementor's actions, checks and gates. ok is false for other events.
func workText(name string, m map[string]any) (string, bool) {
	num := func(k string) float64 { f, _ := m[k].(float64); return f }
	str := func(k string) string {
		if v, ok := m[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	switch name {
	case "llm_start":
		text := fmt.Sprintf("%s asks %s", str("label"), str("model"))
		if p := num("prompt_tokens"); p > 0 {
			text += fmt.Sprintf(" (prompt ~%.0f tokens)", p)
		}
		return text, true
	case "llm_progress":
		return fmt.Sprintf("%s: %.0f tokens, %.1f tok/s", str("label"), num("tokens"), num("tokens_per_s")), true
	case "llm_call":
		return fmt.Sprintf("%s: %.0f prompt + %.0f reply tokens in %s", str("label"), num("prompt_tokens"), num("completion_tokens"),
			(time.Duration(num("elapsed_ms")) * time.Millisecond).Round(100*time.Millisecond)), true
	case "llm_retry":
		return fmt.Sprintf("%s: retry, attempt %.0f in %s: %s", str("label"), num("attempt"),
			(time.Duration(num("wait_ms")) * time.Millisecond).Round(100*time.Millisecond), textutil.FirstLine(str("error"))), true
	case "reply_cut_off":
		return fmt.Sprintf("%s: reply cut off at %.0f tokens, asked again", str("label"), num("tokens")), true
	case "reply_runaway":
		return fmt.Sprintf("%s: reply ran on until the server stopped it, asked again", str("label")), true
	case "reply_unusable":
		return fmt.Sprintf("%s: reply unusable (%s), asked again", str("label"), textutil.Clip(str("problem"), 160)), true
	case "model_error":
		return fmt.Sprintf("%s: %s", str("label"), textutil.Clip(textutil.FirstLine(str("error")), 300)), true
	case "action":
		what := str("path") + str("pattern") + str("query") + str("gate")
		return textutil.Clip(fmt.Sprintf("%s #%.0f %s %s → %s", str("task"), num("n"), str("action"), what, str("result")), 300), true
	case "check":
		if m["passed"] == true {
			return fmt.Sprintf("%s: check passed", str("task")), true
		}
		return fmt.Sprintf("%s: check FAILED: %s", str("task"), str("problem")), true
	case "implementor_gate":
		if m["passed"] == true {
			return fmt.Sprintf("%s: gate %s passed (in the attempt)", str("task"), str("gate")), true
		}
		return fmt.Sprintf("%s: gate %s FAILED, exit %.0f (in the attempt)", str("task"), str("gate"), num("exit_code")), true
	case "claim_overruled":
		return fmt.Sprintf("%s: %s", str("who"), str("why")), true
	case "evidence":
		return str("evidence"), true
	}
	return "", false
}
