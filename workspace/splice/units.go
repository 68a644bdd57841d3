// Package splice finds the units of a source file (functions, methods, types,
// classes) with the language's own parser and replaces one unit by new text
// taken from a model's reply, so a weak model rewrites a function whole
// instead of copying SEARCH text or a whole long file. Go is read with
// go/parser; Python with its own ast module, through lemmings' own python3,
// isolated (an embedded script prints the units as JSON). Other
// languages have no parser here: callers fall back to SEARCH/REPLACE.
package splice

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Unit is one declaration of a file, with its doc comment (Go) or decorators
// (Python) included in its line range.
type Unit struct {
	Kind string // func, method, type, var, const (Go); def, method, class (Python)
	// Name is the name the model sees and gives back: Mean, Stats.Add for a
	// method (the receiver's type or the class before the dot).
	Name string
	// Names are every name a grouped declaration declares (Go's var ( … )).
	Names []string
	// Start and End are its 1-based lines, inclusive; Decl is the line of
	// the declaration itself (after its doc comment or decorators).
	Start, End, Decl int
	// Indent is the leading white space of its first line (Python methods).
	Indent string
}

// Lines is how many lines it spans.
func (u Unit) Lines() int { return u.End - u.Start + 1 }

// Short is the name without its receiver or class.
func (u Unit) Short() string {
	if i := strings.LastIndexByte(u.Name, '.'); i >= 0 {
		return u.Name[i+1:]
	}
	return u.Name
}

// ErrNoParser: the file's language has no parser here.
var ErrNoParser = errors.New("no parser for this language")

// SyntaxError is source that does not parse, located.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("line %d:%d: %s", e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Language is the parser that serves path: "go", "python" or "".
func Language(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return "go"
	case ".py", ".pyi":
		return "python"
	}
	return ""
}

// Parser reads units. Python is the interpreter to run for Python files:
// "" is lemmings' own (the package's Python); tests name another.
type Parser struct {
	Python string
}

// Units lists the units of a file in source order; a *SyntaxError when it
// does not parse, ErrNoParser for other languages.
func (p Parser) Units(ctx context.Context, name string, src []byte) ([]Unit, error) {
	switch Language(name) {
	case "go":
		return goUnits(name, src)
	case "python":
		return p.pyUnits(ctx, src)
	}
	return nil, ErrNoParser
}

// Check says whether src parses: nil, a *SyntaxError, ErrNoParser, or the
// error that kept the parser from running.
func (p Parser) Check(ctx context.Context, name string, src []byte) error {
	_, err := p.Units(ctx, name, src)
	return err
}

// Named finds the unit a model or a task names: "Mean", "func Mean",
// "Stats.Add", "(*Stats).Add", "Add" (a method, when only one has that name).
// ok is false when none or several match.
func Named(units []Unit, name string) (Unit, bool) {
	name = normalizeName(name)
	if name == "" {
		return Unit{}, false
	}
	var short []Unit
	for _, u := range units {
		if u.Name == name {
			return u, true
		}
		for _, n := range u.Names {
			if n == name {
				return u, true
			}
		}
		if !strings.Contains(name, ".") && u.Short() == name {
			short = append(short, u)
		}
	}
	if len(short) == 1 {
		return short[0], true
	}
	return Unit{}, false
}

// At is the innermost unit that spans line.
func At(units []Unit, line int) (Unit, bool) {
	var best Unit
	found := false
	for _, u := range units {
		if u.Start <= line && line <= u.End && (!found || u.Lines() < best.Lines()) {
			best, found = u, true
		}
	}
	return best, found
}

// normalizeName strips what models put around a name: "func ", "def ",
// "(*T).", parentheses and backquotes.
func normalizeName(s string) string {
	s = strings.Trim(strings.TrimSpace(s), "`'\"")
	for _, kw := range []string{"func ", "def ", "class ", "type ", "async def "} {
		s = strings.TrimPrefix(s, kw)
	}
	if strings.HasPrefix(s, "(") { // (*Stats).Add or (s *Stats) Add
		if i := strings.Index(s, ")"); i > 0 {
			recv := strings.Fields(strings.Trim(s[1:i], "*"))
			rest := strings.TrimLeft(s[i+1:], ". ")
			if len(recv) > 0 {
				s = strings.TrimLeft(recv[len(recv)-1], "*") + "." + rest
			}
		}
	}
	if i := strings.IndexAny(s, "( :["); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
