package implementor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/workspace"
	"github.com/lemmings-dev/lemmings/workspace/splice"
	"github.com/lemmings-dev/lemmings/workspace/tidy"
)

// checkReportBytes bounds what the checks after an edit add to its result.
const checkReportBytes = 1536

// change is one edit the loop is about to write: SEARCH/REPLACE edits, or
// whole new contents by path.
type change struct {
	edits []workspace.Edit
	files map[string]string
	// lines are where each file's change starts (for whole contents).
	lines map[string]int
	// said is how the result names a file's change ("" : wrote p (N lines)).
	said map[string]string
}

func (c change) paths() []string {
	var out []string
	for _, e := range c.edits {
		if !slices.Contains(out, e.Path) {
			out = append(out, e.Path)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(c.files)) {
		out = append(out, p)
	}
	return out
}

// snapshot is the files of a change as they were before it: restore puts
// them back (and removes the files it created).
type snapshot map[string]*[]byte

func (l *implLoop) snapshot(paths []string) snapshot {
	s := snapshot{}
	for _, p := range paths {
		if data, err := l.d.Work.FS().ReadFile(p); err == nil {
			s[p] = &data
		} else {
			s[p] = nil
		}
	}
	return s
}

func (l *implLoop) restore(s snapshot) error {
	var errs []error
	for p, data := range s {
		if data == nil {
			if err := l.d.Work.FS().Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		errs = append(errs, l.d.Work.FS().Restore(p, *data))
	}
	return errors.Join(errs...)
}

// landing is what became of a change.
type landing struct {
	// landed: the change is on disk and every file parses that parsed
	// before it.
	landed bool
	// text is what the model reads: the edits' results, the changed lines,
	// and what the checks found or that the change was reverted.
	text string
	// introduced is what the checks found that was not there before the
	// change ("" when nothing).
	introduced string
	changed    []editedAt
	snap       snapshot
	base       workspace.Checks // the checks' state before the change
}

// land writes a change, then holds it against the state before it: a file
// that parsed and no longer does is put back as it was (so the file on disk
// always parses), and the fast checks report only the problems the change
// introduced. Nothing is left half-written.
func (l *implLoop) land(ctx context.Context, c change) landing {
	paths := c.paths()
	snap := l.snapshot(paths)
	parsedBefore := map[string]bool{}
	for _, p := range paths {
		parsedBefore[p] = snap[p] == nil || l.parses(ctx, p, *snap[p]) == nil
	}
	base := l.checkBaseline(ctx, paths)
	var b strings.Builder
	var changed []editedAt
	if len(c.edits) > 0 {
		stripped := false
		for i := range c.edits {
			var did bool
			if c.edits[i], did = workspace.StripLineNumbers(c.edits[i]); did {
				stripped = true
			}
		}
		results, err := l.d.Work.FS().Apply(c.edits)
		if err != nil {
			l.hint = l.editFailed(c.edits)
			return landing{text: "error: " + err.Error() + "\nNo file was changed."}
		}
		for _, r := range results {
			b.WriteString(r.String() + "\n")
			changed = append(changed, editedAt{r.Path, r.Line})
		}
		if stripped {
			b.WriteString("(the NNNN| line numbers you copied into SEARCH were removed: leave them out)\n")
		}
	}
	for _, p := range slices.Sorted(maps.Keys(c.files)) {
		content := c.files[p]
		if err := l.d.Work.FS().WriteFile(p, []byte(content)); err != nil {
			_ = l.restore(snap)
			return landing{text: "error: " + err.Error() + "\nNo file was changed."}
		}
		verb := "wrote"
		if snap[p] == nil {
			verb = "created"
		}
		if said := c.said[p]; said != "" {
			b.WriteString(said + "\n")
		} else {
			fmt.Fprintf(&b, "%s %s (%d lines)\n", verb, p, strings.Count(content, "\n"))
		}
		changed = append(changed, editedAt{p, max(1, c.lines[p])})
	}
	b.WriteString(l.tidy(slices.Sorted(maps.Keys(c.files)), snap))
	for _, p := range paths {
		data, err := l.d.Work.FS().ReadFile(p)
		if err != nil || !parsedBefore[p] {
			continue
		}
		var se *splice.SyntaxError
		if perr := l.parses(ctx, p, data); errors.As(perr, &se) {
			if rerr := l.restore(snap); rerr != nil {
				return landing{text: fmt.Sprintf("error: this edit broke the parse of %s (%v) and putting the file back failed: %v", p, se, rerr)}
			}
			l.failStreak++
			return landing{text: fmt.Sprintf("error: this edit was reverted: it broke the parse of %s (%v).\n%s", p, se, l.brokenView(p, data, se.Line)) +
				"No file was changed. Write the code again, complete."}
		}
	}
	l.failStreak = 0
	for _, p := range paths {
		l.touch(p)
	}
	land := landing{landed: true, changed: changed, snap: snap, base: base}
	b.WriteString(l.afterEdit(changed))
	if len(l.d.Settings.SyntaxChecks) > 0 {
		after := workspace.RunChecks(ctx, l.d.Sandbox, l.d.Work.Dir(), paths, l.d.Settings.SyntaxChecks)
		land.introduced = after.Introduced(base, l.d.Work.Dir(), checkReportBytes)
		l.d.emitCheck(ctx, l.t, paths, land.introduced)
		l.keepChecks(after, paths)
		if land.introduced != "" {
			b.WriteString("This edit introduced these problems; fix them before anything else:\n" + land.introduced + "\n")
		} else if open := after.Introduced(l.checkStart, l.d.Work.Dir(), 0); open != "" {
			b.WriteString("(The checks still report problems your earlier edits introduced; see above.)\n")
		}
	}
	land.text = strings.TrimSpace(b.String())
	return land
}

// tidy mends the mechanical slips in the files a change wrote whole (missing
// standard imports, tests copied from the test file beside it) and says
// what it did, for the model to learn from. SEARCH/REPLACE edits are left
// alone: in a tool loop an import may come one edit before its use.
func (l *implLoop) tidy(paths []string, snap snapshot) string {
	var b strings.Builder
	for _, p := range paths {
		data, err := l.d.Work.FS().ReadFile(p)
		if err != nil {
			continue
		}
		var old string
		if before := snap[p]; before != nil {
			old = string(*before)
		}
		r := tidy.File(p, old, string(data), l.neighbours(p))
		if len(r.Notes) == 0 || r.Content == string(data) {
			continue
		}
		if err := l.d.Work.FS().WriteFile(p, []byte(r.Content)); err != nil {
			continue // the file stays as the model wrote it
		}
		fmt.Fprintf(&b, "(lemmings %s in %s)\n", strings.Join(r.Notes, "; "), p)
	}
	return b.String()
}

// neighbourFiles bounds what tidy reads beside a file.
const neighbourFiles = 40

// neighbours are the files of p's folder with its extension, and the task's
// target files: what declares the package's names and the tests.
func (l *implLoop) neighbours(p string) map[string]string {
	out := map[string]string{}
	read := func(f string) {
		if f == p || len(out) >= neighbourFiles {
			return
		}
		if data, err := l.d.Work.FS().ReadFile(f); err == nil && len(data) <= maxNeighbourBytes {
			out[f] = string(data)
		}
	}
	for _, f := range CleanFiles(l.t.TargetFiles) {
		read(f)
	}
	if entries, err := l.d.Work.FS().List(path.Dir(p), neighbourFiles*4); err == nil || len(entries) > 0 {
		for _, e := range entries {
			if !e.Dir && path.Dir(e.Path) == path.Dir(p) && path.Ext(e.Path) == path.Ext(p) {
				read(e.Path)
			}
		}
	}
	return out
}

// undo puts a landed change back, with the checks' baseline it had.
func (l *implLoop) undo(land landing) error {
	if !land.landed {
		return nil
	}
	l.checkLast = cloneChecks(land.base)
	return l.restore(land.snap)
}

func cloneChecks(c workspace.Checks) workspace.Checks {
	return workspace.Checks{Parse: maps.Clone(c.Parse), Failed: maps.Clone(c.Failed), Ran: slices.Clone(c.Ran)}
}

// parses checks a file's text with its language's parser: nil when it
// parses or no parser serves it.
func (l *implLoop) parses(ctx context.Context, p string, data []byte) error {
	err := l.parser().Check(ctx, p, data)
	var se *splice.SyntaxError
	if errors.As(err, &se) {
		return err
	}
	return nil
}

// parser reads units and checks parses (Deps.Parser).
func (l *implLoop) parser() splice.Parser { return l.d.Parser }

// ParserFor is the parser of a run: Python through lemmings' own python3
// (splice.Python), never an interpreter a gate of the repository's names
// (the parser runs outside the sandbox).
func ParserFor() splice.Parser {
	return splice.Parser{}
}

// checkBaseline is the checks' state of paths before a change: what the
// last check found for commands already run in this attempt, else a run on
// the tree as it is now.
func (l *implLoop) checkBaseline(ctx context.Context, paths []string) workspace.Checks {
	checks := l.d.Settings.SyntaxChecks
	if len(checks) == 0 {
		return workspace.Checks{}
	}
	if l.checkLast.Failed == nil {
		l.checkLast = workspace.Checks{Parse: map[string]string{}, Failed: map[string]string{}}
		l.checkStart = workspace.Checks{Parse: map[string]string{}, Failed: map[string]string{}}
	}
	var missing []string
	for _, p := range paths {
		for _, cmd := range workspace.CheckCommands([]string{p}, checks) {
			if !slices.Contains(l.checkLast.Ran, cmd) {
				missing = append(missing, p)
			}
		}
		if strings.HasSuffix(p, ".go") && !slices.Contains(l.checkLast.Ran, "parse "+p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		now := workspace.RunChecks(ctx, l.d.Sandbox, l.d.Work.Dir(), missing, checks)
		l.keepChecks(now, missing)
		maps.Copy(l.checkStart.Parse, now.Parse)
		maps.Copy(l.checkStart.Failed, now.Failed)
	}
	return cloneChecks(l.checkLast)
}

// keepChecks makes a check's findings the baseline of the next change.
func (l *implLoop) keepChecks(c workspace.Checks, paths []string) {
	for _, p := range paths {
		if !strings.HasSuffix(p, ".go") {
			continue
		}
		delete(l.checkLast.Parse, p)
		if msg, ok := c.Parse[p]; ok {
			l.checkLast.Parse[p] = msg
		}
		if !slices.Contains(l.checkLast.Ran, "parse "+p) {
			l.checkLast.Ran = append(l.checkLast.Ran, "parse "+p)
		}
	}
	for _, cmd := range c.Ran {
		delete(l.checkLast.Failed, cmd)
		if out, ok := c.Failed[cmd]; ok {
			l.checkLast.Failed[cmd] = out
		}
		if !slices.Contains(l.checkLast.Ran, cmd) {
			l.checkLast.Ran = append(l.checkLast.Ran, cmd)
		}
	}
}

// brokenView shows the lines around where a reverted edit broke the parse.
func (l *implLoop) brokenView(p string, data []byte, line int) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf("Your version of %s around line %d (not kept):\n%s", p, line, numberedFrom(string(data), max(1, line-3), 7))
}
