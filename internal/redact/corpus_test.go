package redact

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"sort"
	"testing"
)

// gitleaksCorpus holds the true- and false-positive test strings of
// gitleaks' own rules (testdata/gitleaks-corpus.jsonl.gz, made by
// scripts/gitleaks-corpus.sh; see testdata/README.md): a third-party measure
// of what the redactor catches and what it wrongly rewrites.
type corpusRule struct {
	Rule string   `json:"rule"`
	TPs  []string `json:"tps"`
	FPs  []string `json:"fps"`
}

func loadGitleaksCorpus(tb testing.TB) []corpusRule {
	tb.Helper()
	f, err := os.Open("testdata/gitleaks-corpus.jsonl.gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var rules []corpusRule
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r corpusRule
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			tb.Fatalf("gitleaks corpus line %d: %v", len(rules)+1, err)
		}
		rules = append(rules, r)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(rules) < 100 {
		tb.Fatalf("gitleaks corpus has %d rules, want the whole set", len(rules))
	}
	return rules
}

type corpusScore struct {
	positives, caught, negatives, changed int
	// crossRule counts the negatives of one rule that another rule lists as
	// positives (a Cloudflare global key is a false positive only for the
	// Cloudflare API-key rule): secrets, so neither negatives nor changed.
	crossRule, crossRuleChanged int
	missed, rewritten           map[string][]string // rule → strings
}

func (s corpusScore) caughtShare() float64  { return float64(s.caught) / float64(s.positives) }
func (s corpusScore) changedShare() float64 { return float64(s.changed) / float64(s.negatives) }

// scoreCorpus counts a positive as caught when redaction changes it, and a
// negative as changed when redaction rewrites any of it.
func scoreCorpus(rules []corpusRule, redact func(string) string) corpusScore {
	s := corpusScore{missed: map[string][]string{}, rewritten: map[string][]string{}}
	positive := map[string]bool{}
	for _, r := range rules {
		for _, tp := range r.TPs {
			positive[tp] = true
		}
	}
	for _, r := range rules {
		for _, tp := range r.TPs {
			s.positives++
			if redact(tp) != tp {
				s.caught++
			} else {
				s.missed[r.Rule] = append(s.missed[r.Rule], tp)
			}
		}
		for _, fp := range r.FPs {
			if positive[fp] {
				s.crossRule++
				if redact(fp) != fp {
					s.crossRuleChanged++
				}
				continue
			}
			s.negatives++
			if out := redact(fp); out != fp {
				s.changed++
				s.rewritten[r.Rule] = append(s.rewritten[r.Rule], out)
			}
		}
	}
	return s
}

func logExamples(t *testing.T, what string, m map[string][]string) {
	t.Helper()
	rules := make([]string, 0, len(m))
	for r := range m {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	for _, r := range rules {
		t.Logf("%s (%s, %d): %q", what, r, len(m[r]), m[r][0])
	}
}

func TestRedactGitleaksCorpus(t *testing.T) {
	if raceEnabled {
		t.Skip("single-goroutine measurement, minutes under -race: run by the plain pass of make test")
	}
	s := scoreCorpus(loadGitleaksCorpus(t), String)
	t.Logf("positives caught %d/%d (%.1f%%), negatives changed %d/%d (%.1f%%); negatives of one rule that are positives of another: %d, changed %d",
		s.caught, s.positives, 100*s.caughtShare(), s.changed, s.negatives, 100*s.changedShare(), s.crossRule, s.crossRuleChanged)
	if s.caughtShare() < 0.95 {
		logExamples(t, "missed", s.missed)
		t.Errorf("caught %.1f%% of gitleaks' positive test strings, want ≥ 95%%", 100*s.caughtShare())
	}
	if s.changedShare() > 0.05 {
		logExamples(t, "rewrote", s.rewritten)
		t.Errorf("changed %.1f%% of gitleaks' negative test strings, want ≤ 5%%", 100*s.changedShare())
	}
}

func BenchmarkRedactGitleaksCorpus(b *testing.B) {
	corpus := loadGitleaksCorpus(b)
	var s corpusScore
	var bytes int64
	for _, r := range corpus {
		for _, x := range append(append([]string(nil), r.TPs...), r.FPs...) {
			bytes += int64(len(x))
		}
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s = scoreCorpus(corpus, rules) // not the memo: every string is scanned
	}
	b.ReportMetric(100*s.caughtShare(), "caught-%")
	b.ReportMetric(100*s.changedShare(), "changed-%")
}
