package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const goBase = `package calc

import "testing"

// TestAdd is the base's.
func TestAdd(t *testing.T) {
	if Add(1, 1) != 2 {
		t.Fatal("add")
	}
}

func TestKept(t *testing.T) {}
`

const goTarget = `package calc

import (
	"strings"
	"testing"
)

var cases = []string{"a", "b"}

// TestAdd is the target's.
func TestAdd(t *testing.T) {
	if Add(2, 2) != 4 {
		t.Fatal("add")
	}
}

func TestNew(t *testing.T) {
	if strings.Join(cases, "") != Join() {
		t.Fatal("join")
	}
}

func TestOther(t *testing.T) { OtherNewThing() }
`

func TestSpliceGoTakesTheNamedDeclarationsAndTheirImports(t *testing.T) {
	t.Parallel()
	out, err := spliceGo([]byte(goBase), []byte(goTarget), []string{"TestAdd", "TestNew", "cases"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`"strings"`, "// TestAdd is the target's.", "Add(2, 2)", "func TestNew", "var cases", "func TestKept"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
	// The base's TestAdd is replaced, and what was not named stays out: the
	// file must not need the target's other new symbols.
	for _, unwanted := range []string{"Add(1, 1)", "TestOther", "OtherNewThing"} {
		if strings.Contains(s, unwanted) {
			t.Errorf("%q in:\n%s", unwanted, s)
		}
	}
	if _, err := spliceGo([]byte(goBase), []byte(goTarget), []string{"TestMissing"}); err == nil || !strings.Contains(err.Error(), "TestMissing") {
		t.Errorf("a missing name: %v", err)
	}
}

const pyBase = `import unittest


def test_add():
    assert add(1, 1) == 2


class TestThings(unittest.TestCase):
    def test_kept(self):
        pass
`

const pyTarget = `import unittest
from decimal import Decimal
from calc import newthing, other


def test_add():
    assert add(2, 2) == 4


@unittest.skipIf(False, "never")
def test_new():
    assert newthing(Decimal(1))


class TestThings(unittest.TestCase):
    def test_kept(self):
        pass

    def test_method(self):
        assert other()


def test_other():
    assert other()
`

func TestSplicePyTakesTheNamedTestsAndTheirImports(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	b := &builder{}
	out, err := b.splice(context.Background(), "python", []byte(pyBase), []byte(pyTarget), []string{"test_new", "test_add", "TestThings::test_method"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"from decimal import Decimal", "from calc import newthing, other", "add(2, 2)", "@unittest.skipIf", "def test_new", "    def test_method(self):", "def test_kept"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
	if strings.Contains(s, "add(1, 1)") || strings.Contains(s, "def test_other") {
		t.Errorf("the base's test kept or an unnamed one taken:\n%s", s)
	}
	// The method lands inside its class; the file still parses.
	p := filepath.Join(t.TempDir(), "spliced.py")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if o, err := exec.Command("python3", "-c", "import ast,sys; m=ast.parse(open(sys.argv[1]).read()); c=[n for n in m.body if getattr(n,'name','')=='TestThings'][0]; assert [f.name for f in c.body]==['test_kept','test_method'], [f.name for f in c.body]", p).CombinedOutput(); err != nil {
		t.Errorf("%v: %s\n%s", err, o, s)
	}
	if _, err := b.splice(context.Background(), "python", []byte(pyBase), []byte(pyTarget), []string{"TestGone::test_x"}, t.TempDir()); err == nil {
		t.Error("a missing name was spliced")
	}
}

func TestTheTaskListNamesTheTaskAndKeyOfAMistake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ json, want string }{
		{`{"tasks":[{"id":"Bad ID","language":"go"}]}`, "task 1 (Bad ID): id"},
		{`{"tasks":[{"id":"a","language":"rust","project":"p","base":{"version":"1"},"target":{"version":"2"}}]}`, `language: go or python, not "rust"`},
		{`{"tasks":[{"id":"a","language":"go","project":"p","base":{"version":"1"},"target":{"version":"2"},"kind":"bug"}]}`, `kind: fix or feature, not "bug"`},
		{`{"tasks":[{"id":"a","language":"go","project":"p","base":{"version":"1"},"target":{"version":"2"},"kind":"fix","remit":"r"}]}`, "held_back and changed are required"},
		{`{"tasks":[{"id":"a","langauge":"go"}]}`, `unknown field "langauge"`},
	} {
		p := filepath.Join(dir, "tasks.json")
		if err := os.WriteFile(p, []byte(tc.json), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadSet(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %q", tc.json, err, tc.want)
		}
	}
}

// The committed list loads, and names no semantic-version library (they
// are kept back to check the result, docs/eval.md).
func TestTheCommittedTaskListLoads(t *testing.T) {
	t.Parallel()
	s, err := loadSet(filepath.Join("..", "..", "bench", "realtasks", "tasks.json"))
	if err != nil {
		t.Fatal(err)
	}
	projects := map[string]bool{}
	langs := map[string]int{}
	for _, task := range s.Tasks {
		projects[task.Project] = true
		langs[task.Language]++
		if task.Base.Hash == "" || task.Target.Hash == "" {
			t.Errorf("%s: a release without a hash", task.ID)
		}
		if strings.Contains(strings.ToLower(task.Project), "semver") || strings.Contains(task.Project, "go-version") {
			t.Errorf("%s: %s is a semantic-version library", task.ID, task.Project)
		}
	}
	if len(s.Tasks) < 40 || len(projects) < 8 || langs["go"] == 0 || langs["python"] == 0 {
		t.Errorf("%d tasks from %d projects (%v)", len(s.Tasks), len(projects), langs)
	}
}
