package implementor

// A task that adds a method (a function, a property) to a type or class of
// a file large enough to be edited by unit. Shown the type's one unit and
// asked to rewrite it "with a new one after it", a small coder rewrote the
// package's constructor from scratch, and it was spliced over the real one
// (issue 47: every test panicked). An addition is asked for as its users
// see the type — its declaration, its constructor, its methods' signatures
// and a sibling for the style — and for the new declaration alone, which is
// spliced in after the type's last method; a reply that rewrites anything
// the task does not name is refused (splice.Request.Others).

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// grainAdd: a new declaration, added after the unit it belongs with.
const grainAdd = "add"

// Bounds of what an addition's view shows whole.
const (
	addShowLines    = 40 // a constructor or sibling longer than this is shown by its signature
	addSignatures   = 30 // methods listed by signature, at most
	addWindowWords  = 6  // how far before a new name a word that asks for it may stand
	addMinNameChars = 3
)

// addition is a declaration the task adds to a type or class of the file.
type addition struct {
	owner  splice.Unit // the type or class the new declaration belongs to
	name   string      // the new declaration's name
	anchor splice.Unit // the unit it goes after: the owner's last method, or the owner
	kind   string      // "method", "property" or "function"
}

// addWords ask for a new declaration; fieldWords for a change inside the
// type (a struct field, an option), which is a rewrite of the type itself.
var (
	addWords   = regexp.MustCompile(`(?i)\b(?:add|adds|adding|new|introduce|give|gives|provide|expose|implement|define|create|support)\b`)
	fieldWords = regexp.MustCompile(`(?i)\b(?:fields?|attributes?|members?|options?|arguments?|parameters?|flags?|keys?|constants?|variables?|settings?)\b`)
	declWords  = regexp.MustCompile(`(?i)\b(method|property|function|func|accessor|getter|helper)s?\b`)
	clauseEnd  = regexp.MustCompile(`[.;:!?](?:\s|$)|\n`)
)

// taskAddition finds the declaration a task adds: a name written as code
// that the file does not define, asked for by a word shortly before it
// ("add a `Prerelease` method", "give Parser a read-only `format`
// property"), not said to be a field or an option (a change inside the
// type), and a type or class of the file the task names for it to belong
// to.
func taskAddition(units []splice.Unit, text string) (addition, bool) {
	defined := map[string]bool{}
	for _, u := range units {
		defined[u.Name], defined[u.Short()] = true, true
		for _, n := range u.Names {
			defined[n] = true
		}
	}
	for _, loc := range identifier.FindAllStringIndex(text, -1) {
		name := text[loc[0]:loc[1]]
		if len(name) < addMinNameChars || strings.Contains(name, ".") || defined[name] || !looksLikeCode(text, loc[0], loc[1]) {
			continue
		}
		before := lastWords(text[:loc[0]], addWindowWords)
		after := text[loc[1]:min(len(text), loc[1]+80)]
		if m := clauseEnd.FindStringIndex(after); m != nil {
			after = after[:m[0]]
		}
		if !addWords.MatchString(before) || fieldWords.MatchString(lastWords(before, 3)) || fieldWords.MatchString(after) {
			continue
		}
		owner, ok := namedOwner(units, text, loc[0])
		if !ok {
			continue
		}
		a := addition{owner: owner, name: name, anchor: owner, kind: "method"}
		if m := declWords.FindStringSubmatch(before + " " + after); m != nil && strings.EqualFold(m[1], "property") {
			a.kind = "property"
		}
		for _, u := range units {
			if strings.HasPrefix(u.Name, owner.Name+".") && (a.anchor.Name == owner.Name || u.Start > a.anchor.Start) {
				a.anchor = u
			}
		}
		return a, true
	}
	return addition{}, false
}

// lastWords is the end of s, its last n words.
func lastWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[max(0, len(f)-n):], " ")
}

