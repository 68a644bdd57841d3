package termprogress

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/eval"

	"github.com/lemmings-dev/lemmings/internal/termsafe"
)

// Eval shows an eval going: a live bar on a terminal, one plain line per
// finished exercise when piped, one JSON line per exercise with --json. Its
// Plan, Start and Result are eval.Options' OnPlan, OnStart and OnResult.
type Eval struct {
	mu      sync.Mutex
	w       io.Writer
	live    bool
	json    bool
	began   time.Time
	total   int
	done    int
	passed  int
	failed  int
	skipped int
	errors  int
	running map[string]time.Time
	lastLen int
	ticker  *time.Ticker
	stop    chan struct{}
}

// NewEval shows an eval to w.
func NewEval(w io.Writer, jsonOut bool) *Eval {
	p := &Eval{w: w, json: jsonOut, live: !jsonOut && IsTerminal(w), began: time.Now(), running: map[string]time.Time{}}
	if p.live {
		// The bar's clock moves while a long exercise runs.
		p.ticker, p.stop = time.NewTicker(time.Second), make(chan struct{})
		go func() {
			for {
				select {
				case <-p.ticker.C:
					p.mu.Lock()
					p.bar()
					p.mu.Unlock()
				case <-p.stop:
					return
				}
			}
		}()
	}
	return p
}

// Plan: total exercises, resumed of them already done.
func (p *Eval) Plan(total, resumed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.done = total, resumed
	switch {
	case p.json:
		p.jsonLine(map[string]any{"kind": "plan", "exercises": total, "resumed": resumed})
	case resumed > 0:
		p.line(fmt.Sprintf("resuming: %d of %d exercises already done", resumed, total))
	default:
		p.line(fmt.Sprintf("%d exercises", total))
	}
}

// Start: an exercise began.
func (p *Eval) Start(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[id] = time.Now()
	if p.json {
		p.jsonLine(map[string]any{"kind": "start", "id": id})
	}
	p.bar()
}

// Result: an exercise ended.
func (p *Eval) Result(r eval.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, r.ID)
	p.done++
	switch r.Status {
	case eval.StatusPassed:
		p.passed++
	case eval.StatusFailed:
		p.failed++
	case eval.StatusSkipped:
		p.skipped++
	default:
		p.errors++
	}
	if p.json {
		b, _ := json.Marshal(r)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["kind"] = "exercise"
		delete(m, "test_output")
		p.jsonLine(m)
		return
	}
	what := r.Status
	switch {
	case r.Status == eval.StatusPassed:
		what = fmt.Sprintf("passed (attempt %d)", r.PassedAttempt)
	case r.Reason != "":
		what += ": " + r.Reason
	}
	if r.Fix != "" && r.Status == eval.StatusSkipped {
		what += " — fix: " + r.Fix
	}
	extra := ""
	if r.Status != eval.StatusSkipped {
		extra = fmt.Sprintf(" [%s, %d tokens]", (time.Duration(r.WallSeconds * float64(time.Second))).Round(100*time.Millisecond), r.Tokens())
	}
	p.line(fmt.Sprintf("[%*d/%d] %-32s %s%s", len(fmt.Sprint(p.total)), p.done, p.total, r.ID, what, extra))
	p.bar()
}

// line prints a plain line above the live bar.
func (p *Eval) line(s string) {
	if p.live && p.lastLen > 0 {
		termsafe.Control(p.w, "\r\033[K")
		p.lastLen = 0
	}
	fmt.Fprintln(p.w, s)
}

func (p *Eval) jsonLine(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(p.w, "%s\n", b)
}

const barWidth = 24

func (p *Eval) bar() {
	if !p.live || p.total == 0 {
		return
	}
	filled := barWidth * p.done / p.total
	elapsed := time.Since(p.began).Round(time.Second)
	s := fmt.Sprintf("[%s%s] %d/%d · ✓ %d ✗ %d", strings.Repeat("█", filled), strings.Repeat("░", barWidth-filled), p.done, p.total, p.passed, p.failed)
	if p.skipped > 0 {
		s += fmt.Sprintf(" skipped %d", p.skipped)
	}
	if p.errors > 0 {
		s += fmt.Sprintf(" errors %d", p.errors)
	}
	s += fmt.Sprintf(" · %s", elapsed)
	if n := len(p.running); n > 0 {
		s += fmt.Sprintf(" · running %d", n)
	}
	termsafe.Control(p.w, "\r\033[K")
	fmt.Fprint(p.w, s)
	p.lastLen = len(s)
}

// Close ends the live bar.
func (p *Eval) Close() {
	if p.ticker != nil {
		p.ticker.Stop()
		close(p.stop)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.lastLen > 0 {
		fmt.Fprintln(p.w)
		p.lastLen = 0
	}
}
