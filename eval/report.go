package eval

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders the eval as a report: totals per language, the chart,
// then every exercise with its verdict and why it failed.
func (f *File) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# lemmings eval: %s\n\n", mdText(f.Label))
	fmt.Fprintf(&b, "Solver: %s", f.Solver)
	if f.Implementor != "" {
		fmt.Fprintf(&b, " · implementor: %s", mdText(f.Implementor))
	}
	if f.Model != "" {
		fmt.Fprintf(&b, " · model: %s", mdText(f.Model))
	}
	fmt.Fprintf(&b, " · attempts: %d · started %s · updated %s\n\n", f.MaxAttempts, f.Started.Format(time.RFC3339), f.Updated.Format(time.RFC3339))
	t := f.Totals
	if f.MaxAttempts > 1 {
		fmt.Fprintf(&b, "**pass@1 %.1f%% · pass@%d %.1f%%** of %d scored exercises", t.Rate1(), f.MaxAttempts, t.Rate2(), t.Scored)
	} else {
		fmt.Fprintf(&b, "**pass@1 %.1f%%** of %d scored exercises", t.Rate1(), t.Scored)
	}
	if t.Skipped > 0 || t.Errors > 0 {
		fmt.Fprintf(&b, " (%d skipped, %d errors: not counted)", t.Skipped, t.Errors)
	}
	b.WriteString(".\n\n")

	b.WriteString("## Totals per language\n\n")
	b.WriteString("| language | exercises | scored | pass@1 | pass@2 | skipped | errors | tokens | cost | mean wall time |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(name string, t Totals) {
		fmt.Fprintf(&b, "| %s | %d | %d | %d (%.1f%%) | %d (%.1f%%) | %d | %d | %d | $%.4f | %s |\n",
			name, t.Exercises, t.Scored, t.Pass1, t.Rate1(), t.Pass2, t.Rate2(), t.Skipped, t.Errors, t.Tokens, t.CostUSD, seconds(t.MeanWall()))
	}
	for _, l := range f.Languages {
		row(mdText(l.Language), l)
	}
	row("**all**", f.Totals)
	b.WriteString("\n![pass rate and mean time per language](" + ChartFile + ")\n\n")
	writeSpend(&b, f.Totals)

	b.WriteString("## Exercises\n\n")
	b.WriteString("| exercise | pass@1 | pass@2 | attempts | tokens | wall time | cost | why it failed |\n")
	b.WriteString("|---|:-:|:-:|---:|---:|---:|---:|---|\n")
	var skipped, toolchain []Result
	for _, r := range f.Results {
		switch r.Status {
		case StatusSkipped:
			skipped = append(skipped, r)
			continue
		case StatusFailed:
			if r.Toolchain {
				toolchain = append(toolchain, r)
			}
		}
		p1, p2 := mark(r.Pass1), mark(r.Pass2)
		if r.Status == StatusError {
			p1, p2 = "error", "error"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | $%.4f | %s |\n",
			mdText(r.ID), p1, p2, r.Attempts, r.Tokens(), seconds(r.WallSeconds), r.CostUSD, mdText(r.Reason))
	}
	if f.Totals.Tasks > 0 {
		fmt.Fprintf(&b, "\n## Localisation\n\nThe files each task's first attempt changed, against those the real change changed: %d of %d tasks changed one of them.\n\n", f.Totals.Localised, f.Totals.Tasks)
		b.WriteString("| task | changed a real file | first attempt changed | real change changed |\n|---|:-:|---|---|\n")
		for _, r := range f.Results {
			if l := r.Localisation; l != nil && r.Scored() {
				hit := "no"
				if l.Hit {
					hit = "yes"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdText(r.ID), hit, mdText(strings.Join(l.Changed, ", ")), mdText(strings.Join(l.Real, ", ")))
			}
		}
	}
	if len(toolchain) > 0 {
		b.WriteString("\n## Toolchain problems\n\nThe reference solution failed its own tests: the toolchain or the harness is at fault, not a model.\n\n")
		for _, r := range toolchain {
			fmt.Fprintf(&b, "- **%s**: %s. Fix: %s\n", mdText(r.ID), mdText(r.Reason), mdText(r.Fix))
		}
	}
	if len(skipped) > 0 {
		b.WriteString("\n## Skipped\n\n")
		for _, r := range skipped {
			where := ""
			if r.Dir != "" && r.Dir != r.ID {
				where = " (" + mdText(r.Dir) + ")"
			}
			fmt.Fprintf(&b, "- **%s**%s: %s. Fix: %s\n", mdText(r.ID), where, mdText(r.Reason), mdText(r.Fix))
		}
	}
	return b.String()
}

// writeSpend says what the model's time bought: the calls, tokens and model
// seconds of the exercises solved and of those failed, and the share of
// calls whose code passed (one per solved exercise).
func writeSpend(b *strings.Builder, t Totals) {
	if t.Solved.Calls+t.Failed.Calls == 0 {
		return
	}
	b.WriteString("## What the model's time bought\n\n")
	b.WriteString("| exercises | count | calls | prompt tokens sent | served by the cache | completion tokens | model-s | model-s per exercise |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range []struct {
		name string
		s    Spend
	}{{"solved", t.Solved}, {"failed", t.Failed}} {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %d (%.0f%%) | %d | %.0f | %.1f |\n", r.name, r.s.Exercises, r.s.Calls, r.s.PromptTokens,
			r.s.PromptCached, pct(r.s.PromptCached, r.s.PromptTokens), r.s.CompletionTokens, r.s.ModelSeconds, r.s.PerExercise())
	}
	calls := t.Solved.Calls + t.Failed.Calls
	fmt.Fprintf(b, "\n%d of %d calls (%.0f%%) wrote the code that passed; the rest were spent on candidates that failed.\n\n", t.Solved.Exercises, calls, pct(t.Solved.Exercises, calls))
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// seconds renders a duration in seconds for a person.
func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(100 * time.Millisecond).String()
}

// mdText keeps text on one table cell: no line breaks, no column bars.
func mdText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
