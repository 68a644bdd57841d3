package serve

import (
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runview"
)

// usagePoint is one model call's tokens and cost.
type usagePoint struct {
	At     time.Time
	Role   string
	Tokens int
	Cost   float64
}

// usageSeries gathers the run's model calls: the llm_call events of the
// event log, and the supervisor run log for supervisors the log has no
// calls of (their calls run in the background).
func usageSeries(evs []graph.Event, v runview.View) []usagePoint {
	var pts []usagePoint
	seen := map[string]bool{}
	for _, ev := range evs {
		d, ok := events.As[events.LLMCall](ev)
		if !ok || d.Label == "" {
			continue
		}
		seen[d.Label] = true
		pts = append(pts, usagePoint{At: ev.Time, Role: d.Label, Tokens: d.PromptTokens + d.CompletionTokens, Cost: d.CostUSD})
	}
	for _, r := range v.Supervisors {
		if seen[r.Supervisor] {
			continue
		}
		pts = append(pts, usagePoint{At: r.At, Role: r.Supervisor, Tokens: r.PromptTokens + r.CompletionTokens, Cost: r.CostUSD})
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].At.Before(pts[j].At) })
	return pts
}

var palette = []string{"#2f6fdf", "#d9534f", "#2a9d5b", "#e69b00", "#8e44ad", "#16a2b8", "#7f6a00", "#c2185b", "#5d6d7e", "#1abc9c"}

// usageCharts draws cumulative tokens and cost per role over the run's time.
func usageCharts(evs []graph.Event, v runview.View) (template.HTML, template.HTML) {
	pts := usageSeries(evs, v)
	if len(pts) == 0 {
		return "", ""
	}
	tokens := lineChart(pts, "tokens", func(p usagePoint) float64 { return float64(p.Tokens) }, func(v float64) string { return fmt.Sprintf("%.0f", v) })
	cost := lineChart(pts, "cost (USD)", func(p usagePoint) float64 { return p.Cost }, func(v float64) string { return fmt.Sprintf("$%.4f", v) })
	return tokens, cost
}

func lineChart(pts []usagePoint, title string, value func(usagePoint) float64, format func(float64) string) template.HTML {
	const w, h, left, right, top, bottom = 540, 220, 64, 176, 22, 28
	start, end := pts[0].At, pts[len(pts)-1].At
	span := end.Sub(start).Seconds()
	if span <= 0 {
		span = 1
	}
	type sample struct{ t, v float64 }
	series := map[string][]sample{}
	var roles []string
	total := map[string]float64{}
	for _, p := range pts {
		if _, ok := series[p.Role]; !ok {
			roles = append(roles, p.Role)
			series[p.Role] = []sample{{0, 0}}
		}
		total[p.Role] += value(p)
		series[p.Role] = append(series[p.Role], sample{p.At.Sub(start).Seconds(), total[p.Role]})
	}
	sort.Strings(roles)
	top1 := 0.0
	for _, v := range total {
		top1 = max(top1, v)
	}
	if top1 == 0 {
		top1 = 1
	}
	x := func(t float64) float64 { return left + t/span*(w-left-right) }
	y := func(v float64) float64 { return top + (1-v/top1)*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s per role over time">`, w, h, w, h, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<text class="ctitle" x="%d" y="14">%s per role, cumulative</text>`, left, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/><line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, left, top, left, h-bottom, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>`, left-4, top+4, template.HTMLEscapeString(format(top1)))
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">0</text>`, left-4, h-bottom+4)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d">0s</text>`, left, h-bottom+16)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>`, w-right, h-bottom+16, (time.Duration(span * float64(time.Second))).Round(time.Second))
	// Two roles with the same history (two supervisors of the same cost)
	// would draw one line over the other: a repeated line is dashed, so the
	// one under it shows through its gaps.
	drawn := map[string]int{}
	for i, role := range roles {
		color := palette[i%len(palette)]
		var path strings.Builder
		prev := 0.0
		for j, smp := range series[role] {
			if j == 0 {
				fmt.Fprintf(&path, "M%.1f,%.1f", x(smp.t), y(smp.v))
				continue
			}
			// Steps: the total holds until the next call adds to it.
			fmt.Fprintf(&path, " L%.1f,%.1f L%.1f,%.1f", x(smp.t), y(prev), x(smp.t), y(smp.v))
			prev = smp.v
		}
		fmt.Fprintf(&path, " L%.1f,%.1f", x(span), y(prev))
		dash := ""
		if k := drawn[path.String()]; k > 0 {
			dash = fmt.Sprintf(` stroke-dasharray="6 %d" stroke-dashoffset="%d"`, 6*k, -6*(k-1))
		}
		drawn[path.String()]++
		fmt.Fprintf(&b, `<path class="series" d="%s" stroke="%s" fill="none"%s><title>%s: %s</title></path>`, path.String(), color, dash, template.HTMLEscapeString(role), template.HTMLEscapeString(format(total[role])))
		ly := top + 4 + i*15
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text class="legend" x="%d" y="%d">%s %s</text>`, w-right+8, ly, color, w-right+22, ly+9, template.HTMLEscapeString(role), template.HTMLEscapeString(format(total[role])))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text is escaped above
}
