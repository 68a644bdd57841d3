// Package pathglob is the one glob dialect of lemmings, for every place that
// selects repository paths by pattern: the deny list of supervisors, the path
// filter of the workspace's grep and list tools, and the .gitignore rules the
// index applies outside a git work tree.
//
// The dialect is that of .gitignore, with the matching of a single pattern
// done by github.com/bmatcuk/doublestar/v4 ("*", "?", "[a-z]", "[!a-z]",
// "{a,b}", "\" escapes, "**" spanning directories):
//
//   - a pattern without "/" matches any element of the path ("*.pem" matches
//     "certs/server.pem"; "testdata" matches "x/testdata/y.go");
//   - a pattern with "/" in it, or starting with "/", matches from the root
//     ("cmd/**/*.go", "/build");
//   - a pattern ending in "/" matches directories only;
//   - a directory that matches selects everything below it ("internal/",
//     "secrets/**", "credentials*").
package pathglob

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Glob is a compiled pattern.
type Glob struct {
	pattern  string // without the leading and trailing "/"
	anchored bool   // matches from the root rather than any element
	dirOnly  bool   // matches directories only
}

// Compile checks pattern and says how it matches. An empty pattern (or "/")
// is an error: the callers decide what an empty filter means.
func Compile(pattern string) (Glob, error) {
	p := strings.TrimSpace(pattern)
	g := Glob{}
	if strings.HasSuffix(p, "/") {
		g.dirOnly, p = true, strings.TrimRight(p, "/")
	}
	g.anchored = strings.Contains(p, "/")
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return Glob{}, fmt.Errorf("%q is not a valid glob: it is empty", pattern)
	}
	if !doublestar.ValidatePattern(p) {
		return Glob{}, fmt.Errorf("%q is not a valid glob: an unclosed [ or {, or a trailing \\", pattern)
	}
	g.pattern = p
	return g, nil
}

// Match reports whether the slash-separated relative path rel, or a directory
// above it, matches. isDir says whether rel itself is a directory.
func (g Glob) Match(rel string, isDir bool) bool {
	rel = strings.Trim(rel, "/")
	for p := rel; p != "" && p != "."; {
		if (isDir || p != rel || !g.dirOnly) && g.matchOne(p) {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return false
}

func (g Glob) matchOne(p string) bool {
	if !g.anchored {
		p = p[strings.LastIndexByte(p, '/')+1:]
	}
	ok, _ := doublestar.Match(g.pattern, p) // validated in Compile
	return ok
}
