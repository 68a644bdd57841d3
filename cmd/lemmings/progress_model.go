package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/runview"
)

// What the progress view shows while a model call or the Implementor works:
// the status line counts the reply's tokens and their rate; plain output
// (piped, or lemmings log) gets a line per retry, re-ask, model error,
// action, check and gate, and a progress line every plainEvery of a long
// call. --verbose prints the models' text as it streams.

// plainEvery is how often a long call gets a progress line when the output
// is not a terminal (or is a stored log): often enough to see life, rarely
// enough to read.
const plainEvery = 15 * time.Second

func (p *progress) modelProgress(name string, data map[string]any) {
	c := &p.call
	switch name {
	case "llm_start":
		p.flushText()
		*c = modelCall{label: str(data["label"]), model: str(data["model"]), prompt: int(toFloat(data["prompt_tokens"])), active: true,
			lastPlain: p.now()}
	case "llm_progress":
		c.active = true
		c.label = firstOf(str(data["label"]), c.label)
		c.tokens = int(toFloat(data["tokens"]))
		c.tokPerS = toFloat(data["tokens_per_s"])
		if p.verbose {
			p.streamText(str(data["text"]))
		}
		if !p.live && !p.verbose && p.now().Sub(c.lastPlain) >= plainEvery {
			c.lastPlain = p.now()
			line := fmt.Sprintf("%s   %s: %s so far", p.elapsed(), firstOf(c.label, "model"), textutil.Count(c.tokens, "token"))
			if c.tokPerS > 0 { // one token has no rate yet
				line += fmt.Sprintf(", %.1f tok/s", c.tokPerS)
			}
			p.printf("%s", line)
		}
	case "llm_call":
		p.flushText()
		if v, ok := data["tokens_per_s"].(float64); ok && data["provider"] == "ollama" {
			p.tokPerS = v
		}
		if ms := toFloat(data["elapsed_ms"]); !p.live && ms >= float64(plainEvery/time.Millisecond) {
			p.printf("%s   %v: %v tokens in %s (%.1f tok/s)", p.elapsed(), data["label"], data["completion_tokens"],
				(time.Duration(ms) * time.Millisecond).Round(time.Second), toFloat(data["tokens_per_s"]))
		}
		*c = modelCall{}
	case "llm_retry":
		p.flushText()
		wait := time.Duration(toFloat(data["wait_ms"])) * time.Millisecond
		p.printf("%s   %v: retry (attempt %v in %s): %s", p.elapsed(), data["label"], data["attempt"], wait.Round(100*time.Millisecond), textutil.FirstLine(str(data["error"])))
		*c = modelCall{}
	case "reply_cut_off":
		p.flushText()
		p.printf("%s   %v: reply cut off at %v tokens (the reply limit): asked again for a shorter one", p.elapsed(), data["label"], data["tokens"])
	case "reply_runaway":
		p.flushText()
		p.printf("%s   %v: reply ran on until the server stopped it: asked again with varied sampling", p.elapsed(), data["label"])
	case "reply_unusable":
		p.flushText()
		p.printf("%s   %v: reply unusable (%s): asked again", p.elapsed(), data["label"], textutil.Clip(str(data["problem"]), 160))
	case "model_error":
		p.flushText()
		p.printf("%s   %v: model error: %s", p.elapsed(), data["label"], textutil.Clip(textutil.FirstLine(str(data["error"])), 300))
		*c = modelCall{}
	}
}

// workProgress prints what the Implementor did and what the run found.
func (p *progress) workProgress(name string, data map[string]any) {
	p.flushText()
	switch name {
	case "action":
		what := firstOf(str(data["path"]), str(data["pattern"]), str(data["query"]), str(data["gate"]))
		line := strings.TrimRight(fmt.Sprintf("%s   %v #%v %v %s", p.elapsed(), data["task"], data["n"], data["action"], what), " ")
		if r := str(data["result"]); r != "" {
			line += " → " + r
		}
		p.printf("%s", strings.TrimRight(line, " "))
	case "check":
		status := "passed"
		if data["passed"] != true {
			status = "FAILED: " + str(data["problem"])
		}
		p.printf("%s   check %s %s", p.elapsed(), joinAny(data["paths"]), status)
	case "implementor_gate":
		status := "passed"
		if data["passed"] != true {
			status = fmt.Sprintf("FAILED (exit %v)", data["exit_code"])
		}
		p.printf("%s   gate %v %s (in the attempt)", p.elapsed(), data["gate"], status)
	case "claim_overruled":
		p.printf("%s overruled: %v: %v", p.elapsed(), data["who"], data["why"])
	case "evidence":
		p.printf("%s evidence: %v", p.elapsed(), data["evidence"])
	}
}

// callState is the status line's view of the model call in flight.
func (p *progress) callState() string {
	c := p.call
	if !c.active {
		return ""
	}
	if c.tokens == 0 {
		s := "· waiting for " + firstOf(c.model, "the model")
		if c.prompt > 0 {
			s += fmt.Sprintf(" (prompt ~%.1fk tokens)", float64(c.prompt)/1000)
		}
		return s
	}
	if c.tokPerS <= 0 {
		return fmt.Sprintf("· %d tokens ·", c.tokens)
	}
	return fmt.Sprintf("· %d tokens · %.1f tok/s ·", c.tokens, c.tokPerS)
}

// streamText prints streamed model text (--verbose) line by line, so the
// status line is drawn only between whole lines.
func (p *progress) streamText(text string) {
	c := &p.call
	if !c.printedHeader {
		c.printedHeader = true
		p.printf("%s   %s says:", p.elapsed(), firstOf(c.label, "model"))
	}
	c.pending += text
	for {
		i := strings.IndexByte(c.pending, '\n')
		if i < 0 {
			return
		}
		p.printf("    │ %s", c.pending[:i])
		c.pending = c.pending[i+1:]
	}
}

// flushText ends a streamed text that did not end with a newline.
func (p *progress) flushText() {
	if p.call.pending != "" {
		p.printf("    │ %s", p.call.pending)
		p.call.pending = ""
	}
}

// endLine is a stored log's last word: how the run stood when it ended.
func (p *progress) endLine(ev graph.Event) {
	p.flushText()
	line := fmt.Sprintf("%s run ended: %s", p.elapsed(), ev.Status)
	if string(ev.Status) == string(nodes.RunPaused) {
		line += " (the line above says for what)" // the pause's own line gave the reason
	} else if ev.Reason != "" {
		line += " — " + ev.Reason
	} else if ev.Error != "" {
		line += " — " + textutil.FirstLine(ev.Error)
	}
	p.printf("%s", line)
}

// resumedLine marks in a stored log where a resume took the run up: a log
// that goes on after "run ended", or after no end at all (a crash), says why.
func (p *progress) resumedLine(ev graph.Event) {
	p.printf("%s %s", p.elapsed(), runview.ResumedText(ev))
	if p.resumeReset != nil { // noted by the resume before the run started
		p.resetLine(p.resumeReset)
		p.resumeReset = nil
	}
}

func (p *progress) resetLine(data map[string]any) {
	p.printf("%s   %s", p.elapsed(), runview.ResetText(data))
}

// now is the progress view's clock: the events' time in a stored log.
func (p *progress) now() time.Time {
	if p.replay {
		return p.clock
	}
	return time.Now()
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func joinAny(v any) string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, str(x))
	}
	return strings.Join(out, ", ")
}
