package nodes

// Placing a remit by the tests: those that fail at the start, and those
// beside the placed files that call what the remit names (locate.go has the
// order of the signs).

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/workspace"
)

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