// namedOwner is the type or class the task names nearest to position at.
func namedOwner(units []splice.Unit, text string, at int) (splice.Unit, bool) {
	best, dist := splice.Unit{}, -1
	for _, loc := range identifier.FindAllStringIndex(text, -1) {
		w, _, _ := strings.Cut(text[loc[0]:loc[1]], ".") // Parser.format names Parser
		for _, u := range units {
			if (u.Kind == "type" || u.Kind == "class") && u.Name == w {
				if d := abs(loc[0] - at); dist < 0 || d < dist {
					best, dist = u, d
				}
			}
		}
	}
	return best, dist >= 0
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// addView shows the owner as a user of it sees it: its declaration (a
// Python class's header and constructor), its constructors, its methods'
// signatures and the method before the new one, whole, for the style.
func addView(p, old string, g grain) string {
	lines := strings.Split(strings.TrimRight(old, "\n"), "\n")
	text := func(u splice.Unit) string { return strings.Join(lines[u.Start-1:min(u.End, len(lines))], "\n") }
	sig := func(u splice.Unit) string {
		s := strings.TrimSpace(lines[min(u.Decl, len(lines))-1])
		return strings.TrimSuffix(strings.TrimSuffix(s, "{"), " ")
	}
	a := g.add
	owner := a.owner
	fence, lang := fenceFor(p), langOf(p)
	py := splice.Language(p) == "python"
	var methods, ctors []splice.Unit
	for _, u := range g.units {
		switch {
		case strings.HasPrefix(u.Name, owner.Name+"."):
			methods = append(methods, u)
		case !py && u.Kind == "func" && returnsType(sig(u), owner.Name):
			ctors = append(ctors, u)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n%s has %d lines. What the new %s %s of %s goes with, as it is now:\n%s%s\n", p, len(lines), a.kind, a.name, owner.Name, fence, lang)
	if py {
		// The class's lines up to its first method, then its constructor.
		end := owner.End
		for _, m := range methods {
			end = min(end, m.Start-1)
		}
		b.WriteString(strings.TrimRight(strings.Join(lines[owner.Start-1:max(owner.Start, end)], "\n"), "\n"))
		for _, m := range methods {
			if m.Short() == "__init__" && m.Lines() <= addShowLines {
				b.WriteString("\n\n" + text(m))
			}
		}
	} else {
		b.WriteString(text(owner))
		for _, c := range ctors {
			if c.Lines() <= addShowLines {
				b.WriteString("\n\n" + text(c))
			} else {
				b.WriteString("\n\n" + sig(c) + " { … }")
			}
		}
	}
	fmt.Fprintf(&b, "\n%s", fence)
	if len(methods) > 0 {
		fmt.Fprintf(&b, "\n\nThe methods of %s:\n", owner.Name)
		for i, m := range methods {
			if i == addSignatures {
				fmt.Fprintf(&b, "… and %d more\n", len(methods)-i)
				break
			}
			b.WriteString(sig(m) + "\n")
		}
		if sib := a.anchor; sib.Name != owner.Name && sib.Lines() <= addShowLines {
			fmt.Fprintf(&b, "\nThe new %s goes after %s (lines %d-%d):\n%s%s\n%s\n%s", a.kind, sib.Name, sib.Start, sib.End, fence, lang, text(sib), fence)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// returnsType says whether a Go function's signature returns the type:
// the type is named after its parameter list.
func returnsType(sig, typ string) bool {
	open := strings.IndexByte(sig, '(')
	if open < 0 {
		return false
	}
	depth := 0
	for i := open; i < len(sig); i++ {
		switch sig[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return regexp.MustCompile(`\b` + regexp.QuoteMeta(typ) + `\b`).MatchString(sig[i+1:])
			}
		}
	}
	return false
}

// addRequest asks for the new declaration alone.
func addRequest(p string, g grain, fix bool) string {
	what := "that does what the task asks"
	if fix {
		what = "with the fix"
	}
	return fmt.Sprintf("Write the new %s %s of %s %s, in one %s%s fenced block: only the new %s (and a helper it needs), nothing else of %s.",
		g.add.kind, g.add.name, g.add.owner.Name, what, fenceFor(p), langOf(p), g.add.kind, p)
}

// addAllowed is what an addition's reply may rewrite besides adding: what
// the task names, but not the anchor the new code goes after unless named.
func (rb *requestBuilder) addAllowed(g grain) func(string) bool {
	return func(name string) bool {
		if slices.Contains([]string{g.add.name, g.add.owner.Name + "." + g.add.name}, name) {
			return true
		}
		return rb.renameAllowed(name)
	}
}
