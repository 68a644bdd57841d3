package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/lemmings-dev/lemmings/eval/evaltest"
)

const (
	calcBase = "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a - b }\n\n// Mul returns a times b.\nfunc Mul(a, b int) int { return a * b }\n"
	calcFix  = "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n\n// Mul returns a times b.\nfunc Mul(a, b int) int { return a * b }\n"
	// The fix, and Mul broken on the way.
	calcFixBreaksMul = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Mul(a, b int) int { return a + b }\n"
	calcTest         = "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif got := Mul(2, 3); got != 6 {\n\t\tt.Fatalf(\"Mul(2, 3) = %d\", got)\n\t}\n}\n"
	calcHeld         = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d\", got)\n\t}\n}\n"
	calcRemit        = "Add subtracts its second argument instead of adding it: Add(2, 3) is -1, it should be 5."
)

// calcTask writes a task folder <root>/go/calc: a Go module whose Add is
// wrong, the held-back TestAdd, and the real change to calc.go.
func calcTask(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, "go", "calc")
	src := t.TempDir()
	write(t, filepath.Join(src, "go.mod"), "module calc\n\ngo 1.22\n")
	write(t, filepath.Join(src, "calc.go"), calcBase)
	write(t, filepath.Join(src, "calc_test.go"), calcTest)
	write(t, filepath.Join(src, "other.go"), "package calc\n\nfunc other() int { return 1 }\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "calc v1.0.0"}} {
		if out, err := exec.Command("git", append([]string{"-C", src}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", src, "bundle", "create", "-q", filepath.Join(dir, "base.bundle"), "HEAD", "main").CombinedOutput(); err != nil {
		t.Fatalf("bundle: %v: %s", err, out)
	}
	write(t, filepath.Join(dir, HeldDir, "calc_add_test.go"), calcHeld)
	write(t, filepath.Join(dir, OracleDir, "calc.go"), calcFix)
	task := Task{Project: "example.com/calc", Base: "v1.0.0", Target: "v1.0.1", Language: "go", Kind: KindFix, Remit: calcRemit,
		Repo: "base.bundle", HeldBack: []string{"calc_add_test.go"}, Changed: []string{"calc.go"}}
	data, err := json.MarshalIndent(task, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, TaskFile), string(data))
	return dir
}

// writer is a solver that writes files per attempt (and deletes those
// mapped to "") and records what it was asked.
type writer struct {
	files map[int]map[string]string
	mu    sync.Mutex
	asked []Attempt
}

func (w *writer) Name() string { return "writer" }

