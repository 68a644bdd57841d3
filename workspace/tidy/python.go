package tidy

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// pyStd are standard-library modules a small program uses by their name
// (`math.sqrt`): a use with no import gets one.
var pyStd = []string{"math", "re", "string", "itertools", "collections", "functools", "operator", "random",
	"statistics", "fractions", "decimal", "datetime", "json", "sys", "os", "heapq", "bisect", "textwrap", "unicodedata"}

var (
	pyTopDef    = regexp.MustCompile(`^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)`)
	pyImport    = regexp.MustCompile(`^(?:import\s+([\w.]+)(?:\s+as\s+(\w+))?|from\s+([\w.]+)\s+import\s+(.+))$`)
	pyAttrUse   = regexp.MustCompile(`(?:^|[^\w.])([A-Za-z_]\w*)\.[A-Za-z_]`)
	pyAssigned  = regexp.MustCompile(`(?m)^\s*([A-Za-z_]\w*)\s*(?:=[^=]|:)`)
	pyTestNames = regexp.MustCompile(`^(?:Test|test_)`)
	// pyBound finds names a function, loop or handler binds: parameters,
	// loop variables, `as` targets.
	pyBound = regexp.MustCompile(`\bdef\s+\w+\s*\(([^)]*)\)|\bfor\s+([\w\s,()]+?)\s+in\b|\bas\s+(\w+)|\blambda\s+([^:]*):`)
	pyName  = regexp.MustCompile(`[A-Za-z_]\w*`)
)

func pythonFile(p, old, content string, others map[string]string) Result {
	var notes []string
	lines := strings.Split(content, "\n")
	if hoisted, class := hoistFromClass(lines, pythonTopDefs(old)); class != "" {
		lines = hoisted
		notes = append(notes, fmt.Sprintf("took the functions out of class %s: the file defines them at the top level, where the callers look", class))
	}
	if !isPythonTest(p) {
		var dropped []string
		lines, dropped = dropPythonTests(lines, pythonTestDefs(p, others))
		if len(dropped) > 0 {
			notes = append(notes, fmt.Sprintf("removed %s, which the tests define", strings.Join(dropped, ", ")))
			var unused []string
			lines, unused = dropUnusedTestImports(lines)
			if len(unused) > 0 {
				notes = append(notes, "removed the unused import "+strings.Join(unused, ", "))
			}
		}
	}
	var added []string
	lines, added = addPythonImports(lines)
	if len(added) > 0 {
		notes = append(notes, "added the missing import "+strings.Join(added, ", "))
	}
	if len(notes) == 0 {
		return Result{Content: content}
	}
	return Result{Content: strings.Join(lines, "\n"), Notes: notes}
}

