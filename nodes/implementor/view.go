package implementor

import (
	"context"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
	"github.com/lemmings-dev/lemmings/workspace/splice"
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

// editedAt is where an edit landed.
type editedAt struct {
	path string
	line int
}

// readFile shows a window of a file: the whole file when it is short, else
// readWindow lines from start_line (or around end_line), saying what lies
// outside.
func (l *implLoop) readFile(ctx context.Context, a implAction) string {
	data, err := l.d.Work.FS().ReadFile(a.Path)
	if err != nil {
		return "error: " + err.Error()
	}
	text := string(data)
	total := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	if a.Symbol != "" && a.StartLine <= 0 && a.EndLine <= 0 {
		units, _ := l.parser().Units(ctx, a.Path, data)
		if u, ok := splice.Named(units, a.Symbol); ok {
			first := max(1, u.Start-snippetContext/2)
			l.focus[a.Path] = u.Start
			return fmt.Sprintf("%s (%d lines), %s %s at lines %d-%d:\n%s", a.Path, total, u.Kind, u.Name, u.Start, u.End,
				numberedFrom(text, first, min(u.End+snippetContext/2, total)-first+1))
		}
	}
	first := a.StartLine
	if first <= 0 && a.EndLine > 0 {
		first = a.EndLine - readWindow + 1
	}
	if first <= 0 {
		first = 1
	}
	count := readWindow
	if a.EndLine >= first {
		count = min(a.EndLine-first+1, readWindow)
	}
	if total <= readWhole && a.StartLine <= 1 && a.EndLine <= 0 {
		count = total
	}
	if first > total {
		return fmt.Sprintf("error: %s has only %d lines; start_line %d is past its end", a.Path, total, first)
	}
	l.focus[a.Path] = first
	return fmt.Sprintf("%s (%d lines):\n%s", a.Path, total, numberedFrom(text, first, count))
}

// afterEdit shows each change ±snippetContext lines as the file now is.
func (l *implLoop) afterEdit(changed []editedAt) string {
	var b strings.Builder
	for _, c := range changed {
		l.focus[c.path] = c.line
		data, err := l.d.Work.FS().ReadFile(c.path)
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
func (l *implLoop) freshViews() string {
	if len(l.touched) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("CURRENT CONTENT OF THE FILES YOU CHANGED (edit from these lines, not from older views):\n")
	for i := len(l.touched) - 1; i >= 0; i-- {
		p := l.touched[i]
		data, err := l.d.Work.FS().ReadFile(p)
		if err != nil {
			fmt.Fprintf(&b, "%s: (gone: %v)\n", p, err)
			continue
		}
		text := string(data)
		total := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
		first, count := 1, total
		if total > readWhole {
			first = max(1, l.focus[p]-freshAround)
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
