// Package termsafe is lemmings' one terminal-safe printer. Every text a
// model, a supervisor, a repository or a stored run wrote may hold
// terminal control sequences — OSC 52 writes the clipboard
// (ESC ] 52 ; c ; … BEL), others retitle the window, hide or rewrite lines
// — and bidirectional overrides (U+202E) that show a text in another
// order than it is. Before such a text reaches a terminal, a file name or
// a commit message it goes through String; a JSON output keeps it whole,
// with these characters escaped (\u001b, \u202e), never raw.
//
// What is removed: C0 controls but newline and tab (carriage return and
// backspace too: they rewrite what is shown), DEL, C1 controls
// (U+0080–U+009F), every ESC sequence whole (CSI, OSC, DCS, SOS, PM, APC
// up to their terminator or the end of the line; two-byte ones), bytes
// that are not UTF-8 (shown as U+FFFD), and the bidirectional controls
// U+061C, U+200E, U+200F, U+202A–U+202E and U+2066–U+2069.
package termsafe

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Bidi reports whether r is a bidirectional control (embedding, override,
// isolate or mark).
func Bidi(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// unsafe reports whether r is removed from a text (newline and tab stay).
func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7F:
		return true
	case r >= 0x80 && r <= 0x9F:
		return true
	}
	return Bidi(r)
}

// Clean reports whether s holds nothing String would remove.
func Clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7F {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafe(r) {
			return false
		}
		i += n
	}
	return true
}

// String returns s without control characters, ESC sequences and
// bidirectional controls; newlines and tabs stay.
func String(s string) string {
	if Clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1B {
			i += escLen(s[i:])
			continue
		}
		if c < utf8.RuneSelf {
			if !(c < 0x20 && c != '\n' && c != '\t' || c == 0x7F) {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == 0x9B, r == 0x9D, r == 0x90, r == 0x98, r == 0x9E, r == 0x9F:
			// C1 CSI, OSC, DCS, SOS, PM, APC: the sequence goes too.
			i += n + seqBody(s[i+n:], r == 0x9B)
			continue
		case !unsafe(r):
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Line is String on one line: newlines and tabs become spaces, runs of
// space are one, and the ends are trimmed (a commit subject, a name).
func Line(s string) string {
	return strings.Join(strings.Fields(String(s)), " ")
}

// escLen is the length of the ESC sequence s starts with.
func escLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return 2 + seqBody(s[2:], true)
	case ']', 'P', 'X', '^', '_':
		return 2 + seqBody(s[2:], false)
	}
	n := 1
	for n < len(s) && s[n] >= 0x20 && s[n] <= 0x2F { // intermediates
		n++
	}
	if n < len(s) && s[n] >= 0x30 && s[n] <= 0x7E { // final
		n++
	}
	return n
}

// seqBody is the length of a control sequence's body after its
// introducer: a CSI's parameters, intermediates and final byte; a
// string's (OSC, DCS…) text up to BEL or ST, included. Neither runs past
// a newline: an unterminated sequence does not take the lines after it.
func seqBody(s string, csi bool) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			return i
		case csi && c >= 0x40 && c <= 0x7E:
			return i + 1
		case csi && (c < 0x20 || c >= 0x7F):
			return i
		case !csi && c == 0x07:
			return i + 1
		case !csi && c == 0x1B && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case !csi && c == 0xC2 && i+1 < len(s) && s[i+1] == 0x9C: // C1 ST
			return i + 2
		}
	}
	return len(s)
}

// JSON escapes, in a JSON text, the characters String removes that JSON
// leaves raw (DEL, C1, bidirectional controls) as \uXXXX: the value is
// the same, and no terminal the JSON is printed on sees them. (JSON
// escapes C0 controls itself; outside strings none of these may appear.)
func JSON(b []byte) []byte {
	if jsonClean(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == 0x7F || r >= 0x80 && r <= 0x9F || Bidi(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func jsonClean(b []byte) bool {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			if b[i] == 0x7F {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x80 && r <= 0x9F || Bidi(r) {
			return false
		}
		i += n
	}
	return true
}

// Writer returns a writer that makes each Write safe before passing it on
// to w: a Write of JSON lines (--json) has its characters escaped (JSON),
// anything else is cleaned (String). Each Write is handled on its own, so
// a caller writes a line or a whole message at a time, as fmt.Fprintf
// does. lemmings' own control sequences (its live status line) go past it
// with Control.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct{ w io.Writer }

func (sw *writer) Write(p []byte) (int, error) {
	if _, err := sw.w.Write(safe(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the writer written to (to ask it whether it is a terminal).
func (sw *writer) Unwrap() io.Writer { return sw.w }

func safe(p []byte) []byte {
	trimmed := bytes.TrimSpace(p)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && jsonLines(p) {
		return JSON(p)
	}
	if s := string(p); !Clean(s) {
		return []byte(String(s))
	}
	return p
}

// jsonLines reports whether every non-blank line of p is valid JSON.
func jsonLines(p []byte) bool {
	for _, line := range bytes.Split(p, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 && !validJSON(line) {
			return false
		}
	}
	return true
}

// Control writes seq, one of lemmings' own control sequences ("\r\033[K"
// to redraw its live line), to the writer under w's wrappers, past their
// cleaning.
func Control(w io.Writer, seq string) {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	_, _ = io.WriteString(w, seq)
}
