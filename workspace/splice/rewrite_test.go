package splice

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

const statsGo = `package stats

import "strings"

// Join joins words.
func Join(words []string) string { return strings.Join(words, " ") }

// Mean returns the mean of xs.
func Mean(xs []int) float64 {
	total := 0
	for _, x := range xs {
		total += x
	}
	return float64(total / len(xs))
}

type Acc struct{ n int }

// Add adds.
func (a *Acc) Add(x int) { a.n += x }
`

const meanFixed = `// Mean returns the mean of xs.
func Mean(xs []int) float64 {
	total := 0
	for _, x := range xs {
		total += x
	}
	return float64(total) / float64(len(xs))
}`

func TestGoUnitsCarryTheirDocCommentsAndReceivers(t *testing.T) {
	units, err := Parser{}.Units(context.Background(), "stats.go", []byte(statsGo))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range units {
		got = append(got, u.Kind+" "+u.Name+" "+itoa(u.Start)+"-"+itoa(u.End))
	}
	want := []string{"func Join 5-6", "func Mean 8-15", "type Acc 17-17", "method Acc.Add 19-20"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("units = %v, want %v", got, want)
	}
	for name, want := range map[string]string{"Mean": "Mean", "func Mean": "Mean", "(*Acc).Add": "Acc.Add", "(a *Acc) Add": "Acc.Add", "Add": "Acc.Add", "Mean(xs)": "Mean"} {
		if u, ok := Named(units, name); !ok || u.Name != want {
			t.Errorf("Named(%q) = %q, %v; want %q", name, u.Name, ok, want)
		}
	}
	if u, ok := At(units, 12); !ok || u.Name != "Mean" {
		t.Errorf("At(12) = %q", u.Name)
	}
}

func itoa(n int) string { return fmtInt(n) }

func fmtInt(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return fmtInt(n/10) + string(rune('0'+n%10))
}

