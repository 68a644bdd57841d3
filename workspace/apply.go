package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// EditResult reports how one edit of a batch was applied.
type EditResult struct {
	Path    string // as given in the edit
	Match   string // MatchExact, MatchWhitespace, MatchIndentation, MatchCreate or MatchAppend
	Line    int    // 1-based line where the change starts
	Created bool   // the file did not exist before this batch
}

// String tells the model what happened, and when the match was tolerant,
// that it should check the result.
func (r EditResult) String() string {
	switch r.Match {
	case MatchCreate:
		return r.Path + ": created"
	case MatchAppend:
		if r.Created {
			return r.Path + ": created"
		}
		return fmt.Sprintf("%s: appended at line %d", r.Path, r.Line)
	case MatchWhitespace:
		return fmt.Sprintf("%s: edited at line %d (matched ignoring whitespace differences; check the result)", r.Path, r.Line)
	case MatchIndentation:
		return fmt.Sprintf("%s: edited at line %d (matched ignoring indentation, replacement re-indented to fit; check the result)", r.Path, r.Line)
	default:
		return fmt.Sprintf("%s: edited at line %d", r.Path, r.Line)
	}
}

// pendingFile is a file's state while a batch is applied in memory.
type pendingFile struct {
	rel     string
	shown   string
	orig    []byte
	existed bool
	content string
}

// Apply applies edits in order (several may touch the same file) in memory,
// then writes each changed file atomically. It is all or nothing: if any
// edit fails, nothing is written and the *EditError says which edit failed
// and why. A SEARCH text on a file that does not exist is an error; an empty
// SEARCH creates the file. A Go file is written as gofmt prints it
// (gofmtWritten says when it is not).
func (f *FS) Apply(edits []Edit) ([]EditResult, error) {
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, fmt.Errorf("apply edits: %w", err)
	}
	defer root.Close()

	files := map[string]*pendingFile{}
	var order []*pendingFile
	results := make([]EditResult, 0, len(edits))
	for i, e := range edits {
		fail := func(err error) ([]EditResult, error) {
			return nil, &EditError{Index: i, Total: len(edits), Path: e.Path, Err: err}
		}
		rel, err := f.resolve(e.Path, false)
		if err != nil {
			return fail(err)
		}
		pf := files[rel]
		if pf == nil {
			pf = &pendingFile{rel: rel, shown: e.Path}
			fi, err := root.Stat(rel)
			switch {
			case err == nil && fi.IsDir():
				return fail(&PathError{Path: e.Path, Reason: "it is a directory, not a file"})
			case err == nil:
				data, err := safefile.ReadFileIn(root, rel)
				if err != nil {
					return fail(readError(e.Path, err))
				}
				if bytes.IndexByte(data, 0) >= 0 {
					return fail(fmt.Errorf("%s is a binary file and cannot be edited as text", e.Path))
				}
				pf.orig, pf.existed, pf.content = data, true, string(data)
			case errors.Is(err, fs.ErrNotExist):
			default:
				return fail(fmt.Errorf("stat %s: %w", e.Path, err))
			}
			files[rel] = pf
			order = append(order, pf)
		}
		if !pf.existed && pf.content == "" && e.Search != "" && !isBlank(e.Search) {
			return fail(fmt.Errorf("%s does not exist; to create it, leave the SEARCH section empty and put the whole file in REPLACE: %w", e.Path, fs.ErrNotExist))
		}
		out, info, err := applyEdit(pf.content, e)
		if err != nil {
			return fail(err)
		}
		pf.content = out
		results = append(results, EditResult{Path: e.Path, Match: info.kind, Line: info.line, Created: !pf.existed})
	}
	// Go files land as gofmt prints them, once all their edits are in (an edit's SEARCH was
	// written against the text before it).
	for _, pf := range order {
		pf.content = string(gofmtWritten(pf.rel, pf.orig, pf.existed, []byte(pf.content)))
	}

	for _, pf := range order {
		if err := f.checkSize(pf.shown, len(pf.content)); err != nil {
			return nil, fmt.Errorf("apply edits: nothing was changed: %w", err)
		}
	}
	var written []*pendingFile
	for _, pf := range order {
		if pf.existed && pf.content == string(pf.orig) {
			continue
		}
		if err := writeAtomic(root, pf.shown, pf.rel, []byte(pf.content)); err != nil {
			// Put back what was already written so the batch stays all or nothing.
			var rollback []error
			for _, w := range written {
				var rerr error
				if w.existed {
					rerr = writeAtomic(root, w.shown, w.rel, w.orig)
				} else {
					rerr = root.Remove(w.rel)
				}
				if rerr != nil {
					rollback = append(rollback, rerr)
				}
			}
			if len(rollback) > 0 {
				return nil, fmt.Errorf("apply edits: %w (and rolling back failed: %w)", err, errors.Join(rollback...))
			}
			return nil, fmt.Errorf("apply edits: nothing was changed: %w", err)
		}
		written = append(written, pf)
	}
	return results, nil
}
