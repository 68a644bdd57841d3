package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSyntaxCheckReportsAGoParseErrorWithItsLine(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"go.mod":         "module example.com/m\n\ngo 1.22\n",
		"calc/calc.go":   "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n\nfunc Sub(a, b int) int { return a - b }\n",
		"calc/other.go":  "package calc\n",
		"notes/readme.x": "anything",
	})
	got := CheckSyntax(context.Background(), testBox(t), dir, []string{"calc/calc.go", "notes/readme.x"}, DefaultSyntaxChecks(), 1024)
	for _, w := range []string{"calc/calc.go:6:6: expected '(', found Sub", ">   6| func Sub"} {
		if !strings.Contains(got, w) {
			t.Errorf("report lacks %q:\n%s", w, got)
		}
	}
}

func TestSyntaxCheckVetsTheEditedGoPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	dir := writeTree(t, map[string]string{
		"go.mod":       "module example.com/m\n\ngo 1.22\n",
		"calc/calc.go": "package calc\n\nfunc Mean(xs []float64) float64 {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn float64(total)\n}\n",
		"ok/ok.go":     "package ok\n",
	})
	got := CheckSyntax(context.Background(), testBox(t), dir, []string{"calc/calc.go"}, DefaultSyntaxChecks(), 1024)
	if !strings.Contains(got, "calc/calc.go:6:3") || !strings.Contains(got, "mismatched types int and float64") {
		t.Errorf("vet's type error is missing:\n%s", got)
	}
	if got := CheckSyntax(context.Background(), testBox(t), dir, []string{"ok/ok.go"}, DefaultSyntaxChecks(), 1024); got != "" {
		t.Errorf("a clean package reports %q", got)
	}
}

func TestSyntaxCheckOfPythonAndJavaScript(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"app/broken.py": "def f(x):\n    if x > 1\n        return x\n",
		"app/fine.py":   "def f(x):\n    return x\n",
		"web/bad.js":    "function f( {\n  return 1;\n}\n",
	})
	ctx := context.Background()
	if _, err := exec.LookPath("python3"); err == nil {
		got := CheckSyntax(ctx, testBox(t), dir, []string{"app/broken.py"}, DefaultSyntaxChecks(), 1024)
		if !strings.Contains(got, "app/broken.py:2") || !strings.Contains(got, "SyntaxError") {
			t.Errorf("py_compile's error is missing:\n%s", got)
		}
		if got := CheckSyntax(ctx, testBox(t), dir, []string{"app/fine.py"}, DefaultSyntaxChecks(), 1024); got != "" {
			t.Errorf("a fine Python file reports %q", got)
		}
		if _, err := os.Stat(filepath.Join(dir, "app", "__pycache__")); err == nil {
			t.Error("py_compile left byte code in the work tree")
		}
	}
	if _, err := exec.LookPath("node"); err == nil {
		got := CheckSyntax(ctx, testBox(t), dir, []string{"web/bad.js"}, DefaultSyntaxChecks(), 1024)
		if !strings.Contains(got, "SyntaxError") || !strings.Contains(got, "web/bad.js") {
			t.Errorf("node --check's error is missing:\n%s", got)
		}
	}
}

func TestASyntaxCheckWhoseToolIsMissingSaysNothing(t *testing.T) {
	dir := writeTree(t, map[string]string{"a.rb": "def x(\n"})
	checks := map[string]string{".rb": "lemmings-no-such-checker {file}"}
	if got := CheckSyntax(context.Background(), testBox(t), dir, []string{"a.rb"}, checks, 1024); got != "" {
		t.Errorf("a missing checker reported %q", got)
	}
	checks[".rb"] = "echo 'a.rb:1: unexpected end of input' && exit 1"
	if got := CheckSyntax(context.Background(), testBox(t), dir, []string{"a.rb"}, checks, 1024); !strings.Contains(got, "a.rb:1: unexpected end of input") {
		t.Errorf("a configured checker's failure is missing: %q", got)
	}
}

// A check's findings before an edit are its baseline: only what the edit
// added is reported, a finding that moved lines is not new, and a parse
// error in a file that parsed before is.
func TestChecksReportOnlyWhatTheEditIntroduced(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"p/p.go": "package p\n\nimport \"fmt\"\n\nfunc A() { fmt.Printf(\"%d\\n\", \"x\") }\n",
	})
	ctx := context.Background()
	checks := map[string]string{".go": "go vet ./{dir}"}
	base := RunChecks(ctx, testBox(t), dir, []string{"p/p.go"}, checks)
	if len(base.Failed) != 1 {
		t.Fatalf("the pre-existing vet finding must fail the base check: %+v", base)
	}
	// Code added above moves the old finding down a line: not new.
	moved := "package p\n\nimport \"fmt\"\n\n// B is new.\nfunc B() {}\n\nfunc A() { fmt.Printf(\"%d\\n\", \"x\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "p/p.go"), []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RunChecks(ctx, testBox(t), dir, []string{"p/p.go"}, checks).Introduced(base, dir, 1024); got != "" {
		t.Errorf("a pre-existing finding was reported as new:\n%s", got)
	}
	// A second finding is new.
	worse := moved + "\nfunc C() { fmt.Printf(\"%s\\n\", 1) }\n"
	if err := os.WriteFile(filepath.Join(dir, "p/p.go"), []byte(worse), 0o644); err != nil {
		t.Fatal(err)
	}
	got := RunChecks(ctx, testBox(t), dir, []string{"p/p.go"}, checks).Introduced(base, dir, 1024)
	if !strings.Contains(got, "p/p.go:10:") || strings.Contains(got, "p/p.go:8:") {
		t.Errorf("want only the new finding (line 10):\n%s", got)
	}
	// A parse error is new when the file parsed before.
	if err := os.WriteFile(filepath.Join(dir, "p/p.go"), []byte("package p\n\nfunc (\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RunChecks(ctx, testBox(t), dir, []string{"p/p.go"}, checks).Introduced(base, dir, 1024); !strings.Contains(got, "p/p.go:3:") {
		t.Errorf("the parse error must be reported:\n%s", got)
	}
}
