package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// maxCandidates bounds how many top-level {…}/[…] spans are examined, so
// adversarial text cannot make extraction quadratic.
const maxCandidates = 32

// The bounds of a reply read as JSON. A reply is bounded by its reply
// budget; one far past it is a runaway or hostile server's. The repair
// parser recurses once per bracket, and Go's stack overflow is fatal (no
// recover): 2,000,000 "[" crashed lemmings. Both are checked in one linear
// pass before any recursive parse.
const (
	// MaxJSONBytes is the largest reply ExtractJSON reads.
	MaxJSONBytes = 8 << 20
	// MaxJSONDepth is the deepest nesting of brackets it repairs (replies
	// that are valid JSON are read by encoding/json, which has its own
	// limit and does not recurse on the stack to check it).
	MaxJSONDepth = 512
)

// BoundsError: a reply is too large or nests too deep to be read as JSON.
type BoundsError struct{ What string }

func (e *BoundsError) Error() string { return e.What }

// checkSize refuses a reply over MaxJSONBytes.
func checkSize(text string) error {
	if len(text) > MaxJSONBytes {
		return &BoundsError{fmt.Sprintf("the reply is %d bytes, over the %d lemmings reads as JSON (a runaway reply)", len(text), MaxJSONBytes)}
	}
	return nil
}

// checkDepth refuses text whose brackets nest deeper than MaxJSONDepth.
// Every bracket counts, in strings too: a repair may end a broken string
// earlier than a parser would, and the bound must hold whatever it does.
func checkDepth(text string) error {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '{', '[':
			if depth++; depth > MaxJSONDepth {
				return &BoundsError{fmt.Sprintf("the reply nests brackets more than %d deep (a runaway or hostile reply): not read", MaxJSONDepth)}
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// ExtractJSON recovers the JSON value in a model's reply: the reply itself
// when it is JSON; else the content of a ```json fence; else the largest
// balanced {…} or […] in the prose (a span that never closes runs to the end
// of the text, as a truncated reply does). When no candidate is valid JSON the
// best one is repaired: trailing commas, single quotes, unquoted keys,
// comments, Python literals, missing commas, unterminated strings and
// brackets. The result is always valid JSON; the error says why nothing could
// be recovered.
func ExtractJSON(text string) ([]byte, error) {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil, errors.New("the reply is empty")
	}
	if err := checkSize(trimmed); err != nil {
		return nil, err
	}
	if json.Valid([]byte(trimmed)) {
		return []byte(trimmed), nil
	}
	region := trimmed
	if fenced, ok := fenceContent(trimmed); ok {
		region = fenced
		if json.Valid([]byte(region)) {
			return []byte(region), nil
		}
	}
	spans := topLevelSpans(region)
	if len(spans) == 0 {
		return nil, fmt.Errorf("no JSON object or array in the reply (%d bytes starting %q)", len(trimmed), textutil.Clip(trimmed, 60))
	}
	// The payload is the largest valid span: prose may mention [1] or {x}.
	best := -1
	for i, s := range spans {
		if s.valid && (best < 0 || len(s.text) > len(spans[best].text)) {
			best = i
		}
	}
	if best >= 0 {
		return []byte(spans[best].text), nil
	}
	// Nothing valid: repair the largest span.
	for i, s := range spans {
		if best < 0 || len(s.text) > len(spans[best].text) {
			best = i
		}
	}
	out, err := repairJSON(spans[best].text)
	if err != nil {
		return nil, fmt.Errorf("no valid JSON in the reply and repair failed: %w", err)
	}
	return out, nil
}

// fenceContent returns the body of the first Markdown code fence whose
// content starts like JSON. An unclosed fence runs to the end (truncation).
func fenceContent(text string) (string, bool) {
	rest := text
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			return "", false
		}
		after := rest[i+3:]
		// Skip the info string ("json", "JSON", "jsonc"…) up to the newline.
		nl := strings.IndexByte(after, '\n')
		body := after
		if nl >= 0 && !strings.ContainsAny(after[:nl], "{[") {
			body = after[nl+1:]
		}
		end := strings.Index(body, "```")
		inner := body
		if end >= 0 {
			inner = body[:end]
		}
		inner = strings.TrimSpace(inner)
		if strings.HasPrefix(inner, "{") || strings.HasPrefix(inner, "[") {
			return inner, true
		}
		if end < 0 {
			return "", false
		}
		rest = body[end+3:]
	}
}

type span struct {
	text  string
	valid bool
}

// topLevelSpans finds the {…} and […] spans of text that are not inside one
// another. Strings (double- or single-quoted) are skipped so brackets in them
// do not count; a span left open runs to the end of the text.
func topLevelSpans(text string) []span {
	var out []span
	i := 0
	for i < len(text) && len(out) < maxCandidates {
		c := text[i]
		if c != '{' && c != '[' {
			i++
			continue
		}
		end := balancedEnd(text, i)
		s := text[i:end]
		out = append(out, span{text: s, valid: json.Valid([]byte(s))})
		if end <= i {
			break
		}
		i = end
	}
	return out
}

// balancedEnd returns the index just past the bracket closing the one at
// start, or len(text) when it never closes.
func balancedEnd(text string, start int) int {
	depth := 0
	var quote byte
	escaped := false
	for i := start; i < len(text); i++ {
		c := text[i]
		if quote != 0 {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == quote:
				quote = 0
			case c == '\n' && quote == '\'':
				// An apostrophe in prose is not a string.
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(text)
}

// compactJSON re-encodes valid JSON without insignificant space.
func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