func (w *writer) Solve(ctx context.Context, a Attempt) (Outcome, error) {
	w.mu.Lock()
	w.asked = append(w.asked, a)
	w.mu.Unlock()
	for rel, content := range w.files[a.Number] {
		p := filepath.Join(a.Repo, rel)
		if content == "" {
			if err := os.Remove(p); err != nil {
				return Outcome{}, err
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return Outcome{}, err
		}
	}
	return Outcome{Outcome: "done"}, commitAll(ctx, a.Repo, "writer")
}

func runTask(t *testing.T, root string, s Solver) Result {
	t.Helper()
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: []string{root}, Solver: s, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 1 {
		t.Fatalf("%d results: %+v", len(f.Results), f.Results)
	}
	return f.Results[0]
}

func TestTheOraclePassesATaskAndDoingNothingFailsIt(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	calcTask(t, root)
	r := runTask(t, root, Oracle{})
	if r.ID != "go/calc" || r.Status != StatusPassed || !r.Pass1 || r.Localisation == nil || !r.Localisation.Hit || !r.Localisation.All ||
		strings.Join(r.Localisation.Changed, ",") != "calc.go" {
		t.Errorf("oracle: %+v %+v", r, r.Localisation)
	}
	// Nothing changed: the held-back test fails on the base. The repository's
	// own tests pass, so there is nothing to tell a second attempt.
	w := &writer{}
	r = runTask(t, root, w)
	if r.Status != StatusFailed || r.Pass2 || r.Attempts != 1 || !strings.Contains(r.Reason, "held-back tests failed") ||
		!strings.Contains(r.TestOutput, "Add(2, 3) = -1") || r.Localisation.Hit || len(r.Localisation.Changed) != 0 {
		t.Errorf("no change: %+v %+v", r, r.Localisation)
	}
	// The solver was given the remit alone.
	if len(w.asked) != 1 || strings.TrimSpace(w.asked[0].Remit) != calcRemit {
		t.Errorf("asked %+v", w.asked)
	}
}

func TestTheJudgePutsEditedTestsBackAndFailsAChangeThatBreaksAnother(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	calcTask(t, root)
	// Add fixed and Mul broken, TestMul deleted from the test file, and a
	// passing file where the held-back test goes: none of it counts.
	w := &writer{files: map[int]map[string]string{
		1: {"calc.go": calcFixBreaksMul, "calc_test.go": "package calc\n", "calc_add_test.go": "package calc\n"},
		2: {"calc.go": calcFix},
	}}
	r := runTask(t, root, w)
	if r.Status != StatusPassed || r.Pass1 || !r.Pass2 || r.Attempts != 2 {
		t.Fatalf("%+v", r)
	}
	// The second attempt was shown the repository's own tests (TestMul
	// restored, failing), never the held-back one.
	fb := w.asked[1].Feedback
	if !strings.Contains(fb, "Mul(2, 3) = 5") || strings.Contains(fb, "TestAdd") || strings.Contains(w.asked[1].Remit, "TestAdd") ||
		!strings.Contains(w.asked[1].Remit, "# The repository's tests fail after the previous attempt") {
		t.Errorf("second attempt's feedback:\n%s", fb)
	}
	if l := r.Localisation; !l.Hit || strings.Join(l.Changed, ",") != "calc.go,calc_add_test.go,calc_test.go" {
		t.Errorf("localisation %+v", l)
	}

	// With one attempt, the broken Mul fails the task although Add is right.
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: []string{root}, Out: t.TempDir(), MaxAttempts: 1,
		Solver: &writer{files: map[int]map[string]string{1: {"calc.go": calcFixBreaksMul, "calc_test.go": ""}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Results[0]; r.Status != StatusFailed || !strings.Contains(r.TestOutput, "Mul(2, 3) = 5") || strings.Contains(r.TestOutput, "Add(2, 3)") {
		t.Errorf("%+v", r)
	}
}

func TestLocalisationRecordsAFirstAttemptInTheWrongFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	calcTask(t, root)
	r := runTask(t, root, &writer{files: map[int]map[string]string{1: {"other.go": "package calc\n\nfunc other() int { return 2 }\n"}}})
	l := r.Localisation
	if r.Status != StatusFailed || l == nil || l.Hit || l.All || strings.Join(l.Changed, ",") != "other.go" || strings.Join(l.Real, ",") != "calc.go" {
		t.Errorf("%+v %+v", r, l)
	}
	f := &File{Results: []Result{r}}
	f.summarize()
	if md := f.Markdown(); !strings.Contains(md, "## Localisation") || !strings.Contains(md, "| go/calc | no | other.go | calc.go |") {
		t.Errorf("report:\n%s", md)
	}
}

func TestBrokenTaskFoldersNameTheFileLineAndKey(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	good := calcTask(t, root)
	data, err := os.ReadFile(filepath.Join(good, TaskFile))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, json, want string }{
		{"syntax", "{\n  \"language\": \"go\",,\n}\n", "line 2"},
		{"unknown-key", "{\n  \"language\": \"go\",\n  \"remitt\": \"x\"\n}\n", `line 3: unknown key "remitt"`},
		{"wrong-type", "{\n  \"language\": \"go\",\n  \"held_back\": \"a_test.go\"\n}\n", "line 3: held_back"},
		{"missing-key", strings.Replace(string(data), `"kind": "fix",`, "", 1), "line 1: kind is missing"},
		{"no-remit", strings.Replace(string(data), calcRemit, " ", 1), "remit is empty"},
		{"bad-kind", strings.Replace(string(data), `"kind": "fix"`, `"kind": "bugfix"`, 1), `kind: "bugfix"`},
		{"missing-held", strings.Replace(string(data), `"calc_add_test.go"`, `"nope_test.go"`, 1), ": held_back: held/nope_test.go is listed but missing"},
		{"escape", strings.Replace(string(data), `"calc.go"`, `"../calc.go"`, 1), `: changed: "../calc.go" is not a path inside the repository`},
		{"bad-repo", strings.Replace(string(data), `"base.bundle"`, `"calc.go.txt"`, 1), ": repo: calc.go.txt is listed but missing"},
		{"no-test-command", strings.Replace(string(data), `"language": "go"`, `"language": "cobol"`, 1), `: language: "cobol" has no test command`},
	}
	for _, tc := range cases {
		dir := filepath.Join(root, "broken", tc.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, TaskFile), tc.json)
		for _, part := range []string{"base.bundle", HeldDir, OracleDir} {
			if err := exec.Command("cp", "-r", filepath.Join(good, part), dir).Run(); err != nil {
				t.Fatal(err)
			}
		}
	}
	exs, skips := Discover([]string{root}, DefaultLanguages())
	if len(exs) != 1 || exs[0].ID != "go/calc" || exs[0].Task == nil || exs[0].Instructions != calcRemit {
		t.Errorf("tasks %+v", exs)
	}
	got := map[string]Skip{}
	for _, s := range skips {
		got[filepath.Base(s.Dir)] = s
	}
	for _, tc := range cases {
		s, ok := got[tc.name]
		file := filepath.Join(root, "broken", tc.name, TaskFile)
		if !ok || !strings.Contains(s.Reason, file) || !strings.Contains(s.Reason, tc.want) || s.Fix == "" {
			t.Errorf("%s: %+v, want %s and %q", tc.name, s, file, tc.want)
		}
	}
	// The line of a key in the folder's own file is named.
	if s := got["missing-held"]; !regexp.MustCompile(`task\.json:\d+: held_back`).MatchString(s.Reason) {
		t.Errorf("no line: %s", s.Reason)
	}
	if len(skips) != len(cases) {
		t.Errorf("%d skips", len(skips))
	}
}

