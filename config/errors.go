package config

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong (or, as a warning, worth knowing) in the
// configuration. File is a path, "env NAME" or "flags"; Line is 0 when the
// source has no lines; Key is the dotted key ("roles.primary.model").
type Problem struct {
	File     string
	Line     int
	Key      string
	Message  string
	Accepted string
}

// String renders the problem as "file:line: key: message (accepted: …)",
// leaving out the parts that are empty.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	if p.Accepted != "" {
		fmt.Fprintf(&b, " (accepted: %s)", p.Accepted)
	}
	return b.String()
}

// Error is returned by Load and Validate; it lists every problem found, not
// just the first.
type Error struct {
	Problems []Problem
}

// Error prints one line per problem.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// problems collects problems in order, dropping exact duplicates (a value
// checked when its file is read and again on the merged configuration).
type problems struct {
	list []Problem
	seen map[Problem]bool
}

func (ps *problems) add(p Problem) {
	if ps.seen == nil {
		ps.seen = map[Problem]bool{}
	}
	if ps.seen[p] {
		return
	}
	ps.seen[p] = true
	ps.list = append(ps.list, p)
}

// hasKey reports whether a problem is about key, or a key under it or above it.
func (ps *problems) hasKey(key string) bool {
	for _, p := range ps.list {
		if p.Key != "" && (p.Key == key || strings.HasPrefix(p.Key, key+".") || strings.HasPrefix(key, p.Key+".")) {
			return true
		}
	}
	return false
}

// err returns the problems grouped by source, in the order the sources were
// read, and by line within a file; nil if there are none.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	rank := map[string]int{}
	for _, p := range ps.list {
		if _, ok := rank[p.File]; !ok {
			rank[p.File] = len(rank)
		}
	}
	out := append([]Problem(nil), ps.list...)
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].File] != rank[out[j].File] {
			return rank[out[i].File] < rank[out[j].File]
		}
		return out[i].Line < out[j].Line
	})
	return &Error{Problems: out}
}

func joinAccepted(items []string) string { return strings.Join(items, ", ") }
