package serve

import (
	"strings"
	"testing"
	"time"
)

// Two supervisors with the same cost at the same times draw the same line:
// the second is dashed so that both show.
func TestTwoRolesWithTheSameHistoryBothShow(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	pts := []usagePoint{
		{At: at, Role: "code_style", Cost: 0.02}, {At: at, Role: "design", Cost: 0.02},
		{At: at.Add(time.Minute), Role: "primary", Cost: 0.01},
	}
	svg := string(lineChart(pts, "cost (USD)", func(p usagePoint) float64 { return p.Cost }, func(v float64) string { return "" }))
	paths := strings.Split(svg, "<path ")[1:]
	if len(paths) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(paths), svg)
	}
	dashed := 0
	for _, p := range paths {
		if strings.Contains(p, "stroke-dasharray") {
			dashed++
		}
	}
	if dashed != 1 || !strings.Contains(paths[1], "stroke-dasharray") {
		t.Errorf("%d dashed lines, want the second of the two equal ones:\n%s", dashed, svg)
	}
}
