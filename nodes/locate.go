package nodes

// Placing a remit: which files its work is in, found by lemmings rather than
// asked of a model. A small coder asked to find the file guesses names from
// the prompt's examples (QWEN-FIRST-RUNS: `helpers.go`, `example.go`); Aider's
// user adds the file to the chat. lemmings looks, in order of how sure each
// sign is: the files the remit names, the definitions of the symbols it names
// (`Add`), the source files the tests that fail at the start point to, and
// the only source file of its language. What it finds becomes the quick
// task's target files, so the direct attempt shows them whole and asks for
// the code in its first call.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Bounds of the repository scan: a placement reads only small source files
// of a repository of modest size; past these it gives up rather than guess.
const (
	locateMaxFiles     = 3000
	locateMaxFileBytes = 256 << 10
	// locateMaxTargets files at most are a placement: more is not one change.
	locateMaxTargets = quickMaxFiles
)

// placer is what placing a remit reads: the work tree, and the gates that
// run in the sandbox at the start when the remit's words do not place it.
type placer struct {
	Work            *workspace.Worktree
	Gates           []workspace.Gate
	Sandbox         *sandbox.Box
	GateOutputBytes int
	// seen keeps the scan and the gates' start result for the placer's
	// later calls (a list remit places each item on the same tree).
	seen *placeSeen
}

type placeSeen struct {
	files    []sourceFile
	scanned  bool
	scanOK   bool
	baseline []workspace.GateResult
	ran      bool
}

func placerOf(d *Deps) placer {
	return placer{Work: d.Work, Gates: d.Gates, Sandbox: d.Sandbox, GateOutputBytes: d.Settings.GateOutputBytes, seen: &placeSeen{}}
}

// placement is where lemmings found a remit's work.
type placement struct {
	// Change are the files to change; Show are tests that pin the behaviour
	// (shown, not changed); Tests are the test files the remit asks tests
	// to be written in (testsAsked), shown as well.
	Change, Show, Tests []string
	// How says what placed it, for the event log and the reason line.
	How string
	// Baseline is the test gates' result at the start, when they were run
	// to place the remit.
	Baseline []workspace.GateResult
}

// placed says whether the remit was placed in a few files.
func (p placement) placed() bool { return len(p.Change) > 0 && len(p.Change) <= locateMaxTargets }

// BaselineFails says whether a test gate failed at the start.
func (p placement) BaselineFails() bool {
	for _, r := range p.Baseline {
		if !r.Passed && !r.Canceled {
			return true
		}
	}
	return false
}

// sourceExts are the languages whose definitions lemmings can read cheaply.
var sourceExts = map[string]string{
	".go": "go", ".py": "python", ".js": "js", ".mjs": "js", ".cjs": "js", ".ts": "js", ".tsx": "js", ".jsx": "js",
	".rs": "rust", ".java": "java", ".kt": "java", ".rb": "ruby", ".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".hpp": "c",
}

// definitionPatterns find the names a file defines, per language: enough to
// match a symbol a remit names, not a parser.
var definitionPatterns = map[string]*regexp.Regexp{
	"go":     regexp.MustCompile(`(?m)^(?:func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)|type\s+([A-Za-z_]\w*)|(?:const|var)\s+([A-Za-z_]\w*)\s)`),
	"python": regexp.MustCompile(`(?m)^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*=`),
	"js":     regexp.MustCompile(`(?m)^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?\s+([A-Za-z_$][\w$]*)|class\s+([A-Za-z_$][\w$]*)|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=)`),
	"rust":   regexp.MustCompile(`(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?(?:fn|struct|enum|trait|type|const|static)\s+([A-Za-z_]\w*)`),
	"java":   regexp.MustCompile(`(?m)^\s*(?:(?:public|private|protected|static|final|abstract)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_]\w*)|^\s+(?:(?:public|private|protected|static|final|synchronized)\s+)+[\w<>\[\], ]+\s+([a-z_]\w*)\s*\(`),
	"ruby":   regexp.MustCompile(`(?m)^\s*(?:def\s+(?:self\.)?([A-Za-z_]\w*[?!]?)|class\s+([A-Z]\w*)|module\s+([A-Z]\w*))`),
	"c":      regexp.MustCompile(`(?m)^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{`),
}

// remitIdent finds identifier-like words: `Add`, `is_leap`, `Stack.Push`.
var remitIdent = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// placeWords are identifiers too common to place a remit by: a repository
// that defines `main` or `test` does not mean the remit is about them.
var placeWords = map[string]bool{
	"main": true, "init": true, "test": true, "tests": true, "run": true, "the": true, "a": true, "it": true,
	"is": true, "to": true, "of": true, "and": true, "in": true, "for": true, "on": true, "new": true, "New": true,
	"String": true, "Error": true, "self": true, "this": true, "setup": true, "__init__": true,
}