// pythonTopDefs are the top-level functions of a Python file.
func pythonTopDefs(src string) []string {
	var out []string
	for _, line := range strings.Split(src, "\n") {
		if m := pyTopFunc.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

var (
	pyTopFunc   = regexp.MustCompile(`^(?:async\s+)?def\s+([A-Za-z_]\w*)`)
	pyClassHead = regexp.MustCompile(`^class\s+([A-Za-z_]\w*)\s*(?:\(\s*(?:object)?\s*\))?\s*:\s*$`)
	pyMethod    = regexp.MustCompile(`^(\s+)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(\s*self\s*(,\s*)?`)
)

// hoistFromClass undoes a small coder's habit from programming-puzzle sites:
// the file's top-level functions (want) written as methods of a new class
// (`class Solution: def is_isogram(self, string)`), so the tests' import of
// is_isogram fails. When a class the reply adds holds only methods, among
// them every wanted function missing at the top level, and uses self for
// nothing but calling its own methods, its methods become top-level
// functions again. It returns the lines and the class's name ("" when it
// changed nothing).
func hoistFromClass(lines []string, want []string) ([]string, string) {
	if len(want) == 0 {
		return lines, ""
	}
	have := map[string]bool{}
	for _, line := range lines {
		if m := pyTopFunc.FindStringSubmatch(line); m != nil {
			have[m[1]] = true
		}
	}
	var missing []string
	for _, w := range want {
		if !have[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) == 0 {
		return lines, ""
	}
	for i, line := range lines {
		m := pyClassHead.FindStringSubmatch(line)
		if m == nil || slices.Contains(want, m[1]) {
			continue
		}
		end := i + 1
		for end < len(lines) && (strings.TrimSpace(lines[end]) == "" || startsIndented(lines[end])) {
			end++
		}
		body := lines[i+1 : end]
		methods := map[string]bool{}
		indent := ""
		onlyMethods := true
		for _, b := range body {
			t := strings.TrimSpace(b)
			if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "@staticmethod") {
				continue
			}
			if mm := pyMethod.FindStringSubmatch(b); mm != nil {
				if indent == "" {
					indent = mm[1]
				}
				if mm[1] == indent {
					methods[mm[2]] = true
					continue
				}
			}
			if indent == "" || !strings.HasPrefix(b, indent+" ") && !strings.HasPrefix(b, indent+"\t") {
				onlyMethods = false // a class attribute or a docstring at the class's level
			}
		}
		covers := true
		for _, w := range missing {
			if !methods[w] {
				covers = false
			}
		}
		text := strings.Join(body, "\n")
		selfUse := regexp.MustCompile(`\bself\.([A-Za-z_]\w*)`)
		for _, u := range selfUse.FindAllStringSubmatch(text, -1) {
			if !methods[u[1]] {
				onlyMethods = false
			}
		}
		if !onlyMethods || !covers || indent == "" {
			continue
		}
		var out []string
		out = append(out, lines[:i]...)
		for _, b := range body {
			b = strings.TrimPrefix(b, indent)
			if mm := pyMethod.FindStringSubmatch(indent + b); mm != nil {
				b = pyMethod.ReplaceAllString(indent+b, "${1}def ${2}(")
				b = strings.TrimPrefix(b, indent)
			}
			b = selfUse.ReplaceAllString(b, "$1")
			out = append(out, b)
		}
		out = append(out, lines[end:]...)
		return out, m[1]
	}
	return lines, ""
}

func isPythonTest(p string) bool {
	base := path.Base(p)
	return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")
}

// pythonTestDefs are the top-level classes and functions of the test files
// shown beside p.
func pythonTestDefs(p string, others map[string]string) map[string]bool {
	defs := map[string]bool{}
	for op, text := range others {
		if !isPythonTest(op) {
			continue
		}
		for _, line := range strings.Split(text, "\n") {
			if m := pyTopDef.FindStringSubmatch(line); m != nil {
				defs[m[1]] = true
			}
		}
	}
	return defs
}

// dropPythonTests removes the top-level blocks (with their decorators) that
// define a test's name: the test classes and functions a small coder copies.
func dropPythonTests(lines []string, testDefs map[string]bool) ([]string, []string) {
	var out, dropped []string
	for i := 0; i < len(lines); i++ {
		m := pyTopDef.FindStringSubmatch(lines[i])
		if m == nil || !(testDefs[m[1]] || pyTestNames.MatchString(m[1]) && strings.Contains(lines[i], "TestCase")) {
			out = append(out, lines[i])
			continue
		}
		// Decorators right above belong to it.
		for len(out) > 0 && strings.HasPrefix(out[len(out)-1], "@") {
			out = out[:len(out)-1]
		}
		dropped = append(dropped, m[1])
		j := i + 1
		for j < len(lines) && (strings.TrimSpace(lines[j]) == "" || startsIndented(lines[j])) {
			j++
		}
		i = j - 1
	}
	return out, dropped
}

func startsIndented(line string) bool { return line != "" && (line[0] == ' ' || line[0] == '\t') }

// dropUnusedTestImports removes `import unittest` and `import pytest` lines
// that nothing left uses.
func dropUnusedTestImports(lines []string) ([]string, []string) {
	body := strings.Join(lines, "\n")
	var out, removed []string
	for _, line := range lines {
		m := pyImport.FindStringSubmatch(strings.TrimSpace(line))
		if m != nil && !startsIndented(line) && (m[1] == "unittest" || m[1] == "pytest" || m[3] == "unittest") {
			name := m[1]
			if m[2] != "" {
				name = m[2]
			}
			used := false
			if m[3] != "" {
				for _, n := range strings.Split(m[4], ",") {
					if f := strings.Fields(n); len(f) > 0 && strings.Count(body, f[len(f)-1]) > 1 {
						used = true
					}
				}
			} else {
				used = strings.Count(body, name+".") > 0
			}
			if !used {
				removed = append(removed, strings.TrimSpace(line))
				continue
			}
		}
		out = append(out, line)
	}
	return out, removed
}

// addPythonImports imports the standard modules the code uses by name and
// neither imports nor defines.
func addPythonImports(lines []string) ([]string, []string) {
	imported := map[string]bool{}
	var code []string
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if m := pyImport.FindStringSubmatch(t); m != nil {
			switch {
			case m[2] != "":
				imported[m[2]] = true
			case m[1] != "":
				imported[strings.Split(m[1], ".")[0]] = true
			default:
				for _, n := range strings.Split(strings.Trim(m[4], "()"), ",") {
					if f := strings.Fields(n); len(f) > 0 {
						imported[f[len(f)-1]] = true
					}
				}
			}
			continue
		}
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		code = append(code, stripPyStrings(line))
	}
	body := strings.Join(code, "\n")
	for _, m := range pyAssigned.FindAllStringSubmatch(body, -1) {
		imported[m[1]] = true
	}
	for _, m := range pyBound.FindAllStringSubmatch(strings.Join(lines, "\n"), -1) {
		for _, group := range m[1:] {
			for _, part := range strings.Split(group, ",") {
				// a parameter's name, not its default or annotation
				if name := pyName.FindString(strings.TrimLeft(part, " *(")); name != "" {
					imported[name] = true
				}
			}
		}
	}
	for _, line := range lines {
		if m := pyTopDef.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			imported[m[1]] = true
		}
	}
	var add []string
	for _, m := range pyAttrUse.FindAllStringSubmatch(body, -1) {
		if slices.Contains(pyStd, m[1]) && !imported[m[1]] && !slices.Contains(add, m[1]) {
			add = append(add, m[1])
		}
	}
	if len(add) == 0 {
		return lines, nil
	}
	slices.Sort(add)
	at := pythonImportAt(lines)
	var stmts []string
	for _, a := range add {
		stmts = append(stmts, "import "+a)
	}
	out := append(slices.Clone(lines[:at]), stmts...)
	if at < len(lines) && strings.TrimSpace(lines[at]) != "" && !pyImport.MatchString(strings.TrimSpace(lines[at])) {
		out = append(out, "")
	}
	return append(out, lines[at:]...), stmts
}

// pythonImportAt is where new imports go: after the module docstring, a
// shebang or encoding line, and any __future__ import.
func pythonImportAt(lines []string) int {
	i := 0
	for i < len(lines) && (strings.HasPrefix(lines[i], "#!") || strings.HasPrefix(lines[i], "# -*-")) {
		i++
	}
	if i < len(lines) {
		t := strings.TrimSpace(lines[i])
		for _, q := range []string{`"""`, `'''`} {
			if strings.HasPrefix(t, q) {
				if strings.Count(t, q) >= 2 && len(t) > 3 {
					return i + 1
				}
				for j := i + 1; j < len(lines); j++ {
					if strings.Contains(lines[j], q) {
						return j + 1
					}
				}
			}
		}
	}
	for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "from __future__") {
		i++
	}
	return i
}

var pyString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)

// stripPyStrings blanks string literals, so "see math.pi" in a message is not
// a use of math.
func stripPyStrings(line string) string { return pyString.ReplaceAllString(line, `""`) }
