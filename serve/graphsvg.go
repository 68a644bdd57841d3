package serve

import (
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/nodes"
)

// The workflow graph is drawn on the server from the Mermaid text the graph
// package renders (lemmings graph prints the same text): a layered layout in
// plain SVG, no script library.

type flowEdge struct {
	From, To, Label string
	Dotted          bool
}

type flowGraph struct {
	Nodes  []string // ids in declaration order
	Labels map[string]string
	Edges  []flowEdge
}

var (
	mmNode   = regexp.MustCompile(`^\s*(\w+)\(?\["(.*)"\]\)?(:::\w+)?\s*$`)
	mmEdge   = regexp.MustCompile(`^\s*(\w+) --> (\w+);\s*$`)
	mmDotted = regexp.MustCompile(`^\s*(\w+) -\. "(.*)" \.-> (\w+);\s*$`)
)

// parseMermaid reads the flowchart subset graph.Mermaid writes.
func parseMermaid(src string) (flowGraph, error) {
	g := flowGraph{Labels: map[string]string{}}
	for _, line := range strings.Split(src, "\n") {
		switch {
		case mmEdge.MatchString(line):
			m := mmEdge.FindStringSubmatch(line)
			g.Edges = append(g.Edges, flowEdge{From: m[1], To: m[2]})
		case mmDotted.MatchString(line):
			m := mmDotted.FindStringSubmatch(line)
			g.Edges = append(g.Edges, flowEdge{From: m[1], To: m[3], Label: strings.ReplaceAll(m[2], "#quot;", `"`), Dotted: true})
		case mmNode.MatchString(line):
			m := mmNode.FindStringSubmatch(line)
			if _, dup := g.Labels[m[1]]; !dup {
				g.Nodes = append(g.Nodes, m[1])
			}
			g.Labels[m[1]] = strings.ReplaceAll(m[2], "#quot;", `"`)
		}
	}
	if len(g.Nodes) == 0 {
		return g, fmt.Errorf("no nodes in the workflow graph")
	}
	return g, nil
}

// layers places each node on a row: the longest path from the first node
// over the edges that do not close a loop (found depth first).
func (g flowGraph) layers() map[string]int {
	out := map[string][]string{}
	for _, e := range g.Edges {
		out[e.From] = append(out[e.From], e.To)
	}
	state := map[string]int{} // 0 new, 1 on the path, 2 done
	back := map[[2]string]bool{}
	var order []string
	var visit func(n string)
	visit = func(n string) {
		state[n] = 1
		for _, m := range out[n] {
			switch state[m] {
			case 0:
				visit(m)
			case 1:
				back[[2]string{n, m}] = true
			}
		}
		state[n] = 2
		order = append(order, n)
	}
	for _, n := range g.Nodes {
		if state[n] == 0 {
			visit(n)
		}
	}
	slices.Reverse(order) // topological order of the loop-free graph
	layer := map[string]int{}
	for _, n := range order {
		for _, m := range out[n] {
			if !back[[2]string{n, m}] && layer[m] < layer[n]+1 {
				layer[m] = layer[n] + 1
			}
		}
	}
	return layer
}

var (
	workflowOnce sync.Once
	workflowText string
	workflowErr  error
)

func workflowMermaid() (string, error) {
	workflowOnce.Do(func() {
		app, err := nodes.Build(&nodes.Deps{Settings: nodes.DefaultSettings()}).Compile()
		if err != nil {
			workflowErr = err
			return
		}
		workflowText = app.Mermaid()
	})
	return workflowText, workflowErr
}

// workflowSVG draws the workflow with the run's current node marked: the
// nodes it runs next while it can go on, the last ones when it is done.
func workflowSVG(r inspect.Run) (template.HTML, string) {
	src, err := workflowMermaid()
	if err != nil {
		return "", err.Error()
	}
	g, err := parseMermaid(src)
	if err != nil {
		return "", err.Error()
	}
	current := r.Next
	if r.Status == graph.StatusDone || len(current) == 0 {
		current = r.Nodes
	}
	if r.Status == graph.StatusDone {
		current = []string{graph.End}
	}
	return renderFlow(g, current), ""
}

const (
	boxW, boxH = 132, 26
	gapX, gapY = 22, 24
)

func renderFlow(g flowGraph, current []string) template.HTML {
	layer := g.layers()
	rows := map[int][]string{}
	maxLayer := 0
	for _, n := range g.Nodes {
		rows[layer[n]] = append(rows[layer[n]], n)
		maxLayer = max(maxLayer, layer[n])
	}
	widest := 0
	for _, r := range rows {
		widest = max(widest, len(r))
	}
	width := widest*(boxW+gapX) + gapX + 120 // room on the right for loop-back curves
	height := (maxLayer+1)*(boxH+gapY) + gapY
	type pt struct{ x, y int }
	pos := map[string]pt{}
	for l := 0; l <= maxLayer; l++ {
		r := rows[l]
		rowW := len(r)*(boxW+gapX) - gapX
		x0 := (width-120-rowW)/2 + 0
		for i, n := range r {
			pos[n] = pt{x0 + i*(boxW+gapX), gapY/2 + l*(boxH+gapY)}
		}
	}
	isCurrent := func(id string) bool {
		name := g.Labels[id]
		return slices.Contains(current, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="flow" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="workflow graph">`, width, height, width, height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8a8f98"/></marker></defs>`)
	for i, e := range g.Edges {
		a, z := pos[e.From], pos[e.To]
		x1, y1 := a.x+boxW/2, a.y+boxH
		x2, y2 := z.x+boxW/2, z.y
		var d string
		switch {
		case layer[e.To] > layer[e.From]:
			d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, x1, y1+gapY/2, x2, y2-gapY/2, x2, y2)
		default: // a loop back up: around the right side
			x1, y1 = a.x+boxW, a.y+boxH/2
			x2, y2 = z.x+boxW, z.y+boxH/2
			bend := width - 110 + (i%5)*18
			d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, bend, y1, bend, y2, x2+2, y2)
		}
		cls := "edge"
		if e.Dotted {
			cls += " cond"
		}
		title := template.HTMLEscapeString(g.Labels[e.From] + " → " + g.Labels[e.To])
		if e.Label != "" && e.Label != g.Labels[e.To] {
			title += " (" + template.HTMLEscapeString(e.Label) + ")"
		}
		fmt.Fprintf(&b, `<path class="%s" d="%s" marker-end="url(#arrow)"><title>%s</title></path>`, cls, d, title)
	}
	for _, n := range g.Nodes {
		p := pos[n]
		cls := "node"
		if isCurrent(n) {
			cls += " current"
		}
		label := g.Labels[n]
		shown, rx := label, 4
		if label == graph.Start || label == graph.End {
			shown, rx = strings.Trim(label, "_"), 14
		}
		fmt.Fprintf(&b, `<g class="%s" data-node="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="%d"/><text x="%d" y="%d" text-anchor="middle">%s</text></g>`,
			cls, template.HTMLEscapeString(label), p.x, p.y, boxW, boxH, rx, p.x+boxW/2, p.y+boxH/2+5, template.HTMLEscapeString(shown))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text is escaped above
}
