package eval

import (
	"fmt"
	"io"
	"sort"
)

// Change is how one exercise fared in two evals.
type Change struct {
	ID string `json:"id"`
	// Kind: fixed (failed in A, passes in B), broken (the reverse), better
	// or worse (passes in both, in fewer or more attempts), same, only_a,
	// only_b, or not_scored (skipped or errored in one of them).
	Kind        string  `json:"kind"`
	A           string  `json:"a"`
	B           string  `json:"b"`
	WallSecondA float64 `json:"wall_seconds_a"`
	WallSecondB float64 `json:"wall_seconds_b"`
	TokensA     int     `json:"tokens_a"`
	TokensB     int     `json:"tokens_b"`
}

// Comparison is what changed from eval A to eval B.
type Comparison struct {
	A       string   `json:"a"`
	B       string   `json:"b"`
	TotalsA Totals   `json:"totals_a"`
	TotalsB Totals   `json:"totals_b"`
	Changes []Change `json:"changes"`
	// Common are the exercises scored in both; CommonA and CommonB are their
	// totals, the fair comparison when the two evals ran different sets.
	Common  int    `json:"common"`
	CommonA Totals `json:"common_a"`
	CommonB Totals `json:"common_b"`
}

func verdict(r Result) string {
	switch {
	case r.Status != StatusPassed && r.Status != StatusFailed:
		return r.Status
	case r.PassedAttempt > 0:
		return fmt.Sprintf("pass@%d", r.PassedAttempt)
	}
	return "fail"
}

// Compare lines up two evals exercise by exercise.
func Compare(a, b *File) Comparison {
	c := Comparison{A: a.Label, B: b.Label, TotalsA: a.Totals, TotalsB: b.Totals}
	byA, byB := map[string]Result{}, map[string]Result{}
	ids := map[string]bool{}
	for _, r := range a.Results {
		byA[r.ID], ids[r.ID] = r, true
	}
	for _, r := range b.Results {
		byB[r.ID], ids[r.ID] = r, true
	}
	var sorted []string
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		ra, okA := byA[id]
		rb, okB := byB[id]
		ch := Change{ID: id, A: "-", B: "-"}
		if okA {
			ch.A, ch.WallSecondA, ch.TokensA = verdict(ra), ra.WallSeconds, ra.Tokens()
		}
		if okB {
			ch.B, ch.WallSecondB, ch.TokensB = verdict(rb), rb.WallSeconds, rb.Tokens()
		}
		switch {
		case !okA:
			ch.Kind = "only_b"
		case !okB:
			ch.Kind = "only_a"
		case !ra.Scored() || !rb.Scored():
			ch.Kind = "not_scored"
		default:
			c.Common++
			c.CommonA.add(ra)
			c.CommonB.add(rb)
			switch {
			case !ra.Pass2 && rb.Pass2:
				ch.Kind = "fixed"
			case ra.Pass2 && !rb.Pass2:
				ch.Kind = "broken"
			case ra.Pass2 && rb.PassedAttempt < ra.PassedAttempt:
				ch.Kind = "better"
			case ra.Pass2 && rb.PassedAttempt > ra.PassedAttempt:
				ch.Kind = "worse"
			default:
				ch.Kind = "same"
			}
		}
		c.Changes = append(c.Changes, ch)
	}
	return c
}

// Write prints the comparison for a person: the totals, then every exercise
// whose verdict changed.
func (c Comparison) Write(w io.Writer) {
	fmt.Fprintf(w, "A: %s\nB: %s\n\n", c.A, c.B)
	fmt.Fprintf(w, "%-28s %14s %14s\n", "", "A", "B")
	line := func(name string, a, b string) { fmt.Fprintf(w, "%-28s %14s %14s\n", name, a, b) }
	rate := func(n int, r float64) string { return fmt.Sprintf("%d (%.1f%%)", n, r) }
	line("scored exercises", fmt.Sprint(c.TotalsA.Scored), fmt.Sprint(c.TotalsB.Scored))
	line("pass@1", rate(c.TotalsA.Pass1, c.TotalsA.Rate1()), rate(c.TotalsB.Pass1, c.TotalsB.Rate1()))
	line("pass@2", rate(c.TotalsA.Pass2, c.TotalsA.Rate2()), rate(c.TotalsB.Pass2, c.TotalsB.Rate2()))
	line("mean wall time", seconds(c.TotalsA.MeanWall()), seconds(c.TotalsB.MeanWall()))
	line("tokens", fmt.Sprint(c.TotalsA.Tokens), fmt.Sprint(c.TotalsB.Tokens))
	line("cost", fmt.Sprintf("$%.4f", c.TotalsA.CostUSD), fmt.Sprintf("$%.4f", c.TotalsB.CostUSD))
	if c.Common != c.TotalsA.Scored || c.Common != c.TotalsB.Scored {
		line(fmt.Sprintf("pass@2 on the %d in common", c.Common), fmt.Sprintf("%.1f%%", c.CommonA.Rate2()), fmt.Sprintf("%.1f%%", c.CommonB.Rate2()))
	}
	counts := map[string]int{}
	changed := 0
	for _, ch := range c.Changes {
		counts[ch.Kind]++
		if ch.Kind != "same" {
			changed++
		}
	}
	fmt.Fprintf(w, "\n%d fixed, %d broken, %d better, %d worse, %d the same, %d only in A, %d only in B, %d not scored in one\n",
		counts["fixed"], counts["broken"], counts["better"], counts["worse"], counts["same"], counts["only_a"], counts["only_b"], counts["not_scored"])
	if changed == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-36s %-10s %-10s %-10s %10s %10s\n", "exercise", "change", "A", "B", "wall A", "wall B")
	for _, ch := range c.Changes {
		if ch.Kind == "same" {
			continue
		}
		fmt.Fprintf(w, "%-36s %-10s %-10s %-10s %10s %10s\n", ch.ID, ch.Kind, ch.A, ch.B, seconds(ch.WallSecondA), seconds(ch.WallSecondB))
	}
}
