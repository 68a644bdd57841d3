package workspace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/pathglob"
	"github.com/lemmings-dev/lemmings/internal/textutil"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// Limits of Grep: bigger files are skipped, longer lines cut.
const (
	DefaultMaxMatches = 100
	maxGrepFileSize   = 2 << 20
	maxMatchLineLen   = 300
)

// Match is one line found by Grep.
type Match struct {
	Path string // repository-relative, slash-separated
	Line int    // 1-based
	Text string // the line, cut to a few hundred characters
}

// Grep searches the repository's text files for a regular expression (Go
// syntax, e.g. `(?i)func\s+main`), in files whose path matches pathGlob
// ("" for all; "*.go" matches file names anywhere, "testdata" a directory
// anywhere; "cmd/**/*.go", "internal/" or "internal/store" match from the
// root, a directory selecting everything below it). It skips binary and very large files, .git/,
// .lemmings/ and, in a git work tree, what .gitignore ignores. When there
// are more than maxMatches (≤ 0: DefaultMaxMatches), the first maxMatches
// are returned with an error wrapping ErrTruncated.
func (f *FS) Grep(ctx context.Context, pattern, pathGlob string, maxMatches int) ([]Match, error) {
	if maxMatches <= 0 {
		maxMatches = DefaultMaxMatches
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q (Go syntax): %w", pattern, err)
	}
	glob, err := compileGlob(pathGlob)
	if err != nil {
		return nil, err
	}
	files, err := f.files(ctx, ".")
	if err != nil {
		return nil, fmt.Errorf("grep: %w", err)
	}
	var matches []Match
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return matches, fmt.Errorf("grep: %w", err)
		}
		if glob != nil && !glob(p) {
			continue
		}
		abs := filepath.Join(f.root, filepath.FromSlash(p))
		st, err := os.Lstat(abs)
		if err != nil || !st.Mode().IsRegular() || st.Size() > maxGrepFileSize {
			continue
		}
		data, err := safefile.ReadFileUnder(f.root, filepath.FromSlash(p))
		if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), maxGrepFileSize+1)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			if !re.Match(line) {
				continue
			}
			if len(matches) == maxMatches {
				return matches, fmt.Errorf("search stopped after %d matches; narrow the pattern or the path glob: %w", maxMatches, ErrTruncated)
			}
			matches = append(matches, Match{Path: p, Line: n, Text: textutil.Clip(string(bytes.TrimRight(line, "\r")), maxMatchLineLen)})
		}
	}
	return matches, nil
}

// compileGlob turns a path filter into a matcher in the dialect of package
// pathglob (that of .gitignore): "*.go" matches file names anywhere,
// "testdata" a directory anywhere, "cmd/**/*.go" from the root, and a
// directory that matches selects everything below it. nil selects everything.
func compileGlob(glob string) (func(string) bool, error) {
	glob = strings.TrimSpace(glob)
	for strings.HasPrefix(glob, "./") {
		glob = glob[2:]
	}
	if glob == "" || glob == "." || glob == "**" || glob == "*" {
		return nil, nil
	}
	g, err := pathglob.Compile(glob)
	if err != nil {
		return nil, err
	}
	return func(p string) bool { return g.Match(p, false) }, nil
}
