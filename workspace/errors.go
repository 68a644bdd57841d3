package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// PathError is returned when a path given by an agent is refused: absolute,
// escaping the repository, leading outside it through a symbolic link, or
// inside .git/ or .lemmings/. Its message is written for the model to read.
type PathError struct {
	Path   string // the path as given
	Reason string // why it was refused and what to do instead
}

func (e *PathError) Error() string {
	return fmt.Sprintf("path %q refused: %s", e.Path, e.Reason)
}

// SpecialFileError: a file of the work tree is a FIFO, a socket or a
// device where a regular file belongs (a gate or the model made it).
// lemmings never opens one (a FIFO blocks its reader forever), cannot diff
// or commit it; the attempt that left it fails with this error, naming it.
type SpecialFileError struct {
	Path string
	Mode fs.FileMode
}

func (e *SpecialFileError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: lemmings does not read, diff or commit special files (remove it, or write a regular file there)",
		e.Path, safefile.Kind(e.Mode))
}

// Is makes errors.Is(err, safefile.ErrNotRegular) hold.
func (e *SpecialFileError) Is(target error) bool { return target == safefile.ErrNotRegular }

// NoMatchError is returned by ApplyEdit when the SEARCH text matches nowhere,
// not even with whitespace tolerance. Closest holds the lines of the file that
// resemble it most (starting at StartLine, 1-based) so the model can copy the
// exact text; Closest is empty when nothing is similar enough.
type NoMatchError struct {
	Path       string
	Closest    string
	StartLine  int
	Similarity float64 // 0..1, of Closest to the SEARCH text
	// AlreadyApplied is set when the REPLACE text is already in the file,
	// which usually means the edit was applied before.
	AlreadyApplied bool
}

func (e *NoMatchError) Error() string {
	var b strings.Builder
	name := e.Path
	if name == "" {
		name = "the file"
	}
	fmt.Fprintf(&b, "the SEARCH text was not found in %s.", name)
	if e.Closest != "" {
		lines := strings.Split(strings.TrimSuffix(e.Closest, "\n"), "\n")
		fmt.Fprintf(&b, "\nDid you mean lines %d-%d (%.0f%% similar)?\n",
			e.StartLine, e.StartLine+len(lines)-1, e.Similarity*100)
		for i, l := range lines {
			fmt.Fprintf(&b, "%5d| %s\n", e.StartLine+i, l)
		}
		b.WriteString("The SEARCH text must match the file exactly, line for line (comments and indentation included); copy it from the lines above without the line numbers.")
	} else {
		b.WriteString(" Nothing in the file resembles it: read the file again and copy the SEARCH text from it.")
	}
	if e.AlreadyApplied {
		b.WriteString("\nNote: the REPLACE text is already in the file; this edit may have been applied already.")
	}
	return b.String()
}

// AmbiguousMatchError is returned by ApplyEdit when the SEARCH text matches
// more than one place, so the edit cannot know which one is meant.
type AmbiguousMatchError struct {
	Path  string
	Count int   // how many places match
	Lines []int // 1-based first line of each match
}

func (e *AmbiguousMatchError) Error() string {
	name := e.Path
	if name == "" {
		name = "the file"
	}
	nums := make([]string, len(e.Lines))
	for i, l := range e.Lines {
		nums[i] = fmt.Sprint(l)
	}
	return fmt.Sprintf("the SEARCH text matches %d places in %s (lines %s); include more surrounding lines in the SEARCH text so that it matches exactly one place",
		e.Count, name, strings.Join(nums, ", "))
}

// EditError says which edit of a batch failed in FS.Apply; nothing was
// written. Err is the cause (*NoMatchError, *AmbiguousMatchError, *PathError…).
type EditError struct {
	Index int // 0-based position in the batch
	Total int
	Path  string
	Err   error
}

func (e *EditError) Error() string {
	return fmt.Sprintf("edit %d of %d (%s) failed, so no file was changed: %v", e.Index+1, e.Total, e.Path, e.Err)
}

func (e *EditError) Unwrap() error { return e.Err }

// ParseError is returned by ParseEditBlocks for a malformed block.
type ParseError struct {
	Block   int // 1-based block number
	Line    int // 1-based line in the text where the problem was seen
	Problem string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("edit block %d (line %d): %s", e.Block, e.Line, e.Problem)
}

// GitError is a failed git command, with what git printed.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "no output"
	}
	return fmt.Sprintf("git %s: exit %d: %s", strings.Join(e.Args, " "), e.ExitCode, msg)
}

// Sentinel errors; test with errors.Is.
var (
	// ErrNotGitRepo: the directory is not inside a git work tree.
	ErrNotGitRepo = errors.New("not a git repository: lemmings works on a git repository; run `git init` and commit, or pass --dir")
	// ErrBareRepo: the directory is a bare repository (or a .git folder),
	// which has no work tree to branch from.
	ErrBareRepo = errors.New("a bare repository (or a .git folder) has no work tree: lemmings works in a checkout. Clone it (git clone <this repository> <dir>) and run lemmings -C <dir>")
	// ErrNoCommits: the repository has no commit to branch from.
	ErrNoCommits = errors.New("the repository has no commits yet: make a first commit (git add -A && git commit -m \"initial\") so lemmings can branch from it")
	// ErrNothingToCommit: Commit found no change to record.
	ErrNothingToCommit = errors.New("nothing to commit: the work tree has no changes")
	// ErrNoWorktree: neither the worktree nor the branch of a run exists.
	ErrNoWorktree = errors.New("no worktree or branch for this run")
	// ErrWorktreeExists: CreateWorktree found the run's worktree or branch already there.
	ErrWorktreeExists = errors.New("the run's worktree or branch already exists; resume it instead")
	// ErrTruncated: a listing or search stopped at its limit; the results
	// returned with it are valid but incomplete.
	ErrTruncated = errors.New("results truncated at the limit")
)
