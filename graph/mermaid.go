package graph

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// renderMermaid draws the graph as built (edges in declaration order).
func (g *Graph[S]) renderMermaid() string {
	var b strings.Builder
	b.WriteString("graph TD;\n")
	id := func(name string) string {
		switch name {
		case Start:
			return "__start__"
		case End:
			return "__end__"
		}
		return "n_" + sanitizeID(name)
	}
	fmt.Fprintf(&b, "\t%s([\"%s\"]):::first\n", id(Start), Start)
	for _, n := range g.nodes {
		if n.sub {
			fmt.Fprintf(&b, "\t%s[[\"%s\"]]\n", id(n.name), mermaidText(n.name)) // a subgraph
			continue
		}
		fmt.Fprintf(&b, "\t%s[\"%s\"]\n", id(n.name), mermaidText(n.name))
	}
	fmt.Fprintf(&b, "\t%s([\"%s\"]):::last\n", id(End), End)
	for _, e := range g.edges {
		fmt.Fprintf(&b, "\t%s --> %s;\n", id(e.from), id(e.to))
	}
	for _, cd := range g.conds {
		if cd.routes != nil {
			for _, label := range slices.Sorted(maps.Keys(cd.routes)) {
				fmt.Fprintf(&b, "\t%s -. \"%s\" .-> %s;\n", id(cd.from), mermaidText(label), id(cd.routes[label]))
			}
			continue
		}
		for _, d := range cd.dests {
			fmt.Fprintf(&b, "\t%s -. \"%s\" .-> %s;\n", id(cd.from), mermaidText(d), id(d))
		}
	}
	for _, sd := range g.sends {
		for _, d := range sd.targets {
			fmt.Fprintf(&b, "\t%s == \"send\" ==> %s;\n", id(sd.from), id(d))
		}
	}
	b.WriteString("\tclassDef first fill-opacity:0\n\tclassDef last fill:#bfb6fc\n")
	return b.String()
}

// sanitizeID keeps node ids to characters Mermaid accepts.
func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "_%x_", r)
		}
	}
	return b.String()
}

func mermaidText(s string) string { return strings.ReplaceAll(s, `"`, "#quot;") }
