package nodes

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/workspace"
)

const (
	addGo     = "package add\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n"
	addTestGo = "package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"
	addGoMod  = "module example.com/add\n\ngo 1.22\n"
)

func placeIn(t *testing.T, files map[string]string, gates []workspace.Gate, remit string) placement {
	t.Helper()
	d := &Deps{Work: testRepo(t, files), Gates: gates, Settings: DefaultSettings(), Sandbox: sandboxWith(t)}
	return placerOf(d).place(context.Background(), remit)
}

// The remit that the first real coder failed: it names no file, only the
// function. lemmings finds the file that defines Add, and the test beside
// it that calls Add, without asking a model.
func TestARemitIsPlacedByTheSymbolItNames(t *testing.T) {
	t.Parallel()
	p := placeIn(t, map[string]string{"go.mod": addGoMod, "add.go": addGo, "add_test.go": addTestGo,
		"mul.go": "package add\n\nfunc Mul(a, b int) int { return a * b }\n"},
		nil, "Add must return the sum of its arguments; make go test pass")
	if !slices.Equal(p.Change, []string{"add.go"}) {
		t.Fatalf("change %v (%s), want add.go", p.Change, p.How)
	}
	if !slices.Equal(p.Show, []string{"add_test.go"}) {
		t.Errorf("show %v, want the test that calls Add", p.Show)
	}
	if !strings.Contains(p.How, "Add defined in add.go") {
		t.Errorf("how %q", p.How)
	}
	if len(p.Baseline) != 0 {
		t.Errorf("the gates ran though the remit's words placed it: %v", p.Baseline)
	}
}

func TestAPythonRemitIsPlacedByTheFunctionItNames(t *testing.T) {
	t.Parallel()
	p := placeIn(t, map[string]string{
		"calc/ops.py":       "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
		"calc/text.py":      "def shout(s):\n    return s.upper()\n",
		"tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
	}, nil, "add must return the sum of its arguments so that the tests pass")
	if !slices.Equal(p.Change, []string{"calc/ops.py"}) {
		t.Fatalf("change %v (%s), want calc/ops.py", p.Change, p.How)
	}
}

// With no symbol in the remit, the tests that fail at the start point to
// the file: their output names the test file, and the function it calls is
// defined beside it.
func TestARemitIsPlacedByTheTestsThatFail(t *testing.T) {
	t.Parallel()
	gate := workspace.Gate{Name: "test", Command: `echo "--- FAIL: TestAdd (0.00s)"; echo "    add_test.go:7: Add(2, 3) = -1, want 5"; exit 1`}
	p := placeIn(t, map[string]string{"go.mod": addGoMod, "add.go": addGo, "add_test.go": addTestGo,
		"other.go": "package add\n\nfunc Other() {}\n"},
		[]workspace.Gate{gate}, "fix the bug so the build is green")
	if !slices.Equal(p.Change, []string{"add.go"}) {
		t.Fatalf("change %v (%s), want add.go", p.Change, p.How)
	}
	if !p.BaselineFails() || !slices.Contains(p.Show, "add_test.go") {
		t.Errorf("baseline fails %v, show %v", p.BaselineFails(), p.Show)
	}
}

// A traceback's frame in a source file places the remit at once.
func TestATracebackPlacesTheRemit(t *testing.T) {
	t.Parallel()
	gate := workspace.Gate{Name: "test", Command: `printf 'Traceback (most recent call last):\n  File "%s/test_leap.py", line 5, in test_x\n  File "%s/leap.py", line 2, in leap_year\nTypeError: boom\n' "$PWD" "$PWD"; exit 1`}
	p := placeIn(t, map[string]string{"leap.py": "def leap_year(y):\n    return None + 1\n", "helper.py": "def h():\n    pass\n",
		"test_leap.py": "from leap import leap_year\n\n\ndef test_x():\n    assert leap_year(2000)\n"},
		[]workspace.Gate{gate}, "make it work")
	if !slices.Equal(p.Change, []string{"leap.py"}) {
		t.Fatalf("change %v (%s), want leap.py", p.Change, p.How)
	}
}

