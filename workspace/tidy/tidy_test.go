package tidy

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// What Qwen2.5-Coder-0.5B wrote for the builtin hamming exercise: errors.New
// with no import, and the test file's import and test copied in.
const hammingReply = `package hamming

import (
	"testing"
)

// Distance is the Hamming distance of two DNA strands.
func Distance(a, b string) (int, error) {
	if len(a) != len(b) {
		return 0, errors.New("strands must be of equal length")
	}
	return 0, nil
}

// TestDistance is the test.
func TestDistance(t *testing.T) {
	if _, err := Distance("A", "AB"); err == nil {
		t.Fatal("no error")
	}
}
`

const hammingTest = "package hamming\n\nimport \"testing\"\n\nfunc TestDistance(t *testing.T) {}\n"

func TestAGoFileGetsItsMissingImportsAndLosesTheCopiedTests(t *testing.T) {
	r := File("hamming.go", "", hammingReply, map[string]string{"hamming_test.go": hammingTest})
	for _, want := range []string{`"errors"`, "func Distance("} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("tidied file lacks %q:\n%s", want, r.Content)
		}
	}
	for _, gone := range []string{"TestDistance", `"testing"`, "is the test"} {
		if strings.Contains(r.Content, gone) {
			t.Errorf("tidied file still has %q:\n%s", gone, r.Content)
		}
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "hamming.go", r.Content, 0); err != nil {
		t.Fatalf("tidied file does not parse: %v", err)
	}
	notes := strings.Join(r.Notes, "; ")
	for _, want := range []string{"TestDistance", `"errors"`, `"testing"`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not say %s", notes, want)
		}
	}
}

// A file with nothing to mend comes back byte for byte, and so does one that
// does not parse (the landing's parse check reports it).
func TestATidyFileIsLeftAsItIs(t *testing.T) {
	for _, src := range []string{
		"package add\n\nimport \"fmt\"\n\nfunc Add(a, b int) int { fmt.Println(a); return a + b }\n",
		"package add\n\nfunc Add(a, b int) int { return a +\n",
	} {
		if r := File("add.go", "", src, nil); r.Content != src || len(r.Notes) != 0 {
			t.Errorf("changed %q into %q (%v)", src, r.Content, r.Notes)
		}
	}
}

// A name the package declares itself, or a package outside the table, is
// never imported: tidy does not guess.
func TestOnlyTheStandardLibraryIsImported(t *testing.T) {
	src := "package p\n\nfunc F() { strings.ToUpper(\"x\"); yaml.Marshal(nil); sort.Ints(nil) }\n"
	others := map[string]string{"sort.go": "package p\n\nvar sort = struct{ Ints func([]int) }{}\n"}
	r := File("p.go", "", src, others)
	if !strings.Contains(r.Content, `"strings"`) {
		t.Errorf("strings not imported:\n%s", r.Content)
	}
	if strings.Contains(r.Content, "yaml") && strings.Contains(r.Content, `"yaml`) || strings.Contains(r.Content, `"sort"`) {
		t.Errorf("imported what it should not:\n%s", r.Content)
	}
}

// The test file itself is never stripped of its tests.
func TestATestFileKeepsItsTests(t *testing.T) {
	r := File("hamming_test.go", "", hammingTest, map[string]string{"hamming_test.go": hammingTest})
	if !strings.Contains(r.Content, "TestDistance") {
		t.Fatalf("a test file lost its test:\n%s", r.Content)
	}
}

const pyReply = `# Hello World

from unittest import TestCase
import unittest

def hello():
    return "Hello, World!"

class HelloWorldTest(unittest.TestCase):
    def test_say_hi(self):
        self.assertEqual(hello(), "Hello, World!")
`

func TestAPythonFileLosesTheCopiedTestClassAndItsImports(t *testing.T) {
	r := File("hello_world.py", "", pyReply, map[string]string{"hello_world_test.py": "import unittest\n\nclass HelloWorldTest(unittest.TestCase):\n    pass\n"})
	if strings.Contains(r.Content, "HelloWorldTest") || strings.Contains(r.Content, "unittest") {
		t.Errorf("test class or import kept:\n%s", r.Content)
	}
	if !strings.Contains(r.Content, "def hello():\n    return \"Hello, World!\"") {
		t.Errorf("solution lost:\n%s", r.Content)
	}
}

