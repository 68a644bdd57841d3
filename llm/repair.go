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
// The result is checked: only valid JSON comes back.
func repairJSON(s string) ([]byte, error) {
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
