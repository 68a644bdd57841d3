package workspace

import (
	"strings"
)

// How an edit was matched, reported in EditResult.Match.
const (
	MatchExact       = "exact"       // the SEARCH text found byte for byte
	MatchWhitespace  = "whitespace"  // equal but for trailing or inner whitespace, or line endings
	MatchIndentation = "indentation" // equal but for indentation; the replacement was re-indented
	MatchCreate      = "create"      // empty SEARCH on an empty or new file
	MatchAppend      = "append"      // empty SEARCH on an existing file
)

// applied describes where and how an edit landed.
type applied struct {
	kind string
	line int // 1-based first line of the change
}

// ApplyEdit applies one edit to content. The SEARCH text must match exactly
// one place: first byte for byte (a SEARCH of whole lines must start at a
// line start), then line by line tolerating trailing whitespace, CRLF line
// endings, runs of inner whitespace and a shifted indentation (the
// replacement is re-indented to fit the file). Several matches give an
// *AmbiguousMatchError; none gives a *NoMatchError showing the closest lines.
// An empty SEARCH returns REPLACE for empty content, or content with REPLACE
// appended.
func ApplyEdit(content string, e Edit) (string, error) {
	out, _, err := applyEdit(content, e)
	return out, err
}

func applyEdit(content string, e Edit) (string, applied, error) {
	eol := dominantEOL(content)
	if strings.TrimSpace(e.Search) == "" {
		repl := withEOL(e.Replace, eol)
		if content == "" {
			return repl, applied{kind: MatchCreate, line: 1}, nil
		}
		line := strings.Count(content, "\n") + 1
		if !strings.HasSuffix(content, "\n") {
			content += eol
		} else {
			line--
		}
		return content + repl, applied{kind: MatchAppend, line: line + 1}, nil
	}

	positions := exactPositions(content, e.Search)
	switch len(positions) {
	case 1:
		p := positions[0]
		repl := e.Replace
		if eol == "\r\n" && !strings.Contains(repl, "\r\n") {
			repl = withEOL(repl, eol) // keep a CRLF file CRLF
		}
		out := content[:p] + repl + content[p+len(e.Search):]
		return out, applied{kind: MatchExact, line: strings.Count(content[:p], "\n") + 1}, nil
	case 0:
	default:
		lines := make([]int, len(positions))
		for i, p := range positions {
			lines[i] = strings.Count(content[:p], "\n") + 1
		}
		return "", applied{}, &AmbiguousMatchError{Path: e.Path, Count: len(positions), Lines: lines}
	}

	out, info, err := tolerantReplace(content, e, eol)
	if err != nil || info.kind != "" {
		return out, info, err
	}
	return "", applied{}, noMatch(content, e)
}

// exactPositions returns the offsets where search occurs (overlaps
// included). A SEARCH of whole lines (ending in a newline) only counts
// where it starts a line, so it cannot land in the middle of one.
func exactPositions(content, search string) []int {
	wholeLines := strings.HasSuffix(search, "\n")
	var pos []int
	for from := 0; from <= len(content)-len(search); {
		i := strings.Index(content[from:], search)
		if i < 0 {
			break
		}
		p := from + i
		if !wholeLines || p == 0 || content[p-1] == '\n' {
			pos = append(pos, p)
			if len(pos) > 50 {
				break // enough to say it is ambiguous
			}
		}
		from = p + 1
	}
	return pos
}

// dominantEOL is "\r\n" when most line endings of content are CRLF.
func dominantEOL(content string) string {
	n := strings.Count(content, "\n")
	crlf := strings.Count(content, "\r\n")
	if crlf > 0 && crlf*2 >= n {
		return "\r\n"
	}
	return "\n"
}

// withEOL rewrites the line endings of s to eol.
func withEOL(s, eol string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if eol == "\n" {
		return s
	}
	return strings.ReplaceAll(s, "\n", eol)
}
