package nodes

import (
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/runstate"
)

const evDiff = `diff --git a/stats.go b/stats.go
--- a/stats.go
+++ b/stats.go
@@ -3,3 +3,3 @@
 func Mean(xs []int) float64 {
-	return float64(sum(xs) / len(xs))
+	return float64(sum(xs)) / float64(len(xs))
 }
`

func TestAMetCriterionNeedsAQuoteFromTheChange(t *testing.T) {
	t.Parallel()
	crit := []string{"Mean divides as floats"}
	ev := reviewEvidence{change: evDiff, requireQuotes: true}
	cases := []struct {
		name string
		v    criterionVerdict
		met  bool
	}{
		{"an exact quote of an added line", criterionVerdict{Number: 1, Met: true, Quote: "return float64(sum(xs)) / float64(len(xs))"}, true},
		{"a quote with the diff's + and other spacing", criterionVerdict{Number: 1, Met: true, Quote: "+  return float64(sum(xs))  /  float64(len(xs))"}, true},
		{"a quote in backticks inside the evidence", criterionVerdict{Number: 1, Met: true, Evidence: "it now reads `float64(sum(xs)) / float64(len(xs))`"}, true},
		{"no quote at all", criterionVerdict{Number: 1, Met: true, Evidence: "the diff implements it"}, false},
		{"a quote the change does not contain", criterionVerdict{Number: 1, Met: true, Quote: "return math.Round(mean)"}, false},
		{"a too short quote", criterionVerdict{Number: 1, Met: true, Quote: "xs"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, ok := judgeReview(crit, []criterionVerdict{c.v}, ev)
			if ok != c.met || res[0].Met != c.met {
				t.Errorf("met = %v (%+v), want %v", ok, res[0], c.met)
			}
			if !c.met && !strings.Contains(res[0].Evidence, "quoted nothing") {
				t.Errorf("an unproven criterion must say why: %q", res[0].Evidence)
			}
		})
	}
	if _, ok := judgeReview(crit, []criterionVerdict{{Number: 1, Met: true}}, reviewEvidence{change: evDiff}); !ok {
		t.Error("with qa.require_quotes off, the reviewer's word is enough")
	}
}

func TestGatesDecideTheCriteriaTheyCheck(t *testing.T) {
	t.Parallel()
	passed := []runstate.GateOutcome{{Name: "test", Command: "go test ./...", Passed: true}}
	crit := []string{"go test ./... passes", "Mean divides as floats"}
	// The reviewer wrongly fails the test criterion and proves the other.
	vs := []criterionVerdict{
		{Number: 1, Met: false, Evidence: "cannot see the tests run"},
		{Number: 2, Met: true, Quote: "float64(sum(xs)) / float64(len(xs))"},
	}
	res, ok := judgeReview(crit, vs, reviewEvidence{change: evDiff, gates: passed, requireQuotes: true})
	if !ok || res[0].By != "gates" || res[1].By != "reviewer" {
		t.Errorf("the test gate decides the first, the quote the second: %v %+v", ok, res)
	}
	failed := []runstate.GateOutcome{{Name: "test", Command: "go test ./...", Passed: false}}
	if res, _ := judgeReview(crit, vs, reviewEvidence{change: evDiff, gates: failed, requireQuotes: true}); res[0].Met {
		t.Error("a failed gate proves nothing")
	}
	if _, ok := gateChecks("TopWords returns the most frequent words", passed); ok {
		t.Error("a behaviour is for the reviewer, not the gates")
	}
	if _, ok := gateChecks("the lint gate is green", []runstate.GateOutcome{{Name: "lint", Command: "golangci-lint run", Passed: true}}); !ok {
		t.Error("a criterion naming a gate is the gate's")
	}
}

