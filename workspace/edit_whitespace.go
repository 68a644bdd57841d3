package workspace

import (
	"strings"
	"unicode"
)

// fileLine is one line of a file: its text and its line ending ("\n",
// "\r\n", or "" for a last line without one).
type fileLine struct{ text, eol string }

func splitFileLines(content string) []fileLine {
	var lines []fileLine
	for content != "" {
		i := strings.IndexByte(content, '\n')
		if i < 0 {
			lines = append(lines, fileLine{text: content})
			break
		}
		text, eol := content[:i], "\n"
		if strings.HasSuffix(text, "\r") {
			text, eol = text[:len(text)-1], "\r\n"
		}
		lines = append(lines, fileLine{text: text, eol: eol})
		content = content[i+1:]
	}
	return lines
}

// blockLines splits an edit's text into lines without their endings.
func blockLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// collapseSpace trims a line and turns each run of inner whitespace into one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func trimRight(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

// A tolerance level: how lines are compared, and what it is reported as.
type tolerance struct {
	kind     string
	norm     func(string) string
	reindent bool
}

// tolerances lists the levels from the strictest.
func tolerances() [3]tolerance {
	return [3]tolerance{
		{MatchWhitespace, trimRight, false},
		{MatchIndentation, strings.TrimSpace, true},
		{MatchWhitespace, collapseSpace, true},
	}
}

// tolerantReplace matches the SEARCH lines against the file's lines at
// increasing tolerance. It returns an empty kind when nothing matched.
func tolerantReplace(content string, e Edit, eol string) (string, applied, error) {
	search := blockLines(e.Search)
	replace := blockLines(e.Replace)
	if e.Replace != "" && replace == nil {
		replace = []string{""} // a REPLACE of one empty line
	}
	// Models add or drop blank lines around a block; ignore them, and drop
	// the same blank lines from the replacement so none are added.
	lead := 0
	for lead < len(search) && isBlank(search[lead]) {
		lead++
	}
	trail := 0
	for trail < len(search)-lead && isBlank(search[len(search)-1-trail]) {
		trail++
	}
	search = search[lead : len(search)-trail]
	if len(search) == 0 {
		return "", applied{}, nil
	}
	for n := 0; n < lead && len(replace) > 0 && isBlank(replace[0]); n++ {
		replace = replace[1:]
	}
	for n := 0; n < trail && len(replace) > 0 && isBlank(replace[len(replace)-1]); n++ {
		replace = replace[:len(replace)-1]
	}

	lines := splitFileLines(content)
	if len(search) > len(lines) {
		return "", applied{}, nil
	}
	for _, tol := range tolerances() {
		want := make([]string, len(search))
		for i, s := range search {
			want[i] = tol.norm(s)
		}
		have := make([]string, len(lines))
		for i, l := range lines {
			have[i] = tol.norm(l.text)
		}
		var starts []int
		for i := 0; i+len(want) <= len(have); i++ {
			if equalAt(have, want, i) {
				starts = append(starts, i+1)
				if len(starts) > 50 {
					break
				}
			}
		}
		if len(starts) > 1 {
			return "", applied{}, &AmbiguousMatchError{Path: e.Path, Count: len(starts), Lines: starts}
		}
		if len(starts) == 0 {
			continue
		}
		at := starts[0] - 1
		matched := make([]string, len(search))
		for i := range search {
			matched[i] = lines[at+i].text
		}
		repl := replace
		if tol.reindent {
			repl = reindent(replace, search, matched, lines)
		}
		return spliceLines(lines, at, len(search), repl, eol), applied{kind: tol.kind, line: at + 1}, nil
	}
	return "", applied{}, nil
}

func equalAt(have, want []string, at int) bool {
	for j, w := range want {
		if have[at+j] != w {
			return false
		}
	}
	return true
}

