package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
		data, err := os.ReadFile(abs)
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
			matches = append(matches, Match{Path: p, Line: n, Text: cutLine(string(bytes.TrimRight(line, "\r")))})
		}
	}
	return matches, nil
}

func cutLine(s string) string {
	if len(s) <= maxMatchLineLen {
		return s
	}
	cut := maxMatchLineLen
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// compileGlob turns a path glob into a matcher: "**" spans directories,
// "*" and "?" stay within one, "{a,b}" is either; a glob without "/"
// matches the file name or a directory name in the path; one with "/"
// matches from the root, and a directory it matches selects everything below.
func compileGlob(glob string) (func(string) bool, error) {
	glob = strings.TrimSpace(glob)
	for strings.HasPrefix(glob, "./") {
		glob = glob[2:]
	}
	if glob == "" || glob == "." || glob == "**" || glob == "*" {
		return nil, nil
	}
	if strings.HasSuffix(glob, "/") {
		glob += "**"
	}
	baseOnly := !strings.Contains(glob, "/")
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c == '*' && i+1 < len(glob) && glob[i+1] == '*':
			i++
			if i+1 < len(glob) && glob[i+1] == '/' {
				i++
				b.WriteString("(?:.*/)?") // "**/" may match no directory at all
			} else {
				b.WriteString(".*")
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("invalid path glob %q: unbalanced {", glob)
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("invalid path glob %q", glob), err)
	}
	if baseOnly {
		// "*.go" matches the file name; "cmd" also matches a directory on the way.
		return func(p string) bool {
			for _, c := range strings.Split(p, "/") {
				if re.MatchString(c) {
					return true
				}
			}
			return false
		}, nil
	}
	// "src/lib" or "cmd/*" also select everything below what they match.
	return func(p string) bool {
		for {
			if re.MatchString(p) {
				return true
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				return false
			}
			p = p[:i]
		}
	}, nil
}