func TestAPythonFileGetsTheModulesItUses(t *testing.T) {
	src := "\"\"\"Armstrong numbers.\"\"\"\n\ndef is_armstrong(n):\n    # see math.pow\n    s = str(n)\n    return n == sum(int(math.pow(int(d), len(s))) for d in s)\n"
	r := File("armstrong.py", "", src, nil)
	if !strings.Contains(r.Content, "\"\"\"Armstrong numbers.\"\"\"\nimport math\n") {
		t.Errorf("math not imported after the docstring:\n%s", r.Content)
	}
	already := "import math as m\n\ndef f():\n    return m.pi + re.sub('a', 'b', 'x')\n"
	if r := File("f.py", "", already, nil); strings.Count(r.Content, "import") != 2 || !strings.Contains(r.Content, "import re") {
		t.Errorf("want re added once:\n%s", r.Content)
	}
	if r := File("g.py", "", "def f(math):\n    return math.pi\n", nil); strings.Contains(r.Content, "import") {
		t.Errorf("a parameter named math was imported over:\n%s", r.Content)
	}
}

func FuzzTidyNeverBreaksAParsingGoFile(f *testing.F) {
	f.Add(hammingReply)
	f.Add("package p\n\nimport \"fmt\"\n\n// c\nfunc TestX() { fmt.Println() }\n")
	f.Fuzz(func(t *testing.T, src string) {
		if _, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ParseComments); err != nil {
			return
		}
		r := File("p.go", "", src, map[string]string{"p_test.go": "package p\n\nfunc TestX() {}\n"})
		if _, err := parser.ParseFile(token.NewFileSet(), "p.go", r.Content, parser.ParseComments); err != nil {
			t.Fatalf("tidy broke the parse: %v\nin:\n%s\nout:\n%s", err, src, r.Content)
		}
	})
}

// A reply stopped before an appended test leaves that test's doc comment at
// the end of the file: it goes.
func TestADanglingTestCommentIsRemoved(t *testing.T) {
	src := "package add\n\n// Add returns the sum.\nfunc Add(a, b int) int { return a + b }\n\n// TestAdd verifies Add.\n"
	r := File("add.go", "", src, nil)
	if strings.Contains(r.Content, "TestAdd") || !strings.Contains(r.Content, "// Add returns the sum.") {
		t.Errorf("got:\n%s", r.Content)
	}
}

// Qwen2.5-Coder-0.5B on python/isogram: the stub's function written as a
// method of a class Solution, so the tests' import failed.
func TestAFunctionWrappedInAPuzzleClassIsTakenOut(t *testing.T) {
	old := "def is_isogram(string):\n    pass\n"
	reply := "from typing import *\n\nclass Solution:\n    def is_isogram(self, string: str) -> bool:\n        seen = set()\n        for c in string.lower():\n            if c.isalpha() and c in seen:\n                return False\n            seen.add(c)\n        return self.ok()\n\n    def ok(self):\n        return True\n"
	r := File("isogram.py", old, reply, nil)
	for _, want := range []string{"\ndef is_isogram(string: str) -> bool:\n    seen = set()", "    return ok()", "\ndef ok():\n    return True"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("lacks %q:\n%s", want, r.Content)
		}
	}
	if strings.Contains(r.Content, "class Solution") || strings.Contains(r.Content, "self") {
		t.Errorf("the class or self is left:\n%s", r.Content)
	}
	// A class that keeps state is the model's design, not a wrapper: left alone.
	stateful := "class Counter:\n    def __init__(self):\n        self.n = 0\n\n    def is_isogram(self, s):\n        self.n += 1\n        return True\n"
	if r := File("isogram.py", old, stateful, nil); r.Content != stateful {
		t.Errorf("a stateful class was taken apart:\n%s", r.Content)
	}
}