func TestVerdictsAreMatchedByNumberThenTextNeverByAGuess(t *testing.T) {
	t.Parallel()
	crit := []string{"adds TopWords", "tests TopWords", "documents TopWords"}
	// Numbered out of order.
	m := matchVerdicts(crit, []criterionVerdict{{Number: 3, Evidence: "c"}, {Number: 1, Evidence: "a"}, {Number: 2, Evidence: "b"}})
	if m[0].Evidence != "a" || m[1].Evidence != "b" || m[2].Evidence != "c" {
		t.Errorf("by number: %v %v %v", m[0], m[1], m[2])
	}
	// Unnumbered and paraphrased: the loose text match finds it.
	m = matchVerdicts(crit, []criterionVerdict{{Criterion: "The change tests TopWords", Evidence: "b"}})
	if m[1] == nil || m[1].Evidence != "b" || m[0] != nil || m[2] != nil {
		t.Errorf("by text: %v", m)
	}
	// Two answers for three criteria: position would be a guess.
	m = matchVerdicts(crit, []criterionVerdict{{Criterion: "x"}, {Criterion: "y"}})
	if m[0] != nil || m[1] != nil {
		t.Errorf("a count mismatch must not match by position: %v", m)
	}
	// As many answers as criteria: position is the last resort.
	m = matchVerdicts(crit[:2], []criterionVerdict{{Criterion: "x", Evidence: "1"}, {Criterion: "y", Evidence: "2"}})
	if m[0] == nil || m[0].Evidence != "1" || m[1].Evidence != "2" {
		t.Errorf("position with equal counts: %v", m)
	}
}

func TestFilterDiffKeepsDeniedFilesOnTheMachine(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-KEY=old\n+KEY=new\n" + evDiff
	out := filterDiff(diff, func(p string) bool { return p == ".env" })
	if strings.Contains(out, "KEY=") || !strings.Contains(out, "float64(len(xs))") || !strings.Contains(out, "a change to .env is not shown") {
		t.Errorf("filtered diff:\n%s", out)
	}
}

// A quote of several lines with one slip still shows the change (Qwen-1.5B
// quoted its LongestWord with `longest :="`); a quote whose lines are mostly
// not the change does not.
func TestAQuoteOfSeveralLinesWithASlipIsEvidence(t *testing.T) {
	t.Parallel()
	change := "+func LongestWord(text string) string {\n+\tlongest := \"\"\n+\tfor _, w := range Words(text) {\n+\t\tif len(w) > len(longest) {\n+\t\t\tlongest = w\n+\t\t}\n+\t}\n+\treturn longest\n+}\n"
	hay := normQuote(stripDiffMarkers(change))
	slip := "func LongestWord(text string) string {\n\tlongest :=\"\n\tfor _, w := range Words(text) {\n\t\tif len(w) > len(longest) {\n\t\t\tlongest = w\n\t\t}\n\t}\n\treturn longest\n}"
	if _, ok := supportingQuote(criterionVerdict{Met: true, Quote: slip}, hay); !ok {
		t.Error("a nine-line quote with one slip is not taken")
	}
	// The function on one line, its statements joined by "; ", as the
	// reviewer quoted it in the same remit's next run.
	oneLine := "func LongestWord(text string) string { longest := \"\"; for _, w := range Words(text) { if len(w) > len(longest) { longest = w } }; return longest }"
	if _, ok := supportingQuote(criterionVerdict{Met: true, Quote: oneLine}, hay); !ok {
		t.Error("the change's function quoted on one line is not taken")
	}
	madeLine := "func LongestWord(text string) string { words := Words(text); sort.Strings(words); return words[0] }"
	if _, ok := supportingQuote(criterionVerdict{Met: true, Quote: madeLine}, hay); ok {
		t.Error("a made-up function on one line is taken")
	}
	made := "func LongestWord(text string) string {\n\tsort.Strings(words)\n\treturn words[len(words)-1]\n\tpanic(\"unreachable\")\n}"
	if _, ok := supportingQuote(criterionVerdict{Met: true, Quote: made}, hay); ok {
		t.Error("a quote whose lines are mostly made up is taken")
	}
}
