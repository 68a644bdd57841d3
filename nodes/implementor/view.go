package implementor

import (
	"context"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Views of the code the implementor's model edits from.
const (
	// snippetContext lines either side of an edit are shown after it.
	snippetContext = 8
	// freshViewBytes bounds the fresh views of edited files at the end of
	// the prompt.
	freshViewBytes = 6000
	// freshAround lines either side of the last change are shown of an
	// edited file too long to show whole.
	freshAround = 30
)

// views is what the model was shown of the files: the line last read or
// changed in each (the grain of the next edit and the views go by it), and
// the files the attempt changed, shown fresh at the end of each call.
type views struct {
	*scope
	focus   map[string]int // file → the line last read or changed
	touched []string
}

// editedAt is where an edit landed.
type editedAt struct {
	path string
	line int
}

// afterEdit shows each change ±snippetContext lines as the file now is.
func (vw *views) afterEdit(changed []editedAt) string {
	var b strings.Builder
	for _, c := range changed {
		vw.focus[c.path] = c.line
		data, err := vw.d.Work.FS().ReadFile(c.path)
		if err != nil {
			continue
		}
		first := max(1, c.line-snippetContext)
		fmt.Fprintf(&b, "%s now reads:\n%s", c.path, numberedFrom(string(data), first, 2*snippetContext+1))
	}
	return b.String()
}

// freshViews shows the files edited in this attempt as they are now, the
// latest first: what the model edits from next. It is added to the last
// message of a call only, never kept in the history, so the cached start of
// the prompt does not change.
func (vw *views) freshViews() string {
	if len(vw.touched) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("CURRENT CONTENT OF THE FILES YOU CHANGED (edit from these lines, not from older views):\n")
	for i := len(vw.touched) - 1; i >= 0; i-- {
		p := vw.touched[i]
		data, err := vw.d.Work.FS().ReadFile(p)
		if err != nil {
			fmt.Fprintf(&b, "%s: (gone: %v)\n", p, err)
			continue
		}
		text := string(data)
		total := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
		first, count := 1, total
		if total > readWhole {
			first = max(1, vw.focus[p]-freshAround)
			count = 2*freshAround + 1
		}
		view := fmt.Sprintf("%s (%d lines):\n%s", p, total, numberedFrom(text, first, count))
		if b.Len()+len(view) > freshViewBytes {
			fmt.Fprintf(&b, "%s: (not shown: read_file it)\n", p)
			continue
		}
		b.WriteString(view)
	}
	return strings.TrimRight(b.String(), "\n")
}

// firstDifferentLine is the 1-based first line where b differs from a.
func firstDifferentLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl))
}

// emitGate records a gate's whole output in the event log; the model gets
// a summary.
func (d *Deps) emitGate(ctx context.Context, t *runstate.Task, from string, r workspace.GateResult) {
	d.emit(ctx, events.ImplementorGate{Task: t.ID, Attempt: t.Attempt, From: from,
		Gate: r.Name, Command: r.Command, Passed: r.Passed, ExitCode: r.ExitCode, Output: r.Output,
		DurationMS: r.Duration.Milliseconds()})
}

// codeView is the file as the code call shows it (not kept in the history):
// plain lines, so none of them is copied with a number.
func (vw *views) codeView(p, old string, exists, whole bool) string {
	if !exists {
		return ""
	}
	if old == "" {
		return "\n\n" + p + " is empty now."
	}
	lines := strings.Split(strings.TrimRight(old, "\n"), "\n")
	first, last := 1, len(lines)
	if !whole && len(lines) > readWhole {
		first = max(1, vw.focus[p]-50)
		last = min(len(lines), first+readWhole-1)
	}
	fence := fenceFor(p)
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n%s now", p)
	if first > 1 || last < len(lines) {
		fmt.Fprintf(&b, ", lines %d-%d of %d (the rest is not shown)", first, last, len(lines))
	}
	fmt.Fprintf(&b, ":\n%s%s\n%s\n%s", fence, langOf(p), strings.Join(lines[first-1:last], "\n"), fence)
	return b.String()
}

func (vw *views) touch(p string) {
	for _, t := range vw.touched {
		if t == p {
			return
		}
	}
	vw.touched = append(vw.touched, p)
}
