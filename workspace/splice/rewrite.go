package splice

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// fragUnit is a unit of a reply with its text.
type fragUnit struct {
	Unit
	text string
}

// fragment is what a reply's code declares.
type fragment struct {
	units   []fragUnit
	imports []string // Go: `"fmt"`, `x "pkg"`; Python: whole import lines
	// wholeFile: a Go reply with a package clause.
	wholeFile bool
}

// Problem is a reply that cannot be spliced, said so the model can fix it.
type Problem struct{ Msg string }

func (p *Problem) Error() string { return p.Msg }

func problemf(format string, args ...any) error { return &Problem{Msg: fmt.Sprintf(format, args...)} }

// Request is one rewrite: the file as it is, the unit the model was shown
// (Target, "" when none) and the code it gave back.
type Request struct {
	Path   string
	Src    string
	Target string
	Code   string
	// Rename says whether the task allows a unit to take this new name (nil:
	// never). A reply that renames the target otherwise is refused.
	Rename func(name string) bool
	// Others says whether the reply may rewrite a unit of the file other
	// than Target (nil: any). A unit it gives back unchanged is left alone;
	// one it changes that Others refuses makes the reply a Problem, never
	// a splice over the original.
	Others func(name string) bool
	// Add says the reply adds new units after Target rather than rewriting
	// it: a reply of one new unit is not a rename of Target, and Target is
	// one more unit the reply may rewrite only as Others allows.
	Add bool
	// Owner, with Add, is the class a bare Python def of the reply belongs
	// to: it is that class's method (new, or the one of that name), never a
	// namesake elsewhere in the file.
	Owner string
}

// Result is the file after the rewrite.
type Result struct {
	Content  string
	Line     int      // first changed line
	Replaced []string // units replaced, as named in the file
	Added    []string // units the reply added
	Renamed  string   // "Old → New" when the target was renamed
	Whole    bool     // the reply was the whole file
}

// Rewrite splices the units of a reply's code into the file by name: each
// unit the file has is replaced whole (gofmt'ed for Go, re-indented for
// Python), new ones are added after the target, imports the code declares
// are added when missing. A reply that declares every unit of the file with
// a package clause (Go) or all its units (Python) replaces the file. The
// result must parse. A reply that cannot be used is a *Problem; a file
// without a parser, or that does not parse now, is ErrNoParser.
func (p Parser) Rewrite(ctx context.Context, r Request) (Result, error) {
	lang := Language(r.Path)
	if lang == "" {
		return Result{}, ErrNoParser
	}
	fileUnits, err := p.Units(ctx, r.Path, []byte(r.Src))
	var se *SyntaxError
	if errors.As(err, &se) {
		return Result{}, fmt.Errorf("%w: %s does not parse now (%v)", ErrNoParser, r.Path, se)
	}
	if err != nil {
		return Result{}, err
	}
	code := strings.Trim(strings.ReplaceAll(r.Code, "\r\n", "\n"), "\n")
	var frag fragment
	if lang == "go" {
		frag, err = goFragment(code)
	} else {
		frag, err = p.pyFragment(ctx, code)
	}
	if errors.As(err, &se) {
		return Result{}, problemf("the code you wrote does not parse (%v of your block); write the whole unit again, complete", se)
	}
	if err != nil {
		return Result{}, err
	}
	if len(frag.units) == 0 {
		return Result{}, problemf("your block declares no function, method or type: write the whole unit, from its first line (%s) to its last", declWord(lang))
	}
	target, hasTarget := Named(fileUnits, r.Target)

	matched := make([]*Unit, len(frag.units))
	used := map[string]int{}
	var unmatched []int
	for i, fu := range frag.units {
		u, ok := matchUnit(fileUnits, fu.Unit, target, hasTarget)
		if r.Add && r.Owner != "" && lang == "python" && !strings.Contains(fu.Name, ".") {
			u, ok = Unit{}, false
			for _, v := range fileUnits {
				if v.Name == r.Owner+"."+fu.Name {
					u, ok = v, true
				}
			}
		}
		if !ok {
			unmatched = append(unmatched, i)
			continue
		}
		if j, dup := used[u.Name]; dup {
			return Result{}, problemf("your block declares %s twice (units %d and %d): write it once", u.Name, j+1, i+1)
		}
		used[u.Name] = i
		matched[i] = &u
	}
	if covers(fileUnits, used) && (lang == "python" || frag.wholeFile) && len(unmatched) == 0 {
		content := code + "\n"
		if err := p.Check(ctx, r.Path, []byte(content)); err != nil {
			return Result{}, problemf("the file you wrote does not parse: %v", err)
		}
		return Result{Content: content, Line: firstDiff(r.Src, content), Whole: true, Replaced: slices.Sorted(maps.Keys(used))}, nil
	}
	res := Result{}
	if hasTarget && len(unmatched) == 1 && len(used) == 0 && !r.Add {
		nu := frag.units[unmatched[0]]
		if r.Rename == nil || !r.Rename(nu.Short()) {
			return Result{}, problemf("your block declares %s, but %s was asked for and the task does not rename it: keep the name %s. To add a new %s, write %s whole and the new one after it", nu.Name, target.Name, target.Short(), declWord(lang), target.Name)
		}
		matched[unmatched[0]] = &target
		unmatched = nil
		res.Renamed = target.Name + " → " + nu.Name
	}

	type edit struct {
		start, end int // lines replaced; end < start inserts before start
		text       string
	}
	var edits []edit
	anchor := Unit{End: strings.Count(strings.TrimRight(r.Src, "\n"), "\n") + 1}
	if hasTarget {
		anchor = target
	}
	srcLines := strings.Split(r.Src, "\n")
	for i, fu := range frag.units {
		u := matched[i]
		if u == nil {
			continue
		}
		if r.Add || !(hasTarget && u.Name == target.Name) {
			was := strings.Join(srcLines[u.Start-1:min(u.End, len(srcLines))], "\n")
			if sameCode(was, fu.text) {
				continue // given back as it is: nothing to splice
			}
			if r.Others != nil && !r.Others(u.Name) && !r.Others(u.Short()) {
				what := "the asked-for unit"
				switch {
				case r.Add:
					what = "the new declaration the task asks for"
				case hasTarget:
					what = target.Name
				}
				return Result{}, problemf("your block also rewrites %s, which the task does not ask to change: write only %s (and a new %s after it, if the task adds one), nothing else of the file", u.Name, what, declWord(lang))
			}
		}
		text := shape(lang, fu, u.Indent)
		start := u.Start
		if fu.Start == fu.Decl && u.Start < u.Decl {
			start = u.Decl // the reply left out the doc comment or decorators: keep them
		}
		edits = append(edits, edit{start, u.End, text})
		res.Replaced = append(res.Replaced, u.Name)
		if !hasTarget || !slices.Contains(res.Replaced, target.Name) {
			anchor = *u
		}
	}
	sep := "\n"
	if lang == "python" && anchor.Indent == "" {
		sep = "\n\n"
	}
	for _, i := range unmatched {
		fu := frag.units[i]
		edits = append(edits, edit{anchor.End + 1, anchor.End, sep + shape(lang, fu, anchor.Indent)})
		res.Added = append(res.Added, fu.Name)
	}
	sort.SliceStable(edits, func(a, b int) bool { return edits[a].start > edits[b].start })
	for k := 1; k < len(edits); k++ {
		if edits[k].end >= edits[k-1].start && edits[k].end >= edits[k].start {
			return Result{}, problemf("your block rewrites a unit and a unit inside it (a class and its method): write only one of them")
		}
	}
	lines := strings.Split(strings.TrimRight(r.Src, "\n"), "\n")
	res.Line = len(lines) + 1
	for _, e := range edits {
		tail := slices.Clone(lines[min(e.end, len(lines)):])
		lines = append(append(lines[:e.start-1], strings.Split(e.text, "\n")...), tail...)
		res.Line = min(res.Line, e.start)
	}
	content := strings.Join(lines, "\n") + "\n"
	if lang == "go" {
		content = addGoImports(content, frag.imports)
	} else {
		content = addPyImports(content, frag.imports, fileUnits)
	}
	if err := p.Check(ctx, r.Path, []byte(content)); err != nil {
		return Result{}, problemf("%s would not parse with your code in place (%v): write the whole unit again, complete", r.Path, err)
	}
	res.Content = content
	return res, nil
}