// lemmings works on a task as on a user's repository: given the remit
// alone; the held-back test never reaches a prompt.
func TestLemmingsWorksOnATaskFromItsRemitAlone(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	calcTask(t, root)
	sc := &evaltest.Script{Solutions: map[string]map[string]string{"go/calc": {"calc.go": calcFix}},
		Remits: map[string]string{"Add subtracts its second argument": "go/calc"}}
	srv := evaltest.NewServer(sc)
	defer srv.Close()
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: []string{root}, Solver: &Lemmings{Config: evaltest.Config(srv.URL())},
		Out: t.TempDir(), Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Results[0]
	if r.Status != StatusPassed || !r.Pass1 || r.Calls == 0 || r.Localisation == nil || !r.Localisation.Hit {
		t.Fatalf("%+v\n%s", r, r.TestOutput)
	}
	calls := srv.Calls()
	remitSeen := false
	for _, c := range calls {
		for _, m := range c.Messages {
			if strings.Contains(m.Content, "TestAdd") || strings.Contains(m.Content, "calc_add_test") {
				t.Errorf("a prompt shows the held-back test:\n%s", m.Content)
			}
			remitSeen = remitSeen || strings.Contains(m.Content, calcRemit)
		}
	}
	if !remitSeen {
		t.Errorf("no prompt carries the remit (%d calls)", len(calls))
	}
}

// A second attempt is told the failures, not the whole log: pytest's 90 KB
// of tracebacks named every file of the repository in a real task's remit.
func TestASecondAttemptIsToldTheFailuresNotTheWholeLog(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "/tmp/judge-own/pkg/mod%d.py:%d: in helper\n    return call()\n", i, i+1)
	}
	b.WriteString("FAILED tests/test_parse.py::test_hyphen - AssertionError: assert None == {'a-b': 1}\n1 failed, 120 passed in 2.1s\n")
	fb := taskFeedback(b.String(), "/tmp/judge-own")
	if len(fb) > taskFeedbackBytes+512 || !strings.Contains(fb, "FAILED tests/test_parse.py::test_hyphen") || strings.Contains(fb, "/tmp/judge-own") {
		t.Errorf("%d bytes:\n%s", len(fb), fb)
	}
}
