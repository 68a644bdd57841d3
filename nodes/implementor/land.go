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

// treeWriter writes a change, holds it against the parse and the checks as they
// were before it, and undoes it; it keeps the edits that failed, which
// decide the grain of the next and end an attempt that keeps failing.
type treeWriter struct {
	*scope
	views       *views
	failedEdits map[string]int  // file → edits that did not apply
	wholeFile   map[string]bool // files whose targeted edits failed twice
	failStreak  int             // edits in a row that did not apply
	// hint is advice on the last failed edit, added after the loop
	// detector has seen the result, so advice that varies does not hide a
	// repeat.
	hint string
	// checkLast is what the fast checks found after the last change (the
	// baseline of the next), checkStart what they found before the first.
	checkLast, checkStart workspace.Checks
}

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

func (tr *treeWriter) snapshot(paths []string) snapshot {
	s := snapshot{}
	for _, p := range paths {
		if data, err := tr.d.Work.FS().ReadFile(p); err == nil {
			s[p] = &data
		} else {
			s[p] = nil
		}
	}
	return s
}

func (tr *treeWriter) restore(s snapshot) error {
	var errs []error
	for p, data := range s {
		if data == nil {
			if err := tr.d.Work.FS().Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		errs = append(errs, tr.d.Work.FS().Restore(p, *data))
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
func (tr *treeWriter) land(ctx context.Context, c change) landing {
	paths := c.paths()
	snap := tr.snapshot(paths)
	parsedBefore := map[string]bool{}
	for _, p := range paths {
		parsedBefore[p] = snap[p] == nil || tr.parses(ctx, p, *snap[p]) == nil
	}
	base := tr.checkBaseline(ctx, paths)
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
		results, err := tr.d.Work.FS().Apply(c.edits)
		if err != nil {
			tr.hint = tr.editFailed(c.edits)
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
		if err := tr.d.Work.FS().WriteFile(p, []byte(content)); err != nil {
			_ = tr.restore(snap)
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
	b.WriteString(tr.tidy(slices.Sorted(maps.Keys(c.files)), snap))
	for _, p := range paths {
		data, err := tr.d.Work.FS().ReadFile(p)
		if err != nil || !parsedBefore[p] {
			continue
		}
		var se *splice.SyntaxError
		if perr := tr.parses(ctx, p, data); errors.As(perr, &se) {
			if rerr := tr.restore(snap); rerr != nil {
				return landing{text: fmt.Sprintf("error: this edit broke the parse of %s (%v) and putting the file back failed: %v", p, se, rerr)}
			}
			tr.failStreak++
			return landing{text: fmt.Sprintf("error: this edit was reverted: it broke the parse of %s (%v).\n%s", p, se, tr.brokenView(p, data, se.Line)) +
				"No file was changed. Write the code again, complete."}
		}
	}
	tr.failStreak = 0
	for _, p := range paths {
		tr.views.touch(p)
	}
	land := landing{landed: true, changed: changed, snap: snap, base: base}
	b.WriteString(tr.views.afterEdit(changed))
	if len(tr.d.Settings.SyntaxChecks) > 0 {
		after := workspace.RunChecks(ctx, tr.d.Sandbox, tr.d.Work.Dir(), paths, tr.d.Settings.SyntaxChecks)
		land.introduced = after.Introduced(base, tr.d.Work.Dir(), checkReportBytes)
		tr.d.emitCheck(ctx, tr.t, paths, land.introduced)
		tr.keepChecks(after, paths)
		if land.introduced != "" {
			b.WriteString("This edit introduced these problems; fix them before anything else:\n" + land.introduced + "\n")
		} else if open := after.Introduced(tr.checkStart, tr.d.Work.Dir(), 0); open != "" {
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
func (tr *treeWriter) tidy(paths []string, snap snapshot) string {
	var b strings.Builder
	for _, p := range paths {
		data, err := tr.d.Work.FS().ReadFile(p)
		if err != nil {
			continue
		}
		var old string
		if before := snap[p]; before != nil {
			old = string(*before)
		}
		r := tidy.File(p, old, string(data), tr.neighbours(p))
		if len(r.Notes) == 0 || r.Content == string(data) {
			continue
		}
		if err := tr.d.Work.FS().WriteFile(p, []byte(r.Content)); err != nil {
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
func (tr *treeWriter) neighbours(p string) map[string]string {
	out := map[string]string{}
	read := func(f string) {
		if f == p || len(out) >= neighbourFiles {
			return
		}
		if data, err := tr.d.Work.FS().ReadFile(f); err == nil && len(data) <= maxNeighbourBytes {
			out[f] = string(data)
		}
	}
	for _, f := range CleanFiles(tr.t.TargetFiles) {
		read(f)
	}
	if entries, err := tr.d.Work.FS().List(path.Dir(p), neighbourFiles*4); err == nil || len(entries) > 0 {
		for _, e := range entries {
			if !e.Dir && path.Dir(e.Path) == path.Dir(p) && path.Ext(e.Path) == path.Ext(p) {
				read(e.Path)
			}
		}
	}
	return out
}

// undo puts a landed change back, with the checks' baseline it had.
func (tr *treeWriter) undo(land landing) error {
	if !land.landed {
		return nil
	}
	tr.checkLast = cloneChecks(land.base)
	return tr.restore(land.snap)
}

func cloneChecks(c workspace.Checks) workspace.Checks {
	return workspace.Checks{Parse: maps.Clone(c.Parse), Failed: maps.Clone(c.Failed), Ran: slices.Clone(c.Ran)}
}

// parses checks a file's text with its language's parser: nil when it
// parses or no parser serves it.
func (tr *treeWriter) parses(ctx context.Context, p string, data []byte) error {
	err := tr.d.Parser.Check(ctx, p, data)
	var se *splice.SyntaxError
	if errors.As(err, &se) {
		return err
	}
	return nil
}

// ParserFor is the parser of a run: Python through lemmings' own python3
// (splice.Python), never an interpreter a gate of the repository's names
// (the parser runs outside the sandbox).
func ParserFor() splice.Parser {
	return splice.Parser{}
}

// checkBaseline is the checks' state of paths before a change: what the
// last check found for commands already run in this attempt, else a run on
// the tree as it is now.
func (tr *treeWriter) checkBaseline(ctx context.Context, paths []string) workspace.Checks {
	checks := tr.d.Settings.SyntaxChecks
	if len(checks) == 0 {
		return workspace.Checks{}
	}
	if tr.checkLast.Failed == nil {
		tr.checkLast = workspace.Checks{Parse: map[string]string{}, Failed: map[string]string{}}
		tr.checkStart = workspace.Checks{Parse: map[string]string{}, Failed: map[string]string{}}
	}
	var missing []string
	for _, p := range paths {
		for _, cmd := range workspace.CheckCommands([]string{p}, checks) {
			if !slices.Contains(tr.checkLast.Ran, cmd) {
				missing = append(missing, p)
			}
		}
		if strings.HasSuffix(p, ".go") && !slices.Contains(tr.checkLast.Ran, "parse "+p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		now := workspace.RunChecks(ctx, tr.d.Sandbox, tr.d.Work.Dir(), missing, checks)
		tr.keepChecks(now, missing)
		maps.Copy(tr.checkStart.Parse, now.Parse)
		maps.Copy(tr.checkStart.Failed, now.Failed)
	}
	return cloneChecks(tr.checkLast)
}

// keepChecks makes a check's findings the baseline of the next change.
func (tr *treeWriter) keepChecks(c workspace.Checks, paths []string) {
	for _, p := range paths {
		if !strings.HasSuffix(p, ".go") {
			continue
		}
		delete(tr.checkLast.Parse, p)
		if msg, ok := c.Parse[p]; ok {
			tr.checkLast.Parse[p] = msg
		}
		if !slices.Contains(tr.checkLast.Ran, "parse "+p) {
			tr.checkLast.Ran = append(tr.checkLast.Ran, "parse "+p)
		}
	}
	for _, cmd := range c.Ran {
		delete(tr.checkLast.Failed, cmd)
		if out, ok := c.Failed[cmd]; ok {
			tr.checkLast.Failed[cmd] = out
		}
		if !slices.Contains(tr.checkLast.Ran, cmd) {
			tr.checkLast.Ran = append(tr.checkLast.Ran, cmd)
		}
	}
}

// brokenView shows the lines around where a reverted edit broke the parse.
func (tr *treeWriter) brokenView(p string, data []byte, line int) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf("Your version of %s around line %d (not kept):\n%s", p, line, numberedFrom(string(data), max(1, line-3), 7))
}

// editFailed counts a failed edit per file; a file whose edits failed twice
// is rewritten whole from then on.
func (tr *treeWriter) editFailed(edits []workspace.Edit) string {
	tr.failStreak++
	hint := "Read the file again and copy the SEARCH lines exactly as they are now."
	for _, e := range edits {
		tr.failedEdits[e.Path]++
		if tr.failedEdits[e.Path] >= 2 && !tr.wholeFile[e.Path] {
			tr.wholeFile[e.Path] = true
			if tr.text {
				hint = fmt.Sprintf("Edits of %s failed twice: the next edit of it asks for the whole file.", e.Path)
			} else {
				hint = fmt.Sprintf("Edits of %s failed twice: rewrite it whole with write_file.", e.Path)
			}
		}
	}
	return hint
}
