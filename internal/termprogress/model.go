package termprogress

import (
	"fmt"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
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

func (p *Progress) modelProgress(data events.Payload) {
	c := &p.call
	switch d := data.(type) {
	case *events.LLMStart:
		p.flushText()
		*c = modelCall{label: d.Label, model: d.Model, prompt: d.PromptTokens, active: true, lastPlain: p.now()}
	case *events.LLMProgress:
		c.active = true
		c.label = firstOf(d.Label, c.label)
		c.tokens = d.Tokens
		c.tokPerS = d.TokensPerS
		if p.Verbose {
			p.streamText(d.Text)
		}
		if !p.live && !p.Verbose && p.now().Sub(c.lastPlain) >= plainEvery {
			c.lastPlain = p.now()
			line := fmt.Sprintf("%s   %s: %s so far", p.elapsed(), firstOf(c.label, "model"), textutil.Count(c.tokens, "token"))
			if c.tokPerS > 0 { // one token has no rate yet
				line += fmt.Sprintf(", %.1f tok/s", c.tokPerS)
			}
			p.printf("%s", line)
		}
	case *events.LLMCall:
		p.flushText()
		if d.TokensPerS > 0 && d.Provider == "ollama" {
			p.tokPerS = d.TokensPerS
		}
		if ms := d.ElapsedMS; !p.live && ms >= int64(plainEvery/time.Millisecond) {
			p.printf("%s   %v: %v tokens in %s (%.1f tok/s)", p.elapsed(), d.Label, d.CompletionTokens,
				(time.Duration(ms) * time.Millisecond).Round(time.Second), d.TokensPerS)
		}
		*c = modelCall{}
	case *events.LLMRetry:
		p.flushText()
		wait := time.Duration(d.WaitMS) * time.Millisecond
		p.printf("%s   %v: retry (attempt %v in %s): %s", p.elapsed(), d.Label, d.Attempt, wait.Round(100*time.Millisecond), textutil.FirstLine(d.Error))
		*c = modelCall{}
	case *events.Reask:
		p.flushText()
		switch d.Name {
		case events.KindReplyCutOff:
			p.printf("%s   %v: reply cut off at %v tokens (the reply limit): asked again for a shorter one", p.elapsed(), d.Label, d.Tokens)
		case events.KindReplyRunaway:
			p.printf("%s   %v: reply ran on until the server stopped it: asked again with varied sampling", p.elapsed(), d.Label)
		default:
			p.printf("%s   %v: reply unusable (%s): asked again", p.elapsed(), d.Label, textutil.Clip(d.Problem, 160))
		}
	case *events.ModelError:
		p.flushText()
		p.printf("%s   %v: model error: %s", p.elapsed(), d.Label, textutil.Clip(textutil.FirstLine(d.Error), 300))
		*c = modelCall{}
	}
}

// workProgress prints what the Implementor did and what the run found.
func (p *Progress) workProgress(data events.Payload) {
	p.flushText()
	switch d := data.(type) {
	case *events.Action:
		what := firstOf(d.Path, d.Pattern, d.Query, d.Gate)
		line := strings.TrimRight(fmt.Sprintf("%s   %v #%v %v %s", p.elapsed(), d.Task, d.N, d.Action, what), " ")
		if d.Result != "" {
			line += " → " + d.Result
		}
		p.printf("%s", strings.TrimRight(line, " "))
	case *events.Check:
		status := "passed"
		if !d.Passed {
			status = "FAILED: " + d.Problem
		}
		p.printf("%s   check %s %s", p.elapsed(), strings.Join(d.Paths, ", "), status)
	case *events.ImplementorGate:
		status := "passed"
		if !d.Passed {
			status = fmt.Sprintf("FAILED (exit %v)", d.ExitCode)
		}
		p.printf("%s   gate %v %s (in the attempt)", p.elapsed(), d.Gate, status)
	case *events.ClaimOverruled:
		p.printf("%s overruled: %v: %v", p.elapsed(), d.Who, d.Why)
	case *events.Evidence:
		p.printf("%s evidence: %v", p.elapsed(), d.Evidence)
	}
}

// callState is the status line's view of the model call in flight.
func (p *Progress) callState() string {
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
func (p *Progress) streamText(text string) {
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
func (p *Progress) flushText() {
	if p.call.pending != "" {
		p.printf("    │ %s", p.call.pending)
		p.call.pending = ""
	}
}

// endLine is a stored log's last word: how the run stood when it ended.
func (p *Progress) endLine(ev graph.Event) {
	p.flushText()
	if text, ok := runview.StandingSetText(ev); ok {
		p.printf("%s %s", p.elapsed(), text)
		return
	}
	line := fmt.Sprintf("%s run ended: %s", p.elapsed(), ev.Status)
	if string(ev.Status) == string(runstate.RunPaused) {
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
func (p *Progress) resumedLine(ev graph.Event) {
	p.printf("%s %s", p.elapsed(), runview.ResumedText(ev))
	if p.resumeReset != nil { // noted by the resume before the run started
		p.resetLine(p.resumeReset)
		p.resumeReset = nil
	}
}

func (p *Progress) resetLine(r *events.WorldReset) {
	p.printf("%s   %s", p.elapsed(), runview.ResetText(r))
}

// now is the progress view's clock: the events' time in a stored log.
func (p *Progress) now() time.Time {
	if p.replay {
		return p.clock
	}
	return time.Now()
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
