// Package redact removes secrets from text before it leaves lemmings: the
// terminal, --json, lemmings serve's pages and streams, the run's files
// (events, prompts, board, report, checkpoints) and the coding CLI's prompt.
//
// A Redactor applies, in this order: the literal values it was taught (the
// repository's .env files, lemmings' own keys from the environment), then
// the rules (gitleaks' ~220, then lemmings' own for what gitleaks misses).
// Literals go first so that a rule never redacts half of a taught value and
// leaves the rest.
//
// One Redactor serves the process (Default): the secrets to hide are the
// process's (its environment) and its repository's, and the outputs are many
// packages deep (the prompt log in llm, the board in nodes, checkpoints in
// graph through a store option). Learn only adds, so concurrent users never
// lose a value another taught.
package redact

import (
	"crypto/sha256"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"sync"
)

// Redactor removes secrets from text. It is safe for concurrent use.
type Redactor struct {
	mu   sync.RWMutex
	lits []literal // longest first, so a value inside another never cuts it
	seen map[string]bool
	// roots are the repositories whose .env files were read (LearnRepo).
	roots map[string]bool
}

// literal is a value taught to the redactor and the mark that replaces it.
type literal struct{ value, mark string }

// New returns a Redactor with the rules and no literal values.
func New() *Redactor { return &Redactor{seen: map[string]bool{}} }

var std = New()

// Default is the process's Redactor: every output of lemmings uses it.
func Default() *Redactor { return std }

// String is Default().String(text).
func String(text string) string { return std.String(text) }

// String returns text with every secret replaced by [REDACTED:<what>]:
// a taught value by its name ($OPENROUTER_API_KEY, .env:DB_PASSWORD), a rule's
// finding by the rule's id (github-pat, aws-access-token, generic-api-key,
// openrouter-key, url-password…). Text without a secret comes back as the
// same string.
func (r *Redactor) String(text string) string {
	if text == "" {
		return text
	}
	return cachedRules(r.literals(text))
}

// Bytes is String for a byte slice; p itself is returned when nothing changed.
func (r *Redactor) Bytes(p []byte) []byte {
	s := string(p)
	out := r.String(s)
	if out == s {
		return p
	}
	return []byte(out)
}

// Clip redacts text, then cuts it to at most n bytes (on a rune boundary)
// with "…": cutting first would leave the start of a secret that no rule
// recognises any more.
func (r *Redactor) Clip(text string, n int) string {
	text = r.String(text)
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && !startsRune(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// MinLiteral is the shortest value Learn accepts: shorter ones ("1", "true",
// "dev") would cut ordinary words out of every output.
const MinLiteral = 8

// Learn teaches the redactor literal secret values; name says what each is
// (shown in the mark). Values shorter than MinLiteral, or that look like a
// path, a number or a placeholder, are ignored. It returns how many values
// were new.
func (r *Redactor) Learn(name string, values ...string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := 0
	for _, v := range values {
		v = strings.TrimSpace(v)
		if !literalWorthy(v) {
			continue
		}
		// The forms a value takes in JSON and HTML outputs count too.
		for _, form := range []string{v, jsonEscaped(v), htmlEscaped(v)} {
			if r.seen[form] {
				continue
			}
			r.seen[form] = true
			r.lits = append(r.lits, literal{value: form, mark: "[REDACTED:" + name + "]"})
			added++
		}
	}
	slices.SortStableFunc(r.lits, func(a, b literal) int { return len(b.value) - len(a.value) })
	return added
}

// literalWorthy rules out values that are not secrets of their own: short
// ones, paths, numbers, placeholders, booleans and references.
func literalWorthy(v string) bool {
	if len(v) < MinLiteral || strings.ContainsAny(v, "\n\r") {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "$") {
		return false
	}
	if reNumber.MatchString(v) || typeWords[strings.ToLower(v)] || strings.Contains(v, "${") || strings.Contains(v, "{{") ||
		strings.HasPrefix(v, "<") || strings.Trim(v, v[:1]) == "" {
		return false
	}
	switch strings.ToLower(v) {
	case "localhost", "production", "development", "changeme", "password", "redacted", "example":
		return false
	}
	return true
}

// jsonEscaped is v as it appears inside a JSON string.
func jsonEscaped(v string) string {
	var b strings.Builder
	for _, c := range v {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '<' || c == '>' || c == '&':
			fmt.Fprintf(&b, `\u%04x`, c) // encoding/json's HTML-safe escapes
		case c < 0x20:
			return v // control characters: not worth a form of their own
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// htmlEscaped is v as html/template writes it in a page's text.
func htmlEscaped(v string) string {
	return strings.ReplaceAll(template.HTMLEscapeString(v), "+", "&#43;")
}

// literals replaces every taught value in text.
func (r *Redactor) literals(text string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, l := range r.lits {
		if strings.Contains(text, l.value) {
			text = strings.ReplaceAll(text, l.value, l.mark)
		}
	}
	return text
}

// gitleaks' rules run at about 0.5 MB/s on code full of words like key and
// token, and a conversation's earlier messages are redacted again with every
// call that resends them (prompt log, cloud requests), as a run page is
// rendered again with every refresh: results of longer texts are remembered,
// by hash, in two generations of memoGen entries. The rules' result does not
// depend on the taught values (they are replaced before), so one memo serves
// every Redactor.
const (
	memoMinLen = 256
	memoGen    = 2048
)

var rulesMemo memo

func cachedRules(text string) string {
	if len(text) < memoMinLen {
		return rules(text)
	}
	key := sha256.Sum256([]byte(text))
	if out, ok := rulesMemo.get(key); ok {
		if out == nil {
			return text
		}
		return *out
	}
	out := rules(text)
	if out == text {
		rulesMemo.put(key, nil)
	} else {
		rulesMemo.put(key, &out)
	}
	return out
}

type memo struct {
	mu       sync.Mutex
	cur, old map[[32]byte]*string // nil value: the text had no secret
}

func (m *memo) get(k [32]byte) (*string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	v, ok := m.old[k]
	if ok {
		m.putLocked(k, v)
	}
	return v, ok
}

func (m *memo) put(k [32]byte, v *string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putLocked(k, v)
}

func (m *memo) putLocked(k [32]byte, v *string) {
	if m.cur == nil || len(m.cur) >= memoGen {
		m.old, m.cur = m.cur, make(map[[32]byte]*string, memoGen)
	}
	m.cur[k] = v
}
