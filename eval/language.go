package eval

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Language says how the exercises of one language are recognised and tested.
type Language struct {
	Name string
	// Exts are the file extensions of its solution files.
	Exts []string
	// Test is run with `sh -c` in the exercise folder; exit 0 means passed.
	Test string
	// Check, when set, is run once (sh -c) to see the toolchain works, in
	// the sandbox, from an empty folder of its own (never the current
	// folder, where a benchmark checkout's pytest.py would be imported);
	// Needs are the programs that must be on PATH.
	Check string
	Needs []string
	// Install says how to get the toolchain when it is missing.
	Install string
	// Unskip rewrites a test file so skipped tests run (Exercism marks all
	// but the first test of a JavaScript exercise as skipped).
	Unskip func(string) string
}

// Languages is the set of languages an eval knows, by name.
type Languages map[string]Language

// DefaultLanguages are the languages lemmings eval knows out of the box. The
// test commands are Aider's benchmark's, with -count=1 so Go never answers
// from its test cache.
func DefaultLanguages() Languages {
	return Languages{
		"go": {Name: "go", Exts: []string{".go"}, Test: "go test -count=1 ./...", Needs: []string{"go"},
			Install: "install the Go toolchain and put go on PATH"},
		"python": {Name: "python", Exts: []string{".py"}, Test: "python3 -m pytest -q -p no:cacheprovider",
			Check: "python3 -m pytest --version", Needs: []string{"python3"},
			Install: "install Python 3 and pytest (python3 -m pip install pytest)"},
		"javascript": {Name: "javascript", Exts: []string{".js", ".mjs", ".cjs"},
			Test:  "npm install --silent --no-audit --no-fund --no-progress && npm test",
			Needs: []string{"node", "npm"}, Install: "install Node.js with npm (the tests install their packages with npm install)",
			Unskip: unskipJS},
		"rust": {Name: "rust", Exts: []string{".rs"}, Test: "cargo test -- --include-ignored", Needs: []string{"cargo"},
			Install: "install Rust with cargo (rustup)"},
	}
}

// extLanguages names languages lemmings knows by extension but has no test
// command for, so the fix can say which --test-command to give.
var extLanguages = map[string]string{
	".java": "java", ".kt": "kotlin", ".cpp": "cpp", ".cc": "cpp", ".hpp": "cpp", ".h": "cpp", ".c": "c",
	".ts": "typescript", ".rb": "ruby", ".cs": "csharp", ".swift": "swift", ".ex": "elixir", ".hs": "haskell",
}

// unskipJS turns Jest's skipped tests (xtest, xit) into running ones, as
// Aider's harness does.
func unskipJS(s string) string {
	r := strings.NewReplacer("xtest(", "test(", "xit(", "it(", "xdescribe(", "describe(")
	return r.Replace(s)
}

// WithTestCommand returns a copy of ls where language name is tested with
// command; an unknown name becomes a new language found by the folder it is in
// (…/<name>/exercises/…).
func (ls Languages) WithTestCommand(name, command string) Languages {
	out := make(Languages, len(ls)+1)
	for k, v := range ls {
		out[k] = v
	}
	l, ok := out[name]
	if !ok {
		l = Language{Name: name}
		for ext, n := range extLanguages {
			if n == name {
				l.Exts = append(l.Exts, ext)
			}
		}
		sort.Strings(l.Exts)
	}
	l.Test, l.Check = command, ""
	if f := strings.Fields(command); len(f) > 0 && !strings.ContainsAny(f[0], "=$;&|") {
		l.Needs = []string{f[0]}
	} else {
		l.Needs = nil
	}
	if l.Install == "" {
		l.Install = "install the toolchain that runs " + command
	}
	out[name] = l
	return out
}

// Names lists the languages' names, sorted.
func (ls Languages) Names() []string {
	var names []string
	for n := range ls {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// detect names the exercise's language: by its solution files' extensions,
// else by a folder of its path named after a language (the polyglot
// benchmark's <language>/exercises/practice/<slug>). known is false when no
// test command is known for it; name may still say what it looks like.
func (ls Languages) detect(dir string, solution []string) (name string, known bool) {
	for _, f := range solution {
		ext := strings.ToLower(filepath.Ext(f))
		for _, l := range ls {
			for _, e := range l.Exts {
				if e == ext {
					return l.Name, true
				}
			}
		}
		if n, ok := extLanguages[ext]; ok {
			name = n
		}
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, ok := ls[filepath.Base(d)]; ok {
			return filepath.Base(d), true
		}
	}
	return name, false
}

// toolchains checks each language's toolchain once per eval.
type toolchains struct {
	mu   sync.Mutex
	seen map[string]error
}

// checkTimeout bounds a language's toolchain check.
const checkTimeout = time.Minute

// check says why lang cannot be tested on this machine (nil: it can). Its
// Check runs confined by box, as the exercises' tests do, in an empty
// private folder: what it imports or reads comes from the toolchain, never
// from the folder lemmings was started in.
func (t *toolchains) check(ctx context.Context, box *sandbox.Box, l Language) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err, ok := t.seen[l.Name]; ok {
		return err
	}
	if t.seen == nil {
		t.seen = map[string]error{}
	}
	err := func() error {
		for _, p := range l.Needs {
			if _, err := exec.LookPath(p); err != nil {
				return fmt.Errorf("%s is not on PATH", p)
			}
		}
		if l.Check == "" {
			return nil
		}
		dir, err := os.MkdirTemp("", "lemmings-eval-check-")
		if err != nil {
			return fmt.Errorf("a folder for `%s`: %w", l.Check, err)
		}
		defer os.RemoveAll(dir)
		r := workspace.RunGate(ctx, box, dir, workspace.Gate{Name: "check", Command: l.Check, Timeout: checkTimeout}, 4<<10)
		if !r.Passed {
			return fmt.Errorf("`%s` failed (exit %d): %s", l.Check, r.ExitCode, textutil.FirstLine(strings.TrimSpace(r.Output)))
		}
		return nil
	}()
	if ctx.Err() == nil {
		t.seen[l.Name] = err
	}
	return err
}
