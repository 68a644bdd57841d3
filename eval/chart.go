package eval

import (
	"fmt"
	"html"
	"strings"
)

// SVG draws pass@1 and pass@2 per language beside the mean wall time of an
// exercise, as a static SVG (no script) that a Markdown viewer shows inline.
func (f *File) SVG() string {
	langs := append([]Totals{}, f.Languages...)
	langs = append(langs, Totals{Language: "all", Exercises: f.Totals.Exercises, Scored: f.Totals.Scored,
		Pass1: f.Totals.Pass1, Pass2: f.Totals.Pass2, WallSeconds: f.Totals.WallSeconds})
	const (
		labelW, barW, gap, timeW = 130.0, 300.0, 100.0, 200.0
		rowH, top, bottom        = 28.0, 56.0, 40.0
	)
	width := labelW + barW + gap + timeW + 70
	height := top + rowH*float64(len(langs)) + bottom
	maxWall := 0.0
	for _, l := range langs {
		maxWall = max(maxWall, l.MeanWall())
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<title>lemmings eval %s: pass rate and mean time per language</title>`+"\n", html.EscapeString(f.Label))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="8" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString("lemmings eval: "+f.Label))
	legend := "pass rate (%): pass@1"
	if f.MaxAttempts > 1 {
		legend = fmt.Sprintf("pass rate (%%): pass@1 dark, pass@%d light (numbers: pass@1 / pass@%d)", f.MaxAttempts, f.MaxAttempts)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="42">%s</text>`+"\n", labelW, legend)
	fmt.Fprintf(&b, `<text x="%.0f" y="42">mean wall time per exercise</text>`+"\n", labelW+barW+gap)
	for i, l := range langs {
		y := top + rowH*float64(i)
		fmt.Fprintf(&b, `<text x="8" y="%.0f">%s (%d)</text>`+"\n", y+16, html.EscapeString(l.Language), l.Scored)
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="18" fill="#eeeeee"/>`+"\n", labelW, y+3, barW)
		// With one attempt there is no pass@2: one bar, one number, as the heading says.
		if f.MaxAttempts > 1 {
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.1f" height="18" fill="#9ecae1"><title>pass@%d %.1f%%</title></rect>`+"\n", labelW, y+3, barW*l.Rate2()/100, f.MaxAttempts, l.Rate2())
		}
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.1f" height="18" fill="#3182bd"><title>pass@1 %.1f%%</title></rect>`+"\n", labelW, y+3, barW*l.Rate1()/100, l.Rate1())
		if f.MaxAttempts > 1 {
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%.0f%% / %.0f%%</text>`+"\n", labelW+barW+4, y+16, l.Rate1(), l.Rate2())
		} else {
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%.0f%%</text>`+"\n", labelW+barW+4, y+16, l.Rate1())
		}
		w := 0.0
		if maxWall > 0 {
			w = timeW * l.MeanWall() / maxWall
		}
		tx := labelW + barW + gap
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.1f" height="18" fill="#fdae6b"><title>%s</title></rect>`+"\n", tx, y+3, w, seconds(l.MeanWall()))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", tx+w+4, y+16, seconds(l.MeanWall()))
	}
	fmt.Fprintf(&b, `<text x="8" y="%.0f" fill="#666666">scored exercises in brackets; skipped and errored ones are not counted</text>`+"\n", height-14)
	b.WriteString("</svg>\n")
	return b.String()
}