// sourceFile is one file of the scan with what it defines.
type sourceFile struct {
	Path string
	Lang string
	Test bool
	Defs []string
	Text string
}

// scanSources reads the repository's small source files and their
// definitions. ok is false when the repository is past the scan's bounds.
func (d placer) scanSources() ([]sourceFile, bool) {
	entries, err := d.Work.FS().List(".", locateMaxFiles)
	if err != nil && !errors.Is(err, workspace.ErrTruncated) {
		return nil, false
	}
	if errors.Is(err, workspace.ErrTruncated) {
		return nil, false
	}
	var out []sourceFile
	for _, e := range entries {
		lang, ok := sourceExts[path.Ext(e.Path)]
		if e.Dir || !ok || e.Size > locateMaxFileBytes || underVendored(e.Path) {
			continue
		}
		data, err := d.Work.FS().ReadFile(e.Path)
		if err != nil {
			continue
		}
		f := sourceFile{Path: e.Path, Lang: lang, Test: isTestFile(e.Path), Text: string(data)}
		for _, m := range definitionPatterns[lang].FindAllStringSubmatch(f.Text, -1) {
			for _, name := range m[1:] {
				if name != "" && !slices.Contains(f.Defs, name) {
					f.Defs = append(f.Defs, name)
				}
			}
		}
		out = append(out, f)
	}
	return out, true
}

// underVendored says whether a path is in a folder of someone else's code.
func underVendored(p string) bool {
	for _, dir := range strings.Split(path.Dir(p), "/") {
		switch dir {
		case "vendor", "node_modules", "third_party", "testdata", "dist", "build", "target", ".venv", "venv":
			return true
		}
	}
	return false
}

