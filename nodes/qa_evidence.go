package nodes

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
)

// reviewEvidence is what a reviewer's verdicts are checked against: the text
// of the change (diff and changed code) and the gates that ran.
type reviewEvidence struct {
	change string
	// added is the text the diff adds (its + lines): what a critAdds
	// criterion is checked against.
	added         string
	gates         []runstate.GateOutcome
	requireQuotes bool
}

// checkedWithoutModel says whether lemmings decides every criterion itself:
// each is one the gates check, or a text the change must add. Then no model
// reviews the change.
func checkedWithoutModel(criteria []string, ev reviewEvidence) bool {
	for _, c := range criteria {
		_, lit := addedLiteral(c)
		_, gate := gateChecks(c, ev.gates)
		if !lit && !gate {
			return false
		}
	}
	return len(criteria) > 0
}

// judgeCriteria matches verdicts to criteria without checking quotes: a
// criterion the reviewer did not mention is not met.
func judgeCriteria(criteria []string, verdicts []criterionVerdict) ([]runstate.CriterionResult, bool) {
	return judgeReview(criteria, verdicts, reviewEvidence{})
}

// judgeReview decides each criterion. A criterion a gate checks ("go test
// passes") is decided by the gates, whatever the reviewer says; any other is
// met only when the reviewer says so and, with requireQuotes, quotes a line
// of the change that shows it. A verdict that quotes nothing from the change
// is not evidence.
func judgeReview(criteria []string, verdicts []criterionVerdict, ev reviewEvidence) ([]runstate.CriterionResult, bool) {
	matched := matchVerdicts(criteria, verdicts)
	hay := normQuote(stripDiffMarkers(ev.change))
	out := make([]runstate.CriterionResult, len(criteria))
	pass := len(criteria) > 0
	for i, c := range criteria {
		r := runstate.CriterionResult{Criterion: c, Evidence: "not assessed by the reviewer"}
		v := matched[i]
		lit, isLit := addedLiteral(c)
		switch gates, ok := gateChecks(c, ev.gates); {
		case isLit:
			r.By = "checks"
			if r.Met = strings.Contains(ev.added, lit) || strings.Contains(ev.added, strings.Trim(strconv.Quote(lit), `"`)); r.Met {
				r.Evidence, r.Quote = "the change adds it", lit
			} else {
				r.Evidence = "the change does not add this text"
			}
		case ok:
			r.Met, r.By, r.Evidence = true, "gates", "checked by the gates, which passed: "+gates
		case v == nil:
		case !v.Met:
			r.Evidence = textutil.FirstNonEmpty(strings.TrimSpace(v.Evidence), "the reviewer gave no reason")
			r.By = "reviewer"
		default:
			r.Met, r.By, r.Evidence = true, "reviewer", strings.TrimSpace(v.Evidence)
			if q, ok := supportingQuote(*v, hay); ok {
				r.Quote = q
			} else if ev.requireQuotes {
				r.Met = false
				r.Evidence = "the reviewer said met but quoted nothing from the change that shows it (said: " + textutil.ClipTrimmed(textutil.FirstNonEmpty(v.Evidence, v.Quote, "nothing"), 200) + ")"
			}
		}
		out[i] = r
		pass = pass && r.Met
	}
	return out, pass
}

// matchVerdicts pairs each criterion with its verdict: by number, then by
// text (exact, then one containing the other, as weak models shorten), and
// by position only when the reviewer answered exactly once per criterion.
func matchVerdicts(criteria []string, vs []criterionVerdict) []*criterionVerdict {
	out := make([]*criterionVerdict, len(criteria))
	used := make([]bool, len(vs))
	take := func(i, j int) {
		out[i], used[j] = &vs[j], true
	}
	for j, v := range vs {
		if i := v.Number - 1; i >= 0 && i < len(criteria) && out[i] == nil && !used[j] {
			take(i, j)
		}
	}
	norm := func(x string) string { return strings.ToLower(strings.Join(strings.Fields(x), " ")) }
	for _, loose := range []bool{false, true} {
		for i, c := range criteria {
			if out[i] != nil {
				continue
			}
			nc := norm(c)
			for j, v := range vs {
				nv := norm(v.Criterion)
				if used[j] || nv == "" {
					continue
				}
				if nv == nc || (loose && len(nv) >= 8 && (strings.Contains(nc, nv) || strings.Contains(nv, nc))) {
					take(i, j)
					break
				}
			}
		}
	}
	if len(vs) == len(criteria) {
		for i := range criteria {
			if out[i] == nil && !used[i] {
				take(i, i)
			}
		}
	}
	return out
}

