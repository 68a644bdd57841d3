package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// promptLog appends one JSON line per model call. Every text in the line is
// redacted before it is written.
type promptLog struct {
	mu  sync.Mutex
	f   *os.File
	err error // the first write error, returned by close
}

func openPromptLog(path string) (*promptLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("llm: prompt log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("llm: prompt log: %w", err)
	}
	return &promptLog{f: f}, nil
}

// LogEntry is one line of the prompt log.
type LogEntry struct {
	Time       time.Time  `json:"time"`
	Role       string     `json:"role"`
	Label      string     `json:"label,omitempty"`
	Provider   string     `json:"provider"`
	Model      string     `json:"model"`
	Messages   []Message  `json:"messages"`
	Tools      []string   `json:"tools,omitempty"`
	Structured bool       `json:"structured,omitempty"`
	Reply      string     `json:"reply,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	DoneReason string     `json:"done_reason,omitempty"`
	NumCtx     int        `json:"num_ctx,omitempty"`
	Attempts   int        `json:"attempts"`
	Usage      struct {
		PromptTokens     int     `json:"prompt_tokens"`
		PromptCached     int     `json:"prompt_cached,omitempty"`
		PromptMS         int64   `json:"prompt_ms,omitempty"`
		CompletionTokens int     `json:"completion_tokens"`
		CostUSD          float64 `json:"cost_usd,omitempty"`
		ElapsedMS        int64   `json:"elapsed_ms"`
		TokensPerSecond  float64 `json:"tokens_per_s,omitempty"`
	} `json:"usage"`
	Error     string    `json:"error,omitempty"`
	ErrorKind ErrorKind `json:"error_kind,omitempty"`
}

// write appends one call; red is its texts redacted (redactCall).
func (l *promptLog) write(now time.Time, ro *role, label string, req Request, resp Response, callErr error, red *RedactedCall) {
	if l == nil {
		return
	}
	e := LogEntry{Time: now.UTC(), Role: ro.name, Label: label, Provider: ro.spec.Provider, Model: ro.spec.Model,
		Messages: red.Messages, Structured: len(req.Schema) > 0,
		Reply: red.Reply, DoneReason: resp.DoneReason, NumCtx: resp.NumCtx, Attempts: resp.Attempts, ToolCalls: red.ToolCalls}
	for _, t := range req.Tools {
		e.Tools = append(e.Tools, t.Name)
	}
	e.Usage.PromptTokens, e.Usage.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	e.Usage.PromptCached, e.Usage.PromptMS = resp.Usage.PromptCached, resp.Usage.PromptDuration.Milliseconds()
	e.Usage.CostUSD, e.Usage.ElapsedMS = resp.Usage.CostUSD, resp.Elapsed.Milliseconds()
	if ro.isLocal {
		e.Usage.TokensPerSecond = resp.Usage.TokensPerSecond()
	}
	if callErr != nil {
		e.Error = Redact(callErr.Error())
		var le *Error
		if errors.As(callErr, &le) {
			e.ErrorKind = le.Kind
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// One write per line: O_APPEND keeps lines whole even across processes.
	if _, err := l.f.Write(append(b, '\n')); err != nil && l.err == nil {
		l.err = fmt.Errorf("llm: prompt log: %w", err)
	}
}

func (l *promptLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.err, l.f.Close())
}