// matchUnit finds the file's unit a reply's unit rewrites: the target when
// their short names agree (a Python method comes back as a bare def), else
// the same full name, else the one unit of that short name.
func matchUnit(units []Unit, fu, target Unit, hasTarget bool) (Unit, bool) {
	if hasTarget && fu.Short() == target.Short() && (fu.Name == target.Name || !strings.Contains(fu.Name, ".")) {
		return target, true
	}
	for _, u := range units {
		if u.Name == fu.Name {
			return u, true
		}
	}
	if !strings.Contains(fu.Name, ".") {
		return Named(units, fu.Name)
	}
	return Unit{}, false
}

// covers says whether the reply rewrote every unit of the file: each one
// itself or the unit around it (a Python class with its methods).
func covers(units []Unit, used map[string]int) bool {
	for _, u := range units {
		if _, ok := used[u.Name]; ok {
			continue
		}
		inside := false
		for _, v := range units {
			if _, ok := used[v.Name]; ok && v.Start <= u.Start && u.End <= v.End {
				inside = true
			}
		}
		if !inside {
			return false
		}
	}
	return len(units) > 0
}

// shape is a reply unit's text as it goes into the file.
func shape(lang string, fu fragUnit, ind string) string {
	if lang == "go" {
		return gofmtUnit(fu.text)
	}
	return indent(dedent(fu.text), ind)
}

// addPyImports adds import lines the file lacks after its last top-level
// import, or before its first unit.
func addPyImports(src string, imports []string, units []Unit) string {
	lines := strings.Split(src, "\n")
	have := map[string]bool{}
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "from ") {
			have[strings.TrimSpace(l)] = true
			last = i
		}
	}
	var add []string
	for _, imp := range imports {
		if !have[imp] {
			have[imp] = true
			add = append(add, imp)
		}
	}
	if len(add) == 0 {
		return src
	}
	at := last + 1
	if last < 0 {
		at = 0
		if len(units) > 0 {
			at = units[0].Start - 1
		}
		add = append(add, "", "")
	}
	out := append(append(slices.Clone(lines[:at]), add...), lines[at:]...)
	return strings.Join(out, "\n")
}

func declWord(lang string) string {
	if lang == "go" {
		return "func, type, var or const"
	}
	return "def or class"
}

// sameCode says whether two texts are the same code but for white space.
func sameCode(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

func firstDiff(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl))
}
