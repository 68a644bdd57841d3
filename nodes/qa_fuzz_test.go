package nodes

import (
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/runstate"
)

// FuzzJudgeReview: a reviewer's answer is untrusted; no verdict, quote or
// number may panic the judgement, and a met criterion always has evidence.
func FuzzJudgeReview(f *testing.F) {
	f.Add("adds Mean", 1, "adds Mean", true, "return float64(total) / float64(n)", "ok", evDiff)
	f.Add("go test passes", 0, "", false, "", "", "")
	f.Add("x", -7, "xx", true, "`", "\"\"\"", "+\n-\n@@")
	f.Fuzz(func(t *testing.T, crit string, num int, vcrit string, met bool, quote, evidence, change string) {
		crits := strings.Split(crit, "|")
		vs := []criterionVerdict{{Number: num, Criterion: vcrit, Met: met, Quote: quote, Evidence: evidence}}
		res, pass := judgeReview(crits, vs, reviewEvidence{change: change, requireQuotes: true,
			gates: []runstate.GateOutcome{{Name: "test", Command: "go test ./...", Passed: true}}})
		if len(res) != len(crits) {
			t.Fatalf("%d results for %d criteria", len(res), len(crits))
		}
		for _, r := range res {
			if r.Met && r.By == "reviewer" && r.Quote == "" {
				t.Fatalf("met without a quote: %+v", r)
			}
			if !r.Met && pass {
				t.Fatal("passed with an unmet criterion")
			}
		}
	})
}

// FuzzChangedCode: any diff against any file content gives spans inside it.
func FuzzChangedCode(f *testing.F) {
	f.Add("@@ -1 +1,2 @@\n a\n+b\n", "package p\n\nfunc A() {}\n", "x.go")
	f.Add("@@ -0,0 +99 @@\n+z\n", "", "y.py")
	f.Add("@@ -3 +3 @@\n-q\n", "  a\n b\nc\n", "z.txt")
	f.Fuzz(func(t *testing.T, hunks, src, name string) {
		diff := "diff --git a/" + name + " b/" + name + "\n--- a/" + name + "\n+++ b/" + name + "\n" + hunks
		out := changedCode(diff, func(string) (string, error) { return src, nil }, nil)
		if len(out) > changedCodeChars+200 {
			t.Fatalf("changed code of %d characters", len(out))
		}
		lines := strings.Count(src, "\n") + 1
		for _, l := range changedLines(diff)[name] {
			for _, sp := range enclosingSpans(name, src, []int{l}) {
				if sp.from < 1 || sp.from > sp.to+1 || sp.from > lines+3 {
					t.Fatalf("span %+v outside a %d-line file", sp, lines)
				}
			}
		}
	})
}
