package nodes

// Tests a remit asks for. A remit that names a test file either asks for a
// test to be written there ("each with a test in textstats_test.go", "add a
// test to test_stats.py") or names it as the check ("make stats_test.go
// pass", "do not change the tests"). Only the first makes the file one the
// task writes in: the direct attempt otherwise changes the one source file
// and shows the tests, so the test asked for was never written
// (Qwen2.5-Coder-1.5B on the textstats list remit).

import (
	"regexp"
	"strings"
)

// testWords may stand between the verb and "test": "a new unit test".
const testWords = `(?:(?:a|an|one|some|new|unit|more|its|their|own|matching|regression)\s+){0,3}`

var (
	// testAsk ends the words before a test file's name when they ask for a
	// test there: a verb of writing and "test(s)", or "with"/"and" and "a
	// test" (not "the tests", which are there already), a few words of what
	// it covers, then "in" or "to" — "write tests for Mean in", "each with
	// a test in", "add Mul to add.go and a test to".
	testAsk = regexp.MustCompile(`(?i)\b(?:(?:add|adding|write|writing|include|including|create|creating)\s+(?:the\s+)?` + testWords +
		`|(?:with|and|plus|also)\s+` + testWords + `)tests?\b[^.;:!?\n]{0,60}?\b(?:in|to|into|inside)\W*$`)
	// testRefused is a negation just before that verb: "do not add tests
	// to", "without adding a test in".
	testRefused = regexp.MustCompile(`(?i)\b(?:not|never|no|nor|without|don't|dont)\s+(?:\w+\s+)?$`)
	// testChecks follows a test file named as the check: "with the tests in
	// x_test.go passing", "… in x_test.go still pass".
	testChecks = regexp.MustCompile(`(?i)^\W*(?:(?:still|all|both|then)\s+)?(?:pass|passes|passing|passed|green|succeeds?|fails?|failing)\b`)
	// clauseEnd ends the words that belong to a file's name: a sentence
	// mark followed by a space, or a line break.
	clauseEnd = regexp.MustCompile(`[.;:!?](?:\s|$)|\n`)
)

// testsAsked are the test files the remit asks tests to be written in, in
// the order it names them.
func testsAsked(remit string) []string {
	var out []string
	for _, m := range remitFile.FindAllStringSubmatchIndex(remit, -1) {
		f := strings.TrimSuffix(remit[m[2]:m[3]], ".")
		if !isTestFile(f) || strings.Contains(f, "://") {
			continue
		}
		before := remit[:m[2]]
		if ends := clauseEnd.FindAllStringIndex(before, -1); len(ends) > 0 {
			before = before[ends[len(ends)-1][1]:]
		}
		ask := testAsk.FindStringIndex(before)
		if ask == nil || testRefused.MatchString(before[:ask[0]]) || testChecks.MatchString(remit[m[3]:]) {
			continue
		}
		out = appendNew(out, f)
	}
	return out
}