// spliceLines replaces n lines at index at with repl. New lines take the
// file's line ending; the last one keeps the ending of the last replaced
// line, so a file without a final newline stays that way.
func spliceLines(lines []fileLine, at, n int, repl []string, eol string) string {
	var b strings.Builder
	for _, l := range lines[:at] {
		b.WriteString(l.text)
		b.WriteString(l.eol)
	}
	lastEOL := lines[at+n-1].eol
	for i, r := range repl {
		b.WriteString(r)
		if i == len(repl)-1 {
			b.WriteString(lastEOL)
		} else {
			b.WriteString(eol)
		}
	}
	for _, l := range lines[at+n:] {
		b.WriteString(l.text)
		b.WriteString(l.eol)
	}
	return b.String()
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeftFunc(s, unicode.IsSpace))]
}

// reindent shifts the replacement's indentation by the difference between
// the SEARCH lines and the file lines they matched: a common prefix added or
// removed when that explains every line, otherwise a conversion between
// indentation units (tabs, N spaces) with a depth offset.
func reindent(replace, search, matched []string, file []fileLine) []string {
	type pair struct{ s, f string }
	var pairs []pair
	for i := range search {
		if !isBlank(search[i]) {
			pairs = append(pairs, pair{leadingSpace(search[i]), leadingSpace(matched[i])})
		}
	}
	if len(pairs) == 0 {
		return replace
	}
	if p, ok := commonShift(len(pairs), func(i int) (string, string) { return pairs[i].s, pairs[i].f }); ok {
		if p == "" {
			return replace
		}
		return mapNonBlank(replace, func(l string) string { return p + l })
	}
	if p, ok := commonShift(len(pairs), func(i int) (string, string) { return pairs[i].f, pairs[i].s }); ok {
		return mapNonBlank(replace, func(l string) string {
			if strings.HasPrefix(l, p) {
				return l[len(p):]
			}
			return strings.TrimLeftFunc(l, unicode.IsSpace)
		})
	}
	texts := make([]string, len(file))
	for i, l := range file {
		texts[i] = l.text
	}
	fileUnit := indentUnit(texts)
	srcUnit := indentUnit(append(append([]string{}, search...), replace...))
	if fileUnit == "" || srcUnit == "" {
		return replace
	}
	offset := depth(pairs[0].f, fileUnit) - depth(pairs[0].s, srcUnit)
	return mapNonBlank(replace, func(l string) string {
		trimmed := strings.TrimLeftFunc(l, unicode.IsSpace)
		d := max(depth(leadingSpace(l), srcUnit)+offset, 0)
		return strings.Repeat(fileUnit, d) + trimmed
	})
}

// commonShift reports whether, for every pair (a, b), b == p + a for one p.
func commonShift(n int, pair func(int) (a, b string)) (string, bool) {
	prefix := ""
	for i := range n {
		a, b := pair(i)
		if !strings.HasSuffix(b, a) {
			return "", false
		}
		p := b[:len(b)-len(a)]
		if i == 0 {
			prefix = p
		} else if p != prefix {
			return "", false
		}
	}
	return prefix, true
}

func mapNonBlank(lines []string, f func(string) string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if isBlank(l) {
			out[i] = l
		} else {
			out[i] = f(l)
		}
	}
	return out
}

// indentUnit guesses the indentation unit of lines: a tab, or the smallest
// run of leading spaces; "" when nothing is indented.
func indentUnit(lines []string) string {
	spaces := 0
	for _, l := range lines {
		if isBlank(l) {
			continue
		}
		lead := leadingSpace(l)
		if lead == "" {
			continue
		}
		if strings.Contains(lead, "\t") {
			return "\t"
		}
		if n := len(lead); spaces == 0 || n < spaces {
			spaces = n
		}
	}
	if spaces == 0 {
		return ""
	}
	return strings.Repeat(" ", spaces)
}

// depth counts how many units deep an indentation is (a tab counts as one
// unit whatever the unit).
func depth(lead, unit string) int {
	if unit == "\t" {
		return strings.Count(lead, "\t") + strings.Count(lead, " ")/4
	}
	return strings.Count(lead, "\t") + strings.Count(lead, " ")/len(unit)
}