func TestGoRewrites(t *testing.T) {
	for _, tc := range []struct {
		name, target, code string
		rename, others     func(string) bool
		want               []string // substrings of the result
		absent             []string
		problem            string // substring of the *Problem
	}{
		{name: "a function comes back whole and replaces its old self", target: "Mean", code: meanFixed,
			want: []string{"return float64(total) / float64(len(xs))", "// Join joins words."}, absent: []string{"float64(total / len(xs))"}},
		{name: "a doc comment left out of the reply is kept", target: "Mean", code: strings.TrimPrefix(meanFixed, "// Mean returns the mean of xs.\n"),
			want: []string{"// Mean returns the mean of xs.\nfunc Mean"}},
		{name: "indentation lost is put back by gofmt", target: "Mean", code: "func Mean(xs []int) float64 {\ntotal := 0\nfor _, x := range xs {\ntotal += x\n}\nreturn float64(total) / float64(len(xs))\n}",
			want: []string{"\tfor _, x := range xs {\n\t\ttotal += x\n\t}"}},
		{name: "a method named with its receiver", target: "(*Acc).Add", code: "func (a *Acc) Add(x int) {\n\ta.n += 2 * x\n}",
			want: []string{"a.n += 2 * x", "// Add adds.\nfunc (a *Acc) Add"}},
		{name: "a new function after the target is added after it", target: "Mean", code: meanFixed + "\n\n// Sum sums.\nfunc Sum(xs []int) int { return 0 }",
			want: []string{"float64(len(xs))\n}\n\n// Sum sums.\nfunc Sum"}},
		{name: "an import the code needs is added", target: "Join", code: "import \"fmt\"\n\nfunc Join(words []string) string { return fmt.Sprint(strings.Join(words, \" \")) }",
			want: []string{"import \"strings\"\nimport \"fmt\"", "fmt.Sprint("}},
		{name: "a renamed unit is refused when the task does not rename it", target: "Mean", code: strings.ReplaceAll(meanFixed, "func Mean", "func Average"),
			problem: "declares Average, but Mean was asked for"},
		{name: "a renamed unit is taken when the task renames it", target: "Mean", code: strings.ReplaceAll(meanFixed, "func Mean", "func Average"),
			rename: func(n string) bool { return n == "Average" }, want: []string{"func Average(xs []int)"}, absent: []string{"func Mean("}},
		{name: "code that does not parse is refused with its line", target: "Mean", code: "func Mean(xs []int) float64 {\n\treturn float64(total /\n}",
			problem: "does not parse (line 3"},
		{name: "prose without a declaration is refused", target: "Mean", code: "total := 0",
			problem: "does not parse"},
		{name: "another unit rewritten that the task does not name is refused, never spliced over", target: "Mean",
			code: meanFixed + "\n\n// Join joins words.\nfunc Join(words []string) string { return \"\" }", others: func(string) bool { return false },
			problem: "also rewrites Join, which the task does not ask to change"},
		{name: "another unit given back unchanged is left alone", target: "Mean",
			code: "// Join joins words.\nfunc Join(words []string) string {\n\treturn strings.Join(words, \" \")\n}\n\n" + meanFixed, others: func(string) bool { return false },
			want: []string{"float64(total) / float64(len(xs))", "func Join(words []string) string { return strings.Join(words, \" \") }"}},
		{name: "another unit the task names may be rewritten", target: "Mean",
			code: meanFixed + "\n\nfunc Join(words []string) string { return strings.Join(words, \",\") }", others: func(n string) bool { return n == "Join" },
			want: []string{"strings.Join(words, \",\")"}},
		{name: "the whole file with a package clause replaces the file", target: "Mean",
			code: strings.Replace(statsGo, "float64(total / len(xs))", "float64(total) / float64(len(xs))", 1),
			want: []string{"package stats", "float64(total) / float64(len(xs))", "func (a *Acc) Add"}},
		{name: "a partial file with a package clause is spliced by unit", target: "Mean",
			code: "package stats\n\n" + meanFixed,
			want: []string{"func Join(", "func (a *Acc) Add", "float64(total) / float64(len(xs))"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Parser{}.Rewrite(context.Background(), Request{Path: "stats.go", Src: statsGo, Target: tc.target, Code: tc.code, Rename: tc.rename, Others: tc.others})
			if tc.problem != "" {
				var p *Problem
				if !errors.As(err, &p) || !strings.Contains(p.Msg, tc.problem) {
					t.Fatalf("err = %v; want a problem saying %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, res.Content)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(res.Content, w) {
					t.Errorf("result still has %q:\n%s", w, res.Content)
				}
			}
			if err := (Parser{}).Check(context.Background(), "stats.go", []byte(res.Content)); err != nil {
				t.Errorf("result does not parse: %v", err)
			}
		})
	}
}

func TestAFileThatDoesNotParseOrHasNoParserIsNotSpliced(t *testing.T) {
	_, err := Parser{}.Rewrite(context.Background(), Request{Path: "a.go", Src: "package a\nfunc (", Code: "func A() {}"})
	if !errors.Is(err, ErrNoParser) {
		t.Errorf("broken file: err = %v", err)
	}
	_, err = Parser{}.Rewrite(context.Background(), Request{Path: "a.js", Src: "function a() {}\n", Code: "function a() { return 1 }"})
	if !errors.Is(err, ErrNoParser) {
		t.Errorf("javascript: err = %v", err)
	}
}

const calcPy = `import math


def add(a, b):
    """Return the sum."""
    return a - b


class Acc:
    def __init__(self):
        self.n = 0

    @property
    def value(self):
        return self.n

    def push(self, x):
        self.n += x
`

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

func TestPythonRewrites(t *testing.T) {
	needPython(t)
	for _, tc := range []struct {
		name, target, code string
		want               []string
		problem            string
	}{
		{name: "a function comes back whole", target: "add", code: "def add(a, b):\n    \"\"\"Return the sum.\"\"\"\n    return a + b",
			want: []string{"    return a + b\n\n\nclass Acc:"}},
		{name: "a method written at column 0 is indented into its class", target: "Acc.push", code: "def push(self, x):\n    self.n += 2 * x",
			want: []string{"    def push(self, x):\n        self.n += 2 * x\n"}},
		{name: "a method's decorator left out is kept", target: "Acc.value", code: "def value(self):\n    return self.n + 1",
			want: []string{"    @property\n    def value(self):\n        return self.n + 1"}},
		{name: "a new function is added after the target with an import", target: "add", code: "import os\n\ndef add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b",
			want: []string{"import math\nimport os\n", "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\nclass Acc"}},
		{name: "indentation lost inside the body does not parse and is refused", target: "add", code: "def add(a, b):\nreturn a + b",
			problem: "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Parser{}.Rewrite(context.Background(), Request{Path: "calc.py", Src: calcPy, Target: tc.target, Code: tc.code})
			if tc.problem != "" {
				var p *Problem
				if !errors.As(err, &p) || !strings.Contains(p.Msg, tc.problem) {
					t.Fatalf("err = %v; want a problem saying %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, res.Content)
				}
			}
		})
	}
}

func TestPythonUnitsNameMethodsByTheirClass(t *testing.T) {
	needPython(t)
	units, err := Parser{}.Units(context.Background(), "calc.py", []byte(calcPy))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range units {
		names = append(names, u.Name+":"+fmtInt(u.Start)+"-"+fmtInt(u.End))
	}
	if got := strings.Join(names, " "); got != "add:4-6 Acc:9-18 Acc.__init__:10-11 Acc.value:13-15 Acc.push:17-18" {
		t.Errorf("units = %s", got)
	}
	var se *SyntaxError
	if _, err := (Parser{}).Units(context.Background(), "x.py", []byte("def f(:\n")); !errors.As(err, &se) || se.Line != 1 {
		t.Errorf("syntax error = %v", err)
	}
	if _, err := (Parser{Python: "no-such-python"}).Units(context.Background(), "x.py", []byte("x = 1\n")); !errors.Is(err, ErrNoParser) {
		t.Errorf("missing interpreter: err = %v", err)
	}
}

// A reply that adds a declaration to a type or class goes in after the
// anchor, as a new unit: not a rename of the anchor, and not a rewrite of a
// namesake elsewhere in the file.
func TestAnAddedUnitGoesAfterItsAnchor(t *testing.T) {
	ctx := context.Background()
	t.Run("go: a new method after the type's last method", func(t *testing.T) {
		res, err := Parser{}.Rewrite(ctx, Request{Path: "stats.go", Src: statsGo, Target: "Acc.Add", Add: true, Others: func(string) bool { return false },
			Code: "// Total is what was added.\nfunc (a *Acc) Total() int { return a.n }"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Content, "func (a *Acc) Add(x int) { a.n += x }\n\n// Total is what was added.\nfunc (a *Acc) Total() int { return a.n }") || len(res.Added) != 1 {
			t.Errorf("added %v:\n%s", res.Added, res.Content)
		}
	})
	t.Run("go: the anchor rewritten along is refused", func(t *testing.T) {
		_, err := Parser{}.Rewrite(ctx, Request{Path: "stats.go", Src: statsGo, Target: "Acc.Add", Add: true, Others: func(string) bool { return false },
			Code: "func (a *Acc) Add(x int) { a.n = x }\n\nfunc (a *Acc) Total() int { return a.n }"})
		var p *Problem
		if !errors.As(err, &p) || !strings.Contains(p.Msg, "also rewrites Acc.Add") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("python: a bare def is a new method of the owner, not the namesake", func(t *testing.T) {
		needPython(t)
		src := calcPy + "\n\ndef total(xs):\n    return sum(xs)\n"
		res, err := Parser{}.Rewrite(ctx, Request{Path: "calc.py", Src: src, Target: "Acc.push", Add: true, Owner: "Acc", Others: func(n string) bool { return n == "total" },
			Code: "@property\ndef total(self):\n    return self.n"})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"        self.n += x\n\n    @property\n    def total(self):\n        return self.n\n", "def total(xs):\n    return sum(xs)"} {
			if !strings.Contains(res.Content, w) {
				t.Errorf("result lacks %q:\n%s", w, res.Content)
			}
		}
	})
}
