// Package textutil holds the small string helpers that messages, reports and
// prompts across lemmings share, so that each is written once.
package textutil

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lemmings-dev/lemmings/internal/redact"
)

// ClipTrimmed is Clip of s without its surrounding blanks.
func ClipTrimmed(s string, n int) string { return Clip(strings.TrimSpace(s), n) }

// FirstNonEmpty is the first of vs with more than blanks, trimmed ("" if
// none).
func FirstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// Clip returns s cut to at most n bytes, on a rune boundary, with "…" added
// when it cut something. Limits are in bytes because they bound prompts, logs
// and files; a cut never leaves half a UTF-8 character. Text it cuts is
// redacted first (internal/redact): a cut through a secret would leave a
// start no rule recognises any more, while the whole secret is caught.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if s = redact.String(s); len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// FirstLine returns the first line of s with the white space around it
// trimmed, after leading blank lines: the headline of an error or a feedback.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

// JoinParagraphs joins the non-empty texts, trimmed, with a blank line
// between them.
func JoinParagraphs(texts ...string) string {
	var out []string
	for _, t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n\n")
}

// Count is n and the noun, in the plural unless n is 1: "1 task", "2 tasks".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