// place finds the files a remit's work is in. It runs the test gates at the
// start only when the remit's words did not place it.
func (d placer) place(ctx context.Context, remit string) placement {
	sh := readRemit(remit)
	p := placement{Tests: testsAsked(remit)}
	for _, f := range sh.Files {
		if isTestFile(f) {
			p.Show = appendNew(p.Show, f)
		} else {
			p.Change = appendNew(p.Change, f)
		}
	}
	if len(p.Change) > 0 {
		p.How = "the remit names " + strings.Join(p.Change, ", ")
		return p
	}
	if d.seen == nil {
		d.seen = &placeSeen{}
	}
	if !d.seen.scanned {
		d.seen.files, d.seen.scanOK = d.scanSources()
		d.seen.scanned = true
	}
	files := d.seen.files
	if !d.seen.scanOK {
		return p
	}
	if change, how := bySiblings(files, remitIdentifiers(remit), remit); change != "" {
		p.Change, p.How = []string{change}, how
		p.Show = appendNew(p.Show, testsCalling(files, []string{strings.TrimSuffix(path.Base(change), path.Ext(change))}, p.Change)...)
		return p
	}
	if change, names := bySymbols(files, withoutAdded(remitIdentifiers(remit), remit), nil); len(change) > 0 && len(change) <= locateMaxTargets {
		p.Change = change
		p.How = fmt.Sprintf("%s defined in %s", strings.Join(names, ", "), strings.Join(change, ", "))
		p.Show = appendNew(p.Show, testsCalling(files, names, change)...)
		return p
	}
	if tests := d.testGates(); len(tests) > 0 && ctx.Err() == nil {
		if !d.seen.ran {
			d.seen.baseline, d.seen.ran = workspace.RunGates(ctx, d.Sandbox, d.Work.Dir(), tests, d.GateOutputBytes), true
		}
		p.Baseline = d.seen.baseline
		if change, show, how := byFailingTests(files, p.Baseline); len(change) > 0 {
			p.Change, p.Show, p.How = change, appendNew(p.Show, show...), how
			return p
		}
	}
	var only []string
	for _, f := range files {
		if !f.Test && d.gateLanguage(f.Lang) {
			only = append(only, f.Path)
		}
	}
	if len(only) == 1 {
		p.Change = only
		p.How = "the only source file is " + only[0]
		for _, f := range files {
			if f.Test && path.Dir(f.Path) == path.Dir(only[0]) {
				p.Show = appendNew(p.Show, f.Path)
			}
		}
	}
	return p
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
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

// testsCalling are the test files beside the changed files that use one of
// the names: what pins the behaviour the remit is about.
func testsCalling(files []sourceFile, names, change []string) []string {
	var out []string
	for _, f := range files {
		if !f.Test {
			continue
		}
		near := false
		for _, c := range change {
			if path.Dir(c) == path.Dir(f.Path) || sameStem(c, f.Path) {
				near = true
			}
		}
		if !near {
			continue
		}
		for _, n := range names {
			if strings.Contains(f.Text, n) {
				out = appendNew(out, f.Path)
				break
			}
		}
	}
	return out
}

// sameStem says whether a test file is named for a source file
// (leap.py and test_leap.py, add.go and add_test.go).
func sameStem(src, test string) bool {
	stem := strings.TrimSuffix(path.Base(src), path.Ext(src))
	t := strings.TrimSuffix(path.Base(test), path.Ext(test))
	for _, cut := range []string{"test_", "_test", ".test", ".spec", "Test", "Tests"} {
		t = strings.TrimPrefix(strings.TrimSuffix(t, cut), cut)
	}
	return stem == t
}

// failRef finds file references in test output: `add_test.go:7:`,
// `File "/x/leap.py", line 3`, `FAILED test_leap.py::test_x`.
var failRef = regexp.MustCompile(`(?:File "|^|[\s(])(/?(?:[\w.@+-]+/)*[\w.@+-]+\.(?:go|py|js|mjs|cjs|ts|tsx|jsx|rs|java|kt|rb|c|h|cc|cpp|hpp))(?:"|:|::|\b)`)

// byFailingTests places a remit by the tests that fail at the start: source
// files in their output first (a traceback's frames), else the non-test
// files beside the failing tests that define what those tests call.
func byFailingTests(files []sourceFile, baseline []workspace.GateResult) (change, show []string, how string) {
	byPath := map[string]*sourceFile{}
	for i := range files {
		byPath[files[i].Path] = &files[i]
	}
	resolve := func(ref string) *sourceFile {
		ref = strings.TrimPrefix(ref, "./")
		if f, ok := byPath[ref]; ok {
			return f
		}
		var hit *sourceFile
		for p, f := range byPath { // an absolute path or one relative to a package
			if strings.HasSuffix(p, "/"+ref) || strings.HasSuffix(ref, "/"+p) || path.Base(p) == ref {
				if hit != nil {
					return nil // ambiguous
				}
				hit = f
			}
		}
		return hit
	}
	var tests []*sourceFile
	for _, r := range baseline {
		if r.Passed || r.Canceled {
			continue
		}
		for _, m := range failRef.FindAllStringSubmatch(r.Output, -1) {
			f := resolve(m[1])
			if f == nil {
				continue
			}
			if f.Test {
				if !slices.Contains(tests, f) {
					tests = append(tests, f)
				}
			} else {
				change = appendNew(change, f.Path)
			}
		}
	}
	for _, t := range tests {
		show = appendNew(show, t.Path)
	}
	if len(change) > 0 && len(change) <= locateMaxTargets {
		return change, show, "the failing tests' output points to " + strings.Join(change, ", ")
	}
	change = nil
	// What the failing tests call, defined beside them.
	var within []string
	for _, f := range files {
		for _, t := range tests {
			if !f.Test && (path.Dir(f.Path) == path.Dir(t.Path) || sameStem(f.Path, t.Path)) {
				within = appendNew(within, f.Path)
			}
		}
	}
	if len(within) == 0 {
		return nil, nil, ""
	}
	var called []string
	for _, t := range tests {
		called = appendNew(called, remitIdentifiers(t.Text)...)
	}
	if c, _ := bySymbols(files, called, within); len(c) > 0 && len(c) <= locateMaxTargets {
		names := make([]string, len(tests))
		for i, t := range tests {
			names[i] = t.Path
		}
		return c, show, fmt.Sprintf("%s, which the failing %s call", strings.Join(c, ", "), strings.Join(names, ", "))
	}
	return nil, nil, ""
}

// testGates are the gates that run tests.
func (d placer) testGates() []workspace.Gate {
	var out []workspace.Gate
	for _, g := range d.Gates {
		if strings.Contains(strings.ToLower(g.Name), "test") || strings.Contains(g.Command, "test") {
			out = append(out, g)
		}
	}
	return out
}

// gateLanguage says whether a gate runs code of the language (the only
// source file of a language no gate checks is not the remit's target).
func (d placer) gateLanguage(lang string) bool {
	if len(d.Gates) == 0 {
		return true
	}
	cues := map[string][]string{
		"go": {"go "}, "python": {"pytest", "python", "unittest", "tox", "nox"}, "js": {"npm", "node", "jest", "vitest", "yarn", "pnpm", "bun"},
		"rust": {"cargo"}, "java": {"mvn", "gradle", "java"}, "ruby": {"rake", "rspec", "ruby"}, "c": {"make", "cmake", "ctest", "gcc", "clang"},
	}
	for _, g := range d.Gates {
		for _, cue := range cues[lang] {
			if strings.Contains(g.Command, cue) {
				return true
			}
		}
	}
	return false
}