// The only source file of the gates' language is the target when nothing
// else says.
func TestTheOnlySourceFileIsTheTarget(t *testing.T) {
	t.Parallel()
	gate := workspace.Gate{Name: "test", Command: "true"}
	p := placeIn(t, map[string]string{"go.mod": addGoMod, "add.go": addGo, "add_test.go": addTestGo, "tool.py": "print(1)\n"},
		[]workspace.Gate{{Name: "build", Command: "go build ./..."}, gate}, "make the arithmetic right")
	if !slices.Equal(p.Change, []string{"add.go"}) {
		t.Fatalf("change %v (%s), want add.go", p.Change, p.How)
	}
}

// A name defined in many files, or nowhere, places nothing: lemmings does
// not guess.
func TestAnAmbiguousRemitIsNotPlaced(t *testing.T) {
	t.Parallel()
	files := map[string]string{"go.mod": addGoMod}
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		files[f] = "package add\n\nfunc Parse" + strings.ToUpper(f[:1]) + "() {}\n\ntype Config struct{}\n"
	}
	files["a.go"] = "package add\n\nfunc ParseA() {}\n\ntype Config struct{}\n"
	files["b.go"] = "package b\n\ntype Config struct{}\n"
	files["c.go"] = "package c\n\ntype Config struct{}\n"
	p := placeIn(t, files, nil, "Config must be read from the environment too")
	if p.placed() {
		t.Fatalf("placed in %v (%s): Config is defined in three files", p.Change, p.How)
	}
}

// A file the remit names wins over everything else, tests only shown.
func TestAFileTheRemitNamesIsTheTarget(t *testing.T) {
	t.Parallel()
	p := placeIn(t, map[string]string{"go.mod": addGoMod, "add.go": addGo, "add_test.go": addTestGo},
		nil, "Make the tests in add_test.go pass by editing add.go")
	if !slices.Equal(p.Change, []string{"add.go"}) || !slices.Equal(p.Show, []string{"add_test.go"}) {
		t.Fatalf("change %v show %v", p.Change, p.Show)
	}
}

// "make go test pass" says how the change is checked, not a second change:
// the remit is one task, and once placed it takes the quick path without a
// ScopeAgent call.
func TestAGateClauseIsNotASecondBehaviour(t *testing.T) {
	t.Parallel()
	for _, remit := range []string{
		"Add must return the sum of its arguments; make go test pass",
		"Fix Add so it returns the sum, and make the tests pass.",
	} {
		if sh := readRemit(remit); sh.Behaviours != 1 {
			t.Errorf("%q: %d behaviours, want 1", remit, sh.Behaviours)
		}
	}
	for _, remit := range []string{
		"Add a Sub function, then make Add return the sum",
		"Make the test suite pass, then add TopWords to the package.",
	} {
		if sh := readRemit(remit); sh.Behaviours != 2 {
			t.Errorf("%q: two real changes counted as %d", remit, sh.Behaviours)
		}
	}
}

// A remit that adds new names places the change beside their family: the
// file that defines the most names sharing their first or last words.
func TestNewNamesArePlacedBesideTheirFamily(t *testing.T) {
	t.Parallel()
	p := placeIn(t, map[string]string{"go.mod": addGoMod,
		"flag.go":  "package add\n\ntype FlagSet struct{}\n\nfunc (f *FlagSet) Parse() {}\n",
		"bytes.go": "package add\n\nfunc (f *FlagSet) BytesHex() {}\n\nfunc (f *FlagSet) BytesHexVar() {}\n\nfunc GetBytesHex() {}\n",
		"count.go": "package add\n\nfunc (f *FlagSet) Count() {}\n",
	}, nil, "Add flags whose value is base64: `BytesBase64` and `BytesBase64Var` on FlagSet, refused by Parse when not valid base64.")
	if !slices.Equal(p.Change, []string{"bytes.go"}) || !strings.Contains(p.How, "goes beside") {
		t.Fatalf("change %v (%s), want bytes.go, beside BytesHex", p.Change, p.How)
	}
	if sib := siblingWords("TextUnmarshallerHookFunc", "StringToTimeHookFunc"); sib != 2 {
		t.Errorf("HookFunc shared as %d words, want 2", sib)
	}
	if sib := siblingWords("NewThing", "NewOther"); sib != 0 {
		t.Errorf("a short shared word (New) counted as family: %d", sib)
	}
}
