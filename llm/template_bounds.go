package llm

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/template"
	"text/template/parse"
	"time"
)

// A repository may override the prompt templates (.lemmings/prompts): its
// templates are as untrusted as the rest of it. text/template has no limit
// of its own, and ten nested {{template}} calls, each calling the next ten
// times, wrote gigabytes (the override took 1.36 GB before the
// process died). The bounds below stop such a template before it runs
// (its size, how deep and how many template calls and loop turns it makes)
// and while it runs (its output and its time).
const (
	// MaxTemplateBytes is the largest template file read.
	MaxTemplateBytes = 64 << 10
	// maxTemplateDepth is the deepest chain of {{template}} calls.
	maxTemplateDepth = 8
	// maxTemplateSteps bounds the nodes one execution may run, counting
	// each template call's body and each turn of a loop over a number;
	// loops over the workflow's data turn as often as the data has items.
	maxTemplateSteps = 20000
	// maxTemplateOutput is the most text one execution may write.
	maxTemplateOutput = 1 << 20
	// maxTemplateTime is the longest one execution may take.
	maxTemplateTime = 2 * time.Second
)

// checkTemplateBounds refuses a parsed template whose calls recurse, nest
// deeper than maxTemplateDepth or expand past maxTemplateSteps.
func checkTemplateBounds(t *template.Template) error {
	b := &bounds{t: t, cost: map[string]int{}, height: map[string]int{}, active: map[string]bool{}}
	// The main template first, then the others by name: the same file
	// gets the same message.
	names := []string{t.Name()}
	for _, tt := range t.Templates() {
		if tt.Name() != t.Name() {
			names = append(names, tt.Name())
		}
	}
	slices.Sort(names[1:])
	for _, name := range names {
		if _, err := b.template(name, 0); err != nil {
			return err
		}
	}
	return nil
}

type bounds struct {
	t      *template.Template
	cost   map[string]int // steps one call of a template costs, once known
	height map[string]int // the deepest chain of calls below a template
	active map[string]bool
}

func (b *bounds) template(name string, depth int) (int, error) {
	if c, ok := b.cost[name]; ok {
		if depth+b.height[name] > maxTemplateDepth {
			return 0, fmt.Errorf("{{template %q}} is nested more than %d calls deep", name, maxTemplateDepth)
		}
		return c, nil
	}
	if depth > maxTemplateDepth {
		return 0, fmt.Errorf("{{template %q}} is nested more than %d calls deep", name, maxTemplateDepth)
	}
	if b.active[name] {
		return 0, fmt.Errorf("{{template %q}} calls itself: a prompt template may not recurse", name)
	}
	tt := b.t.Lookup(name)
	if tt == nil || tt.Tree == nil || tt.Root == nil {
		return 0, nil // execution says it is missing
	}
	b.active[name] = true
	h := 0
	c, err := b.node(tt.Root, depth, &h)
	delete(b.active, name)
	if err != nil {
		return 0, err
	}
	b.cost[name], b.height[name] = c, h
	return c, nil
}

// node returns the steps n costs; h grows to the deepest call chain below.
func (b *bounds) node(n parse.Node, depth int, h *int) (int, error) {
	steps := 1
	add := func(n parse.Node, times int) error {
		if n == nil || isNilNode(n) {
			return nil
		}
		c, err := b.node(n, depth, h)
		if err != nil {
			return err
		}
		steps += c * times
		if steps > maxTemplateSteps {
			return fmt.Errorf("the template would run more than %d steps (nested {{template}} calls or loops multiply): keep a prompt template to a page of text", maxTemplateSteps)
		}
		return nil
	}
	var err error
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if err = add(c, 1); err != nil {
				return 0, err
			}
		}
	case *parse.IfNode:
		if err = add(n.List, 1); err == nil {
			err = add(n.ElseList, 1)
		}
	case *parse.WithNode:
		if err = add(n.List, 1); err == nil {
			err = add(n.ElseList, 1)
		}
	case *parse.RangeNode:
		if err = add(n.List, rangeTurns(n)); err == nil {
			err = add(n.ElseList, 1)
		}
	case *parse.TemplateNode:
		var c int
		if c, err = b.template(n.Name, depth+1); err == nil {
			*h = max(*h, 1+b.height[n.Name])
			steps += c
			if steps > maxTemplateSteps {
				err = fmt.Errorf("the template would run more than %d steps (nested {{template}} calls or loops multiply): keep a prompt template to a page of text", maxTemplateSteps)
			}
		}
	}
	return steps, err
}

// isNilNode reports a typed nil (an if without else has a nil *ListNode).
func isNilNode(n parse.Node) bool {
	l, ok := n.(*parse.ListNode)
	return ok && l == nil
}

// rangeTurns is how often a range's body runs, as far as the template
// says: a range over a number literal turns that often; one over data as
// often as the data has items (bounded by the workflow, counted once).
func rangeTurns(n *parse.RangeNode) int {
	if n.Pipe == nil || len(n.Pipe.Cmds) != 1 || len(n.Pipe.Cmds[0].Args) != 1 {
		return 1
	}
	num, ok := n.Pipe.Cmds[0].Args[0].(*parse.NumberNode)
	if !ok {
		return 1
	}
	if num.IsInt && num.Int64 >= 0 && num.Int64 <= maxTemplateSteps {
		return max(1, int(num.Int64))
	}
	v, _ := strconv.ParseFloat(num.Text, 64)
	return int(min(v, maxTemplateSteps+1))
}

// errTemplateOutput is returned when an execution writes too much or takes
// too long.
var errTemplateOutput = errors.New("prompt template output over the limit")

// boundedWriter stops an execution that writes more than maxTemplateOutput
// bytes or runs past its deadline: text/template stops at a write error.
type boundedWriter struct {
	w        io.Writer
	n        int
	deadline time.Time
}

func newBoundedWriter(w io.Writer) *boundedWriter {
	return &boundedWriter{w: w, deadline: time.Now().Add(maxTemplateTime)}
}

func (bw *boundedWriter) Write(p []byte) (int, error) {
	bw.n += len(p)
	if bw.n > maxTemplateOutput {
		return 0, fmt.Errorf("%w: more than %d bytes (a prompt is a few pages)", errTemplateOutput, maxTemplateOutput)
	}
	if time.Now().After(bw.deadline) {
		return 0, fmt.Errorf("%w: more than %s", errTemplateOutput, maxTemplateTime)
	}
	return bw.w.Write(p)
}