// gatePhrase finds criteria that only say the build or the tests pass.
var gatePhrase = regexp.MustCompile(`(?i)\b(?:tests?|test suite|build|builds|compiles?|vet|lint|linter|gates?)\b.{0,40}\b(?:pass|passes|passing|succeeds?|green|clean|compiles?)\b|\b(?:builds|compiles)\b`)

// gateChecks says whether the gates decide this criterion: every gate passed
// and the criterion names a gate, its command, or only asks that the tests or
// build pass.
func gateChecks(criterion string, gates []runstate.GateOutcome) (string, bool) {
	if len(gates) == 0 {
		return "", false
	}
	var names []string
	named := false
	lc := strings.ToLower(criterion)
	for _, g := range gates {
		if !g.Passed {
			return "", false
		}
		names = append(names, g.Name)
		if (len(g.Command) >= 4 && strings.Contains(lc, strings.ToLower(g.Command))) ||
			(g.Name != "" && strings.Contains(lc, strings.ToLower(g.Name)+" gate")) {
			named = true
		}
	}
	if !named && !gatePhrase.MatchString(criterion) {
		return "", false
	}
	return strings.Join(names, ", "), true
}

// quotedFragment finds text the reviewer put in backticks or double quotes.
var quotedFragment = regexp.MustCompile("`([^`]{4,})`|\"([^\"]{4,})\"")

// supportingQuote returns the reviewer's quote that occurs in the change.
func supportingQuote(v criterionVerdict, hay string) (string, bool) {
	cands := []string{v.Quote}
	for _, m := range quotedFragment.FindAllStringSubmatch(v.Evidence, -1) {
		cands = append(cands, m[1]+m[2])
	}
	for _, q := range cands {
		n := normQuote(stripDiffMarkers(strings.Trim(strings.TrimSpace(q), "`\"'")))
		if len(n) >= 4 && strings.Contains(hay, n) || mostLinesIn(q, hay) || joinedIn(q, hay) {
			return strings.TrimSpace(q), true
		}
	}
	return "", false
}

// mostLinesIn says whether a quote of several lines is the change's but for
// a slip: two thirds of its lines that say something, and at least two, are
// in it. Qwen2.5-Coder-1.5B quoted a nine-line function it had right but
// for `longest :="` (the change has `longest := ""`), and the task was lost.
func mostLinesIn(quote, hay string) bool {
	var lines, found int
	for _, l := range strings.Split(stripDiffMarkers(quote), "\n") {
		n := normQuote(l)
		if len(n) < 6 {
			continue // a brace, a blank: says nothing
		}
		lines++
		if strings.Contains(hay, n) {
			found++
		}
	}
	return lines >= 3 && found >= 2 && 3*found >= 2*lines
}

// joinedIn says whether a quote is the change's code written on fewer
// lines: the same text but for white space and semicolons, and long enough
// (40 characters so compared) not to be found by chance. Qwen2.5-Coder-1.5B
// quoted its eleven-line LongestWord as one line joined by "; ", and the
// task was re-planned.
func joinedIn(quote, hay string) bool {
	q := compactCode(stripDiffMarkers(quote))
	return len(q) >= 40 && strings.Contains(compactCode(hay), q)
}

// compactCode is text without white space or semicolons, in lower case.
func compactCode(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == ';' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// stripDiffMarkers drops a diff line's leading +, - or space so a quote of
// the code matches the diff that shows it.
func stripDiffMarkers(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
			continue
		}
		if l != "" && (l[0] == '+' || l[0] == '-') {
			lines[i] = l[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// normQuote compares text ignoring case and runs of white space.
func normQuote(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// unmetFeedback lists the criteria not met with their evidence.
func unmetFeedback(results []runstate.CriterionResult) string {
	var b strings.Builder
	for i, c := range results {
		if !c.Met {
			fmt.Fprintf(&b, "- %d. %s: %s\n", i+1, c.Criterion, c.Evidence)
		}
	}
	return strings.TrimSpace(b.String())
}
