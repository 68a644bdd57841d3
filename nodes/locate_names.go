package nodes

// Placing a remit by the names it writes: the symbols it names and the
// files that define them, or the file of their siblings (locate.go has the
// order of the signs).

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// remitIdent finds identifier-like words: `Add`, `is_leap`, `Stack.Push`.
var remitIdent = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// placeWords are identifiers too common to place a remit by: a repository
// that defines `main` or `test` does not mean the remit is about them.
var placeWords = map[string]bool{
	"main": true, "init": true, "test": true, "tests": true, "run": true, "the": true, "a": true, "it": true,
	"is": true, "to": true, "of": true, "and": true, "in": true, "for": true, "on": true, "new": true, "New": true,
	"String": true, "Error": true, "self": true, "this": true, "setup": true, "__init__": true,
}

// remitIdentifiers are the words of a remit that could name a symbol, each
// part of a dotted name too (`Stack.Push` gives Stack and Push).
func remitIdentifiers(remit string) []string {
	var out []string
	for _, w := range remitIdent.FindAllString(remit, -1) {
		if len(w) < 2 || placeWords[w] {
			continue
		}
		out = appendNew(out, w)
	}
	return out
}

// addCue asks for something new; the name after it (within a few words)
// is one the change adds, so where it is defined now is not where the
// change goes ("add a method Prerelease to Constraint": Version has one).
var addCue = regexp.MustCompile(`(?i)\b(?:add|adds|adding|new|introduce|create|implement|define|provide|expose|give)\b`)

// withoutAdded drops from names those the remit asks to add.
func withoutAdded(names []string, remit string) []string {
	adds := map[string]bool{}
	for _, loc := range remitIdent.FindAllStringIndex(remit, -1) {
		words := strings.Fields(remit[:loc[0]])
		if addCue.MatchString(strings.Join(words[max(0, len(words)-4):], " ")) {
			adds[remit[loc[0]:loc[1]]] = true
		}
	}
	var out []string
	for _, n := range names {
		if !adds[n] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return names // nothing but new names: they are all there is to go by
	}
	return out
}

// camelWords splits an identifier into its words: BytesBase64 → Bytes,
// Base64; text_unmarshaller → text, unmarshaller.
var camelWord = regexp.MustCompile(`[A-Z]+[a-z0-9]*|[a-z][a-z0-9]*`)

// siblingWords are the words two names share at their start or their end
// (BytesBase64 and BytesHex: Bytes; TextUnmarshallerHookFunc and
// StringToTimeHookFunc: Hook Func), counted only when they say something.
func siblingWords(a, b string) int {
	wa, wb := camelWord.FindAllString(a, -1), camelWord.FindAllString(b, -1)
	pre, suf := 0, 0
	for pre < len(wa) && pre < len(wb) && strings.EqualFold(wa[pre], wb[pre]) {
		pre++
	}
	for suf < len(wa) && suf < len(wb) && strings.EqualFold(wa[len(wa)-1-suf], wb[len(wb)-1-suf]) {
		suf++
	}
	n := max(pre, suf)
	shared := wa[:pre]
	if suf > pre {
		shared = wa[len(wa)-suf:]
	}
	if n == 0 || n >= len(wa) || len(strings.Join(shared, "")) < 5 {
		return 0 // nothing shared, the same name, or too little to say
	}
	return n
}

// bySiblings places a remit that adds new names (defined nowhere yet)
// beside the names they are of a family with: the file that defines the
// most of their siblings, when one clearly does ("add BytesBase64 … as the
// BytesHex family has them" goes in the file of BytesHex).
func bySiblings(files []sourceFile, names []string, remit string) (string, string) {
	defined := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Defs {
			defined[d] = true
		}
	}
	var fresh []string
	for _, n := range names {
		if !defined[n] && len(camelWord.FindAllString(n, -1)) > 1 && addedName(remit, n) {
			fresh = append(fresh, n)
		}
	}
	if len(fresh) == 0 {
		return "", ""
	}
	score := map[string]int{}
	kin := map[string][]string{}
	for _, f := range files {
		if f.Test {
			continue
		}
		for _, d := range f.Defs {
			for _, n := range fresh {
				if siblingWords(n, d) > 0 {
					score[f.Path]++
					if len(kin[f.Path]) < 3 && !slices.Contains(kin[f.Path], d) {
						kin[f.Path] = append(kin[f.Path], d)
					}
					break
				}
			}
		}
	}
	best, second, file := 0, 0, ""
	for p, n := range score {
		switch {
		case n > best || n == best && p < file:
			if n > best {
				second = best
			}
			best, file = n, p
		case n > second:
			second = n
		}
	}
	if best < 2 || 2*best < 3*second {
		return "", ""
	}
	return file, fmt.Sprintf("%s goes beside %s in %s", strings.Join(fresh, ", "), strings.Join(kin[file], ", "), file)
}

// addedName says whether the remit asks to add the name: an add cue
// earlier in its sentence.
func addedName(remit, name string) bool {
	for _, loc := range regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).FindAllStringIndex(remit, -1) {
		sentence := remit[:loc[0]]
		if i := strings.LastIndex(sentence, ". "); i >= 0 {
			sentence = sentence[i:]
		}
		if addCue.MatchString(sentence) {
			return true
		}
	}
	return false
}

// bySymbols finds the non-test files that define the names: the files whose
// definitions weigh most, each name weighed by how few source files use it
// (a package's core type, used everywhere, says less than the one function
// the remit is about), when the names are specific enough (a name every file
// defines places nothing). within limits the search to those files.
func bySymbols(files []sourceFile, names []string, within []string) (change, matched []string) {
	score := map[string]float64{}
	for _, name := range names {
		var definers []string
		for _, f := range files {
			if f.Test || (within != nil && !slices.Contains(within, f.Path)) {
				continue
			}
			if slices.Contains(f.Defs, name) {
				definers = append(definers, f.Path)
			}
		}
		if len(definers) == 0 || len(definers) > locateMaxTargets {
			continue
		}
		// A lower-case English word that a file happens to define (`add`,
		// `count`) counts only when the remit writes it as code would.
		matched = append(matched, name)
		w := rarity(files, name)
		for _, p := range definers {
			score[p] += w
		}
	}
	if len(score) == 0 {
		return nil, nil
	}
	best := 0.0
	for _, n := range score {
		best = max(best, n)
	}
	for p, n := range score {
		if n >= best*0.999 {
			change = append(change, p)
		}
	}
	sort.Strings(change)
	return change, matched
}

// rarity weighs a name by the source files (not tests) that use it: ln of
// their count over those that use it, at least a little.
func rarity(files []sourceFile, name string) float64 {
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	n, uses := 0, 0
	for _, f := range files {
		if f.Test {
			continue
		}
		n++
		if word.MatchString(f.Text) {
			uses++
		}
	}
	return max(math.Log(float64(n+1)/float64(max(uses, 1))), 0.1)
}
