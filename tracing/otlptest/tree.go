package otlptest

import (
	"fmt"
	"strings"
)

// Tree is one trace as parent → children, children in start order.
type Tree struct {
	Root *Span
	ByID map[string]*Span
	kids map[string][]*Span
}

// NewTree builds the tree of the spans of one trace, which must have exactly
// one root (a span whose parent is not among them).
func NewTree(spans []Span) (*Tree, error) {
	tr := &Tree{ByID: map[string]*Span{}, kids: map[string][]*Span{}}
	for i := range spans {
		tr.ByID[spans[i].SpanID] = &spans[i]
	}
	for i := range spans {
		s := &spans[i]
		if s.TraceID != spans[0].TraceID {
			return nil, fmt.Errorf("two traces: %s (%s) and %s (%s)", spans[0].TraceID, spans[0].Name, s.TraceID, s.Name)
		}
		if _, ok := tr.ByID[s.ParentID]; !ok {
			if tr.Root != nil {
				return nil, fmt.Errorf("two roots: %s and %s", tr.Root.Name, s.Name)
			}
			tr.Root = s
			continue
		}
		tr.kids[s.ParentID] = append(tr.kids[s.ParentID], s)
	}
	if tr.Root == nil {
		return nil, fmt.Errorf("no root among %d spans", len(spans))
	}
	return tr, nil
}

// Children are s's child spans in start order.
func (tr *Tree) Children(s *Span) []*Span { return tr.kids[s.SpanID] }

// Child is s's first child named name, or a span named "(no <name>)".
func (tr *Tree) Child(s *Span, name string) *Span {
	for _, c := range tr.kids[s.SpanID] {
		if c.Name == name {
			return c
		}
	}
	return &Span{Name: "(no " + name + ")"}
}

// Named lists the spans named name, in start order.
func (tr *Tree) Named(name string) []*Span {
	var out []*Span
	var walk func(s *Span)
	walk = func(s *Span) {
		if s.Name == name {
			out = append(out, s)
		}
		for _, c := range tr.kids[s.SpanID] {
			walk(c)
		}
	}
	walk(tr.Root)
	return out
}

// Shape draws the tree to depth levels below the root (≤ 0: all) as
// indented names.
func (tr *Tree) Shape(depth int) string {
	var b strings.Builder
	var walk func(s *Span, d int)
	walk = func(s *Span, d int) {
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", d), s.Name)
		if depth > 0 && d >= depth {
			return
		}
		for _, c := range tr.kids[s.SpanID] {
			walk(c, d+1)
		}
	}
	walk(tr.Root, 0)
	return b.String()
}
