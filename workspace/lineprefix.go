package workspace

import (
	"regexp"
	"strconv"
	"strings"
)

// viewPrefix is the "  12| " a numbered view puts before each line, which a
// weak model copies into its SEARCH text.
var viewPrefix = regexp.MustCompile(`^\s*(\d+)\|(?: |$)`)

// StripLineNumbers removes the "NNNN| " prefixes of a numbered view from an
// edit, when every non-empty SEARCH line carries one with rising numbers (so
// code that merely starts with a number is left alone). REPLACE lines lose
// the prefix too when most of them carry it. It reports whether it changed
// the edit.
func StripLineNumbers(e Edit) (Edit, bool) {
	search, ok := stripAll(e.Search, false)
	if !ok {
		return e, false
	}
	e.Search = search
	if replace, ok := stripAll(e.Replace, true); ok {
		e.Replace = replace
	}
	return e, true
}

// stripAll strips the prefix from every line. Strict: every non-empty line
// must carry it, with rising numbers. Lenient (REPLACE, where new lines have
// no number): most non-empty lines must carry it.
func stripAll(text string, lenient bool) (string, bool) {
	if strings.TrimSpace(text) == "" {
		return text, false
	}
	lines := strings.Split(text, "\n")
	carrying, nonEmpty, last := 0, 0, -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		nonEmpty++
		m := viewPrefix.FindStringSubmatch(l)
		if m == nil {
			if !lenient {
				return text, false
			}
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if !lenient && n <= last {
			return text, false
		}
		last = n
		carrying++
	}
	if carrying == 0 || (lenient && carrying*2 < nonEmpty) {
		return text, false
	}
	for i, l := range lines {
		if loc := viewPrefix.FindStringIndex(l); loc != nil {
			lines[i] = l[loc[1]:]
		}
	}
	return strings.Join(lines, "\n"), true
}
