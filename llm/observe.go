package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// A model call on a slow local model takes minutes. An observer hears what
// happens inside it as it happens: the call starts, tokens arrive (count,
// tokens/s, the new text), a fault is retried, a reply is asked again for.
// lemmings turns these into events, so the terminal, `lemmings log` and
// `lemmings serve` show a run that works instead of one that looks hung.

// Note kinds.
const (
	NoteStart    = "llm_start"    // a request was sent; the server evaluates the prompt
	NoteProgress = "llm_progress" // tokens arrived (sent at most every ProgressEvery)
	NoteRetry    = "llm_retry"    // a transient fault; the request is sent again after Wait
	NoteReask    = "llm_reask"    // a reply could not be used and is asked again for (Stop, Problem)
)

// ProgressEvery is how often an observer hears of a streaming reply.
const ProgressEvery = time.Second

// Note is one thing that happened inside a model call.
type Note struct {
	Kind  string
	Role  string
	Label string
	Model string
	// Attempt is the request's attempt number (1 for the first).
	Attempt int
	// Progress: tokens received so far, their rate since the first one,
	// the time since the request was sent, and the text received since the
	// last progress note.
	Tokens          int
	TokensPerSecond float64
	Elapsed         time.Duration
	Text            string
	// Start: the prompt's estimated size and the window asked for (Ollama).
	PromptTokens int
	NumCtx       int
	// Retry: what failed, and the wait before the next attempt.
	Err     string
	Timeout bool
	Wait    time.Duration
	// Reask: why the reply was not used.
	Stop    StopReason
	Problem string
}

// Observer receives notes with the context of the call they belong to.
type Observer func(ctx context.Context, n Note)

type noteObserverKey struct{}

// WithObserver returns a context whose model calls report to o.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, noteObserverKey{}, o)
}

func observe(ctx context.Context, n Note) {
	if o, ok := ctx.Value(noteObserverKey{}).(Observer); ok && o != nil {
		o(ctx, n)
	}
}

func observed(ctx context.Context) bool {
	o, ok := ctx.Value(noteObserverKey{}).(Observer)
	return ok && o != nil
}

// meter follows one streaming request: it keeps the call's stall timer
// alive and tells the observer how the reply grows.
type meter struct {
	ctx      context.Context
	note     Note
	watch    *watchdog
	observed bool
	start    time.Time
	first    time.Time
	last     time.Time
	tokens   int
	chars    int
	// budget is the reply budget the request sent (max_tokens, Ollama's
	// num_predict); 0 when none was.
	budget int
	text   strings.Builder
}

// errOverBudget ends a stream that ran past its reply budget.
var errOverBudget = errors.New("the reply ran past its budget")

// A server should stop a reply at its budget; one that does not (a server
// trickling a token every 50 ms held a run until its wall time) is cut by
// lemmings. The server's tokens are not seen while it streams: a chunk
// counts as a token (Ollama sends one a chunk, OpenAI-compatible servers a
// few), with slack for a tokenizer that counts otherwise, and the text as
// a bound (maxCharsPerToken a token) when chunks are large.
const maxCharsPerToken = 32

// replyLimit is the budget with its slack: the most tokens lemmings lets
// a reply run to.
func replyLimit(budget int) int { return budget + max(64, budget/8) }

// overBudget reports whether the reply so far is past its budget.
func (m *meter) overBudget() bool {
	if m.budget <= 0 {
		return false
	}
	limit := replyLimit(m.budget)
	return m.tokens > limit || m.chars > limit*maxCharsPerToken
}

// budgetError is the error of a reply cut at its budget.
func (m *meter) budgetError() error {
	return fmt.Errorf("%w of %d tokens (max_tokens) and the server did not stop it: lemmings cut it after %d chunks, %d bytes", errOverBudget, m.budget, m.tokens, m.chars)
}

func newMeter(ctx context.Context, req Request, model string, promptTokens, numCtx int) *meter {
	m := &meter{ctx: ctx, watch: watchdogOf(ctx), observed: observed(ctx), start: time.Now(),
		note: Note{Role: req.Role, Label: req.Label, Model: model, Attempt: attemptOf(ctx)}}
	if m.observed {
		n := m.note
		n.Kind, n.PromptTokens, n.NumCtx = NoteStart, promptTokens, numCtx
		observe(ctx, n)
	}
	return m
}

// chunk counts one streamed piece of the reply (Ollama streams one token a
// piece; an OpenAI-compatible server may send a few).
func (m *meter) chunk(text string) {
	m.watch.touch()
	if text == "" {
		return
	}
	m.tokens++
	m.chars += len(text)
	if !m.observed {
		return
	}
	now := time.Now()
	m.text.WriteString(text)
	if m.first.IsZero() {
		m.first = now
		m.flush(now) // the first token: the prompt is evaluated
		return
	}
	if now.Sub(m.last) >= ProgressEvery {
		m.flush(now)
	}
}

func (m *meter) flush(now time.Time) {
	n := m.note
	n.Kind, n.Tokens, n.Elapsed, n.Text = NoteProgress, m.tokens, now.Sub(m.start), m.text.String()
	// A rate over less than half a second of generation says nothing.
	if gen := now.Sub(m.first); gen >= time.Second/2 && m.tokens > 1 {
		n.TokensPerSecond = float64(m.tokens-1) / gen.Seconds()
	}
	m.text.Reset()
	m.last = now
	observe(m.ctx, n)
}

// done sends what arrived since the last note.
func (m *meter) done() {
	if m.observed && m.text.Len() > 0 {
		m.flush(time.Now())
	}
}

// watchdog cancels a request when the server sends nothing for its
// timeout: the wait for the first token (prompt evaluation) and between
// tokens. A streaming reply that keeps coming is not cut off; its length is
// bounded by the reply budget, the run by its wall time.
type watchdog struct {
	mu      sync.Mutex
	timer   *time.Timer
	timeout time.Duration
	heard   bool // a first chunk came: the timeout is the wait between chunks
}

// errStalled is the cause a watchdog cancels a request with.
var errStalled = errors.New("the server sent nothing within the timeout")

func startWatchdog(ctx context.Context, timeout time.Duration) (context.Context, *watchdog, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{timeout: timeout}
	w.timer = time.AfterFunc(timeout, func() { cancel(errStalled) })
	stop := func() {
		w.mu.Lock()
		w.timer.Stop()
		w.mu.Unlock()
		cancel(context.Canceled)
	}
	return context.WithValue(ctx, watchdogKey{}, w), w, stop
}

type watchdogKey struct{}

func watchdogOf(ctx context.Context) *watchdog {
	w, _ := ctx.Value(watchdogKey{}).(*watchdog)
	return w
}

func (w *watchdog) touch() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.heard = true
	w.timer.Reset(w.timeout)
	w.mu.Unlock()
}

// expectFirst gives the wait for the first chunk: d when longer than the
// timeout (a long prompt read on a slow server), counted from now.
func (w *watchdog) expectFirst(d time.Duration) {
	if w == nil {
		return
	}
	w.mu.Lock()
	if !w.heard && d > w.timeout {
		w.timer.Reset(d)
	}
	w.mu.Unlock()
}

type attemptKey struct{}

func attemptOf(ctx context.Context) int {
	n, _ := ctx.Value(attemptKey{}).(int)
	return n
}

type labelKey struct{}

// labelOf is the label of the call ctx belongs to (Router.Chat sets it).
func labelOf(ctx context.Context) string {
	l, _ := ctx.Value(labelKey{}).(string)
	return l
}
