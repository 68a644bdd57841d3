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
	// readWindow is how many lines read_file shows at once; a file up to
	// readWhole lines is shown whole.
	readWindow = 150
	readWhole  = 200
	// targetFileLines of each target file go into the prompt up front.
	targetFileLines = 200
	maxListing      = 300
	maxGrepHits     = 60
	maxSearchHits   = 6
)

// execute runs one implementor action. Whatever goes wrong the model could fix
// (a bad path, a search text that matches nowhere) comes back as text for it to
// read; nothing here fails the step.
func (l *implLoop) execute(ctx context.Context, a implAction) string {
	fs := l.d.Work.FS()
	switch a.Action {
	case "read_file":
		return l.readFile(a)
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
		return l.apply(ctx, edits)
	case "edit_blocks":
		edits, err := workspace.ParseEditBlocks(a.Blocks)
		if err != nil {
			return "error: " + err.Error()
		}
		return l.apply(ctx, edits)
	case "write_file":
		return l.writeWhole(ctx, a.Path, a.Content)
	case "run_gate":
		return l.runGate(ctx, a.Gate)
	default:
		return fmt.Sprintf("error: unknown action %q", a.Action)
	}
}

// apply applies edits all or nothing; the answer shows the changed lines
// and what the syntax check found.
func (l *implLoop) apply(ctx context.Context, edits []workspace.Edit) string {
	if len(edits) == 0 {
		return "error: no edits given"
	}
	stripped := false
	for i := range edits {
		var did bool
		if edits[i], did = workspace.StripLineNumbers(edits[i]); did {
			stripped = true
		}
	}
	results, err := l.d.Work.FS().Apply(edits)
	if err != nil {
		l.hint = l.editFailed(edits)
		return "error: " + err.Error() + "\nNo file was changed."
	}
	l.failStreak = 0
	var b strings.Builder
	var changed []editedAt
	for _, r := range results {
		l.touch(r.Path)
		b.WriteString(r.String())
		b.WriteByte('\n')
		changed = append(changed, editedAt{r.Path, r.Line})
	}
	if stripped {
		b.WriteString("(the NNNN| line numbers you copied into SEARCH were removed: leave them out)\n")
	}
	b.WriteString(l.afterEdit(ctx, changed))
	return strings.TrimSpace(b.String())
}

// editFailed counts a failed edit per file; a file whose edits failed twice
// is rewritten whole from then on.
func (l *implLoop) editFailed(edits []workspace.Edit) string {
	l.failStreak++
	hint := "Read the file again and copy the SEARCH lines exactly as they are now."
	for _, e := range edits {
		l.failedEdits[e.Path]++
		if l.failedEdits[e.Path] >= 2 && !l.wholeFile[e.Path] {
			l.wholeFile[e.Path] = true
			if l.text {
				hint = fmt.Sprintf("Edits of %s failed twice: the next edit of it asks for the whole file.", e.Path)
			} else {
				hint = fmt.Sprintf("Edits of %s failed twice: rewrite it whole with write_file.", e.Path)
			}
		}
	}
	return hint
}

// writeWhole writes a whole file.
func (l *implLoop) writeWhole(ctx context.Context, p, content string) string {
	if strings.TrimSpace(p) == "" {
		return "error: write_file needs a path"
	}
	fs := l.d.Work.FS()
	old, readErr := fs.ReadFile(p)
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	if readErr == nil && string(old) == content {
		return fmt.Sprintf("%s: no change (the new content is the same as the old)", p)
	}
	if err := fs.WriteFile(p, []byte(content)); err != nil {
		return "error: " + err.Error()
	}
	l.failStreak = 0
	l.touch(p)
	verb := "wrote"
	if readErr != nil {
		verb = "created"
	}
	line := firstDifferentLine(string(old), content)
	return fmt.Sprintf("%s %s (%d lines)\n%s", verb, p, strings.Count(content, "\n"), l.afterEdit(ctx, []editedAt{{p, line}}))
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
			emitGate(ctx, l.t, "run_gate", r)
			return r.ModelFeedback(l.d.Work.Dir(), workspace.DefaultSummaryBytes)
		}
	}
	return "error: unknown gate " + fmt.Sprintf("%q", name) + "; available:\n" + gateList(l.d.Gates)
}
