package implementor

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/workspace"
)

// What the prompt shows of the repository and the target files.
const (
	// treeEntries bounds the REPOSITORY section.
	treeEntries = 200
	// treeScan is how much of the repository is listed to rank it.
	treeScan = 20000
	// targetAround lines either side of the unit the task names are shown
	// of a target file too long to show whole.
	targetAround = 20
)

// targetDirs are the directories of the task's target files, in order.
func (pb *prefixBuilder) targetDirs() []string {
	var dirs []string
	for _, f := range pb.t.TargetFiles {
		if d := path.Dir(strings.TrimPrefix(f, "./")); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// filesNearTarget lists what lies around the task's files: each target
// directory's entries, then what lies beside it in its parent, within
// treeEntries lines. The whole repository's overview is in the shared
// prefix (the project context); this is the part ranked for the task.
func (pb *prefixBuilder) filesNearTarget() (string, error) {
	dirs := pb.targetDirs()
	if len(dirs) == 0 {
		return "", nil
	}
	entries, err := pb.d.Work.FS().List(".", treeScan)
	if err != nil && !errors.Is(err, workspace.ErrTruncated) {
		return "", err
	}
	files := map[string]int{} // directory → files under it
	for _, e := range entries {
		if !e.Dir {
			for d := path.Dir(e.Path); d != "."; d = path.Dir(d) {
				files[d]++
			}
		}
	}
	line := func(e workspace.Entry) string {
		if e.Dir {
			return fmt.Sprintf("%s/  (%d files)", e.Path, files[e.Path])
		}
		return e.String()
	}
	shown := map[string]bool{}
	var b strings.Builder
	n := 0
	section := func(title, dir, skip string) {
		var lines []string
		for _, e := range entries {
			if path.Dir(e.Path) == dir && !shown[e.Path] && e.Path != skip {
				lines = append(lines, "  "+line(e))
			}
		}
		if len(lines) == 0 || n >= treeEntries {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for i, ln := range lines {
			if n >= treeEntries {
				fmt.Fprintf(&b, "  … (%d more: list_files %s to see them)\n", len(lines)-i, dir)
				break
			}
			b.WriteString(ln + "\n")
			n++
		}
		for _, e := range entries {
			if path.Dir(e.Path) == dir {
				shown[e.Path] = true
			}
		}
	}
	for _, d := range dirs {
		section(fmt.Sprintf("%s/ (the task's directory)", d), d, "")
		if d != "." {
			parent := path.Dir(d)
			section(fmt.Sprintf("beside %s/ in %s/", d, parent), parent, d)
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// targetFiles shows the task's files up front so a weak model need not ask:
// whole when short, else around the unit the task names (or from the top
// when it names none).
func (pb *prefixBuilder) targetFiles(ctx context.Context) string {
	var b strings.Builder
	for _, p := range pb.t.TargetFiles {
		data, err := pb.d.Work.FS().ReadFile(p)
		if pb.direct && strings.TrimPrefix(strings.TrimSpace(p), "./") == pb.directPath && (err != nil || pb.requests.smallWhole(string(data))) {
			continue // the request shows it whole
		}
		if err != nil {
			fmt.Fprintf(&b, "%s: (does not exist yet)\n", p)
			continue
		}
		text := string(data)
		total := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
		if pb.direct && total <= targetFileLines {
			// Shown as the file is, whole: a direct attempt asks for code,
			// and numbered lines in the prompt get copied into it.
			role := "shown as it is; do not change it"
			if IsTestFile(p) {
				role = "the tests; do not change them"
			}
			fmt.Fprintf(&b, "%s (%s):\n%s%s\n%s\n%s\n", p, role, fenceFor(p), langOf(p), strings.TrimRight(text, "\n"), fenceFor(p))
			continue
		}
		first, count := 1, targetFileLines
		if total > targetFileLines {
			if units, err := pb.d.Parser.Units(ctx, p, data); err == nil {
				if u, ok := taskUnit(units, pb.requests.taskText()); ok {
					first = max(1, u.Start-targetAround)
					count = min(targetFileLines, u.End+targetAround-first+1)
					pb.views.focus[p] = u.Start
					fmt.Fprintf(&b, "%s (%d lines; %s %s at lines %d-%d):\n%s\n", p, total, u.Kind, u.Name, u.Start, u.End, numberedFrom(text, first, count))
					continue
				}
			}
		}
		fmt.Fprintf(&b, "%s:\n%s\n", p, numberedFrom(text, first, count))
	}
	return strings.TrimSpace(b.String())
}

func (pb *prefixBuilder) sections(ctx context.Context) ([]llm.Section, error) {
	t := pb.t
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", t.ID, t.Title)
	prompts.WriteTask(&b, t.Instructions, t.AcceptanceCriteria, t.TargetFiles)
	secs := []llm.Section{ // after the shared prefix (project context, knowledge)
		{Title: prompts.SecTask, Body: strings.TrimSpace(b.String()), Required: true},
	}
	if t.Feedback != "" {
		secs = append(secs, llm.Section{Title: prompts.SecFeedback, Body: t.Feedback, Required: true})
	}
	if files := pb.targetFiles(ctx); files != "" {
		secs = append(secs, llm.Section{Title: prompts.SecTargetFiles, Body: files, Priority: prompts.PrioContext})
	}
	if pb.direct {
		return secs, nil // one file, shown with the request: no map of the rest
	}
	if symbols := pb.symbolMap(); symbols != "" {
		secs = append(secs, llm.Section{Title: prompts.SecSymbols, Body: symbols, Priority: prompts.PrioContext - 5})
	}
	if near, err := pb.filesNearTarget(); err == nil && near != "" {
		secs = append(secs, llm.Section{Title: prompts.SecNearFiles, Body: near, Priority: prompts.PrioOverview})
	}
	return secs, nil
}
