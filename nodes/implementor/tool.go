package implementor

// The Implementor's tools that work in the tree, each a type with what it
// needs and nothing of the attempt besides: a test makes one alone and runs
// it (tool_test.go). The table in tools.go says which the model is offered
// and how each is described; the actions that end the attempt (finish,
// blocked, ask) are the loop's own.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// tool runs one action in the work tree and returns what the model reads
// back. Whatever goes wrong that the model could fix (a bad path, a search
// text that matches nowhere) comes back as text.
type tool interface {
	run(ctx context.Context, a Action) string
}

// readTool shows a window of a file: the whole file when it is short, else
// readWindow lines from start_line (or around end_line), or the unit a
// symbol names, saying what lies outside. It notes the line shown (focus),
// which the grain of the next edit and the fresh views go by.
type readTool struct {
	fs     *workspace.FS
	parser splice.Parser
	focus  map[string]int
}

func (t readTool) run(ctx context.Context, a Action) string {
	data, err := t.fs.ReadFile(a.Path)
	if err != nil {
		return "error: " + err.Error()
	}
	text := string(data)
	total := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	if a.Symbol != "" && a.StartLine <= 0 && a.EndLine <= 0 {
		units, _ := t.parser.Units(ctx, a.Path, data)
		if u, ok := splice.Named(units, a.Symbol); ok {
			first := max(1, u.Start-snippetContext/2)
			t.focus[a.Path] = u.Start
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
	t.focus[a.Path] = first
	return fmt.Sprintf("%s (%d lines):\n%s", a.Path, total, numberedFrom(text, first, count))
}

// listTool lists a folder, at most maxListing entries.
type listTool struct{ fs *workspace.FS }

func (t listTool) run(_ context.Context, a Action) string {
	dir := a.Path
	if dir == "" {
		dir = "."
	}
	entries, err := t.fs.List(dir, maxListing)
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
}

// grepTool finds a pattern in the work tree's files, at most maxGrepHits.
type grepTool struct{ fs *workspace.FS }

func (t grepTool) run(ctx context.Context, a Action) string {
	matches, err := t.fs.Grep(ctx, a.Pattern, a.Path, maxGrepHits)
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
}

// searchTool asks the run's retrieval index, when it has one.
type searchTool struct{ search Searcher }

func (t searchTool) run(ctx context.Context, a Action) string {
	if t.search == nil {
		return "rag_search is not available in this run (no index); use grep instead"
	}
	hits, err := t.search.Search(ctx, a.Query, maxSearchHits, rag.Filter{})
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

// gateTool runs one of the run's gates in the sandbox (the test gate when
// none is named) and returns its summarised output; heard records the whole.
type gateTool struct {
	gates       []workspace.Gate
	box         *sandbox.Box
	dir         string
	outputBytes int
	heard       func(context.Context, workspace.GateResult)
}

func (t gateTool) run(ctx context.Context, a Action) string {
	for _, g := range t.gates {
		if strings.EqualFold(g.Name, a.Gate) || (a.Gate == "" && g.Name == "test") {
			r := workspace.RunGate(ctx, t.box, t.dir, g, t.outputBytes)
			if t.heard != nil {
				t.heard(ctx, r)
			}
			return r.ModelFeedback(t.dir, workspace.DefaultSummaryBytes)
		}
	}
	return "error: unknown gate " + fmt.Sprintf("%q", a.Gate) + "; available:\n" + prompts.GateList(t.gates)
}

// lander puts a change in place, checked (land.go).
type lander func(ctx context.Context, c change) landing

// editTool applies SEARCH/REPLACE edits given in the action (the JSON
// protocol), all or nothing.
type editTool struct{ land lander }

func (t editTool) run(ctx context.Context, a Action) string {
	edits := make([]workspace.Edit, 0, len(a.Edits))
	for _, e := range a.Edits {
		edits = append(edits, workspace.Edit{Path: e.Path, Search: e.Search, Replace: e.Replace})
	}
	if len(edits) == 0 {
		return "error: no edits given"
	}
	return t.land(ctx, change{edits: edits}).text
}

// blocksTool applies SEARCH/REPLACE blocks written as text in the action.
type blocksTool struct{ land lander }

func (t blocksTool) run(ctx context.Context, a Action) string {
	edits, err := workspace.ParseEditBlocks(a.Blocks)
	if err != nil {
		return "error: " + err.Error()
	}
	if len(edits) == 0 {
		return "error: no edits given"
	}
	return t.land(ctx, change{edits: edits}).text
}

// writeTool writes a whole file given in the action.
type writeTool struct {
	fs   *workspace.FS
	land lander
}

func (t writeTool) run(ctx context.Context, a Action) string {
	p, content := a.Path, a.Content
	if strings.TrimSpace(p) == "" {
		return "error: write_file needs a path"
	}
	old, readErr := t.fs.ReadFile(p)
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	if readErr == nil && string(old) == content {
		return fmt.Sprintf("%s: no change (the new content is the same as the old)", p)
	}
	return t.land(ctx, change{files: map[string]string{p: content}, lines: map[string]int{p: firstDifferentLine(string(old), content)}}).text
}
