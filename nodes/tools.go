package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Tool output caps keep one result from flooding the local model's context.
const (
	maxReadLines  = 600
	maxListing    = 300
	maxGrepHits   = 60
	maxSearchHits = 6
)

// execute runs one implementor action. Whatever goes wrong the model could fix
// (a bad path, a search text that matches nowhere) comes back as text for it to
// read; nothing here fails the step.
func (l *implLoop) execute(ctx context.Context, a implAction) string {
	fs := l.d.Work.FS()
	switch a.Action {
	case "read_file":
		data, err := fs.ReadFile(a.Path)
		if err != nil {
			return "error: " + err.Error()
		}
		return numbered(string(data), maxReadLines)
	case "list_files":
		dir := a.Path
		if dir == "" {
			dir = "."
		}
		entries, err := fs.List(dir, maxListing)
		if err != nil && !errors.Is(err, workspace.ErrTruncated) {
			return "error: " + err.Error()
		}
		var b strings.Builder
		for _, e := range entries {
			b.WriteString(e.String())
			b.WriteByte('\n')
		}
		if err != nil { // truncated: the entries so far, and how to narrow the listing
			b.WriteString(err.Error())
		}
		if b.Len() == 0 {
			return "(empty)"
		}
		return b.String()
	case "grep":
		matches, err := fs.Grep(ctx, a.Pattern, a.Path, maxGrepHits)
		if err != nil && !errors.Is(err, workspace.ErrTruncated) {
			return "error: " + err.Error()
		}
		if len(matches) == 0 {
			return "no matches"
		}
		var b strings.Builder
		for _, m := range matches {
			fmt.Fprintf(&b, "%s:%d: %s\n", m.Path, m.Line, m.Text)
		}
		return b.String()
	case "rag_search":
		return l.ragSearch(ctx, a.Query)
	case "edit":
		edits := make([]workspace.Edit, 0, len(a.Edits))
		for _, e := range a.Edits {
			edits = append(edits, workspace.Edit{Path: e.Path, Search: e.Search, Replace: e.Replace})
		}
		return l.apply(edits)
	case "edit_blocks":
		edits, err := workspace.ParseEditBlocks(a.Blocks)
		if err != nil {
			return "error: " + err.Error()
		}
		return l.apply(edits)
	case "write_file":
		if err := fs.WriteFile(a.Path, []byte(a.Content)); err != nil {
			return "error: " + err.Error()
		}
		l.touch(a.Path)
		return fmt.Sprintf("wrote %s (%d bytes)", a.Path, len(a.Content))
	case "run_gate":
		return l.runGate(ctx, a.Gate)
	default:
		return fmt.Sprintf("error: unknown action %q", a.Action)
	}
}

func (l *implLoop) apply(edits []workspace.Edit) string {
	if len(edits) == 0 {
		return "error: no edits given"
	}
	results, err := l.d.Work.FS().Apply(edits)
	if err != nil {
		return "error: " + err.Error() + "\nNo file was changed. Read the file again and retry with an exact search text."
	}
	var b strings.Builder
	for _, r := range results {
		l.touch(r.Path)
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}

func (l *implLoop) touch(p string) {
	for _, t := range l.touched {
		if t == p {
			return
		}
	}
	l.touched = append(l.touched, p)
}

func (l *implLoop) ragSearch(ctx context.Context, q string) string {
	if l.d.Search == nil {
		return "rag_search is not available in this run (no index); use grep instead"
	}
	hits, err := l.d.Search.Search(ctx, q, maxSearchHits, rag.Filter{})
	if err != nil {
		return "error: " + err.Error()
	}
	if len(hits) == 0 {
		return "no results"
	}
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "%s:%d-%d (score %.3f)\n%s\n\n", h.Path, h.StartLine, h.EndLine, h.Score, h.Snippet)
	}
	return strings.TrimSpace(b.String())
}

func (l *implLoop) runGate(ctx context.Context, name string) string {
	for _, g := range l.d.Gates {
		if strings.EqualFold(g.Name, name) || (name == "" && g.Name == "test") {
			r := workspace.RunGate(ctx, l.d.Work.Dir(), g, l.d.Settings.GateOutputBytes)
			status := "passed"
			if !r.Passed {
				status = fmt.Sprintf("FAILED (exit %d)", r.ExitCode)
				if r.TimedOut {
					status = "TIMED OUT"
				}
			}
			return fmt.Sprintf("gate %s (%s) %s\n%s", g.Name, g.Command, status, r.Output)
		}
	}
	return "error: unknown gate " + fmt.Sprintf("%q", name) + "; available:\n" + gateList(l.d.Gates)
}
