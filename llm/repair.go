package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kaptinlin/jsonrepair"
)

// repairJSON turns almost-JSON into JSON. kaptinlin/jsonrepair (a port of the
// well-kept JavaScript jsonrepair) does most of the work: trailing commas,
// single quotes, unquoted keys, // and /* */ comments, Python literals,
// missing commas, truncated strings and brackets. Where it gives up, a
// pre-pass fixes what it does not handle — # comments, doubled commas,
// raw control characters and bad escapes in strings — and it tries again.
// A cheap single pass handles the commonest faults first. The result is
// checked: only valid JSON comes back.
func repairJSON(s string) ([]byte, error) {
	if err := checkSize(s); err != nil {
		return nil, err
	}
	// The common faults of model output have a cheap fix; the full parser
	// costs ~100 µs per KB, so try the cheap one first.
	if light := lightRepair(s); json.Valid([]byte(light)) {
		return compactJSON([]byte(light)), nil
	}
	// The parser below recurses per bracket: bound the depth first.
	if err := checkDepth(s); err != nil {
		return nil, err
	}
	out, err := safeRepair(s)
	if err == nil {
		return out, nil
	}
	if out2, err2 := safeRepair(normalizeAlmostJSON(s)); err2 == nil {
		return out2, nil
	}
	return nil, err
}

// safeRepair runs jsonrepair, converting a panic into an error (the library
// is a parser of hostile input; lemmings must not crash on a model's reply).
func safeRepair(s string) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("repair panicked: %v", r)
		}
	}()
	fixed, err := jsonrepair.Repair(s)
	if err != nil {
		return nil, err
	}
	if !json.Valid([]byte(fixed)) {
		return nil, errors.New("repair produced invalid JSON")
	}
	return compactJSON([]byte(fixed)), nil
}

// normalizeAlmostJSON fixes, outside a full parse, the faults jsonrepair
// rejects: "#" line comments, doubled commas, raw control characters and
// invalid escapes inside double-quoted strings.
func normalizeAlmostJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote == '"' {
			switch {
			case c == '\\':
				if i+1 >= len(s) {
					b.WriteString(`\\`)
					continue
				}
				n := s[i+1]
				switch {
				case strings.IndexByte(`"\/bfnrt`, n) >= 0:
					b.WriteByte(c)
					b.WriteByte(n)
					i++
				case n == 'u' && i+5 < len(s) && isHex4(s[i+2:i+6]):
					b.WriteString(s[i : i+6])
					i += 5
				default:
					b.WriteString(`\\`)
				}
			case c == '"':
				quote = 0
				b.WriteByte(c)
			case c < 0x20:
				switch c {
				case '\n':
					b.WriteString(`\n`)
				case '\t':
					b.WriteString(`\t`)
				case '\r':
					b.WriteString(`\r`)
				default:
					fmt.Fprintf(&b, `\u%04x`, c)
				}
			default:
				b.WriteByte(c)
			}
			continue
		}
		if quote == '\'' {
			if c == '\\' && i+1 < len(s) {
				b.WriteByte(c)
				b.WriteByte(s[i+1])
				i++
				continue
			}
			if c == '\'' {
				quote = 0
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
			b.WriteByte(c)
		case '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			if i < len(s) {
				b.WriteByte('\n')
			}
		case ',':
			b.WriteByte(c)
			// Swallow further commas separated only by space.
			j := i + 1
			for j < len(s) && (s[j] == ',' || s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			b.WriteString(strings.ReplaceAll(s[i+1:j], ",", ""))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// lightRepair fixes in one pass, outside strings, trailing and doubled
// commas, comments
// (//, /* */, #) and Python's True/False/None, and inside strings raw
// control characters. It changes nothing a JSON parser would accept, so its
// output is either the intended JSON or still invalid.
func lightRepair(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case c == '\\' && i+1 < len(s):
				b.WriteByte(c)
				b.WriteByte(s[i+1])
				i++
			case c == '"':
				inString = false
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				fmt.Fprintf(&b, `\u%04x`, c)
			default:
				b.WriteByte(c)
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			b.WriteByte(c)
		case c == '#' || c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 3
			}
			b.WriteByte(' ')
		case c == ',':
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if j == len(s) || s[j] == '}' || s[j] == ']' || s[j] == ',' {
				continue
			}
			b.WriteByte(c)
		case c == 'T' && wordAt(s, i, "True"):
			b.WriteString("true")
			i += 3
		case c == 'F' && wordAt(s, i, "False"):
			b.WriteString("false")
			i += 4
		case c == 'N' && wordAt(s, i, "None"):
			b.WriteString("null")
			i += 3
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// wordAt reports whether w stands alone at s[i:].
func wordAt(s string, i int, w string) bool {
	if !strings.HasPrefix(s[i:], w) {
		return false
	}
	isWord := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if i > 0 && isWord(s[i-1]) {
		return false
	}
	end := i + len(w)
	return end >= len(s) || !isWord(s[end])
}
