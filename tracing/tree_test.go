package tracing_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/tracing/otlptest"
)

// tree is a trace as parent → children, children in start order.
type tree struct {
	root *otlptest.Span
	byID map[string]*otlptest.Span
	kids map[string][]*otlptest.Span
}

// treeOf builds the tree of one trace with one root.
func treeOf(t *testing.T, spans []otlptest.Span) *tree {
	t.Helper()
	tr := &tree{byID: map[string]*otlptest.Span{}, kids: map[string][]*otlptest.Span{}}
	for i := range spans {
		tr.byID[spans[i].SpanID] = &spans[i]
	}
	for i := range spans {
		s := &spans[i]
		if _, ok := tr.byID[s.ParentID]; !ok {
			if tr.root != nil {
				t.Fatalf("two roots: %s and %s", tr.root.Name, s.Name)
			}
			tr.root = s
			continue
		}
		tr.kids[s.ParentID] = append(tr.kids[s.ParentID], s)
	}
	if tr.root == nil {
		t.Fatalf("no root among %d spans", len(spans))
	}
	return tr
}

func (tr *tree) children(s *otlptest.Span) []*otlptest.Span { return tr.kids[s.SpanID] }

// child is s's first child named name.
func (tr *tree) child(s *otlptest.Span, name string) *otlptest.Span {
	for _, c := range tr.kids[s.SpanID] {
		if c.Name == name {
			return c
		}
	}
	return &otlptest.Span{Name: "(no " + name + ")"}
}

// shape draws the tree as indented names.
func (tr *tree) shape() string {
	var b strings.Builder
	var walk func(s *otlptest.Span, depth int)
	walk = func(s *otlptest.Span, depth int) {
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), s.Name)
		for _, c := range tr.kids[s.SpanID] {
			walk(c, depth+1)
		}
	}
	walk(tr.root, 0)
	return b.String()
}

func anyString(v any) string { return fmt.Sprint(v) }
