package nodes

import (
	"regexp"
	"strings"
)

// failureLine matches a line that says what failed: a test's FAIL line, a
// panic, an error, an assertion, or a file:line location.
var failureLine = regexp.MustCompile(`(?i)(^\s*--- FAIL|panic:|error|fail|assert|expected|\bwant\b|\bgot\b|\S+\.\w+:\d+)`)

// FailureGist returns the lines after feedback's first (which names the
// gate or the verdict) that say why an attempt failed: at most three, each
// at most 160 characters, from the first that looks like a failure (a FAIL
// line, an error, an assertion, a file:line) or else from the start.
// The progress line and the report show it, so that the failing assertion
// is not only in events.jsonl.
func FailureGist(feedback string) []string {
	var lines []string
	for _, l := range strings.Split(feedback, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " \t\r"))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	lines = lines[1:]
	from := 0
	for i, l := range lines {
		if failureLine.MatchString(l) {
			from = i
			break
		}
	}
	var out []string
	for _, l := range lines[from:min(from+3, len(lines))] {
		out = append(out, clip(l, 160))
	}
	return out
}
