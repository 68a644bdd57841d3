package eval

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
)

func sample(label string, results ...Result) *File {
	f := &File{Version: FileVersion, Label: label, Solver: "lemmings", Model: label, MaxAttempts: 2,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Updated: time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC), Results: results}
	f.summarize()
	return f
}

func res(id, status string, attempt int, wall float64) Result {
	lang, slug, _ := strings.Cut(id, "/")
	r := Result{ID: id, Language: lang, Slug: slug, Status: status, PassedAttempt: attempt, Pass1: attempt == 1, Pass2: attempt > 0,
		Attempts: max(attempt, 1), WallSeconds: wall, PromptTokens: 1000, CompletionTokens: 200, CostUSD: 0.01}
	if status == StatusFailed {
		r.Attempts, r.Reason = 2, "tests failed: --- FAIL: TestX | y"
	}
	if status == StatusSkipped {
		r.Reason, r.Fix, r.Language = "toolchain for rust missing", "install Rust", "rust"
	}
	return r
}

func TestReportTotalsPerLanguage(t *testing.T) {
	t.Parallel()
	f := sample("qwen2.5-coder:7b",
		res("go/a", StatusPassed, 1, 10), res("go/b", StatusPassed, 2, 20), res("go/c", StatusFailed, 0, 30),
		res("python/a", StatusPassed, 1, 4), res("rust/a", StatusSkipped, 0, 0))
	if f.Totals.Scored != 4 || f.Totals.Pass1 != 2 || f.Totals.Pass2 != 3 || f.Totals.Skipped != 1 || f.Totals.Rate2() != 75 {
		t.Fatalf("totals %+v", f.Totals)
	}
	md := f.Markdown()
	for _, want := range []string{
		"**pass@1 50.0% · pass@2 75.0%** of 4 scored exercises (1 skipped, 0 errors: not counted)",
		"| go | 3 | 3 | 1 (33.3%) | 2 (66.7%) | 0 | 0 | 3600 | $0.0300 | 20s |",
		"| python | 1 | 1 | 1 (100.0%) | 1 (100.0%) |",
		"| go/c | ✗ | ✗ | 2 | 1200 | 30s | $0.0100 | tests failed: --- FAIL: TestX \\| y |",
		"| go/b | ✗ | ✓ | 2 |",
		"- **rust/a**: toolchain for rust missing. Fix: install Rust",
		"](chart.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	svg := f.SVG()
	dec := xml.NewDecoder(strings.NewReader(svg))
	texts := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart is not well-formed XML: %v\n%s", err, svg)
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts += string(bytes.TrimSpace(cd)) + "\n"
		}
	}
	for _, want := range []string{"go (3)", "33% / 67%", "python (1)", "100% / 100%", "all (4)", "20s", "4s"} {
		if !strings.Contains(texts, want+"\n") {
			t.Errorf("chart lacks %q:\n%s", want, texts)
		}
	}
	if strings.Contains(svg, "<script") {
		t.Error("the chart has a script")
	}
}

func TestCompareExerciseByExercise(t *testing.T) {
	t.Parallel()
	a := sample("a", res("go/fixed", StatusFailed, 0, 10), res("go/broken", StatusPassed, 1, 10), res("go/better", StatusPassed, 2, 10),
		res("go/same", StatusPassed, 1, 10), res("go/only-a", StatusPassed, 1, 10), res("rust/x", StatusSkipped, 0, 0))
	b := sample("b", res("go/fixed", StatusPassed, 1, 5), res("go/broken", StatusFailed, 0, 5), res("go/better", StatusPassed, 1, 5),
		res("go/same", StatusPassed, 1, 5), res("go/only-b", StatusFailed, 0, 5), res("rust/x", StatusPassed, 1, 1))
	c := Compare(a, b)
	kinds := map[string]string{}
	for _, ch := range c.Changes {
		kinds[ch.ID] = ch.Kind
	}
	want := map[string]string{"go/fixed": "fixed", "go/broken": "broken", "go/better": "better", "go/same": "same",
		"go/only-a": "only_a", "go/only-b": "only_b", "rust/x": "not_scored"}
	for id, k := range want {
		if kinds[id] != k {
			t.Errorf("%s: %q, want %q", id, kinds[id], k)
		}
	}
	if c.Common != 4 || c.CommonA.Pass2 != 3 || c.CommonB.Pass2 != 3 {
		t.Errorf("common %d: %+v %+v", c.Common, c.CommonA, c.CommonB)
	}
	var buf bytes.Buffer
	c.Write(&buf)
	out := buf.String()
	for _, want := range []string{"1 fixed, 1 broken, 1 better, 0 worse, 1 the same, 1 only in A, 1 only in B, 1 not scored in one",
		"go/fixed", "fail", "pass@1", "pass@2 on the 4 in common"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "go/same ") {
		t.Errorf("an unchanged exercise is listed:\n%s", out)
	}
}

// The report says what the model's time bought: solved and failed
// exercises apart, with the calls, tokens (and the cache's share) and model
// seconds of each, and the share of calls whose code passed.
func TestReportSaysWhatTheModelsTimeBought(t *testing.T) {
	t.Parallel()
	solved, failed := res("go/a", StatusPassed, 1, 10), res("go/b", StatusFailed, 0, 30)
	solved.Calls, solved.ModelSeconds, solved.PromptCached = 2, 30, 400
	failed.Calls, failed.ModelSeconds, failed.PromptCached = 6, 240, 900
	f := sample("m", solved, failed, res("rust/a", StatusSkipped, 0, 0))
	if f.Totals.Solved.Exercises != 1 || f.Totals.Failed.Calls != 6 || f.Totals.Failed.PerExercise() != 240 {
		t.Fatalf("spend: solved %+v failed %+v", f.Totals.Solved, f.Totals.Failed)
	}
	md := f.Markdown()
	for _, want := range []string{
		"| solved | 1 | 2 | 1000 | 400 (40%) | 200 | 30 | 30.0 |",
		"| failed | 1 | 6 | 1000 | 900 (90%) | 200 | 240 | 240.0 |",
		"1 of 8 calls (12%) wrote the code that passed",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
