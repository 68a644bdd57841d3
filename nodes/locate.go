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
	"path"
	"regexp"
	"slices"
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
