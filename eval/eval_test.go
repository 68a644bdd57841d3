package eval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// counting is the oracle, counting its attempts.
type counting struct {
	Oracle
	n atomic.Int32
}

func (c *counting) Solve(ctx context.Context, a Attempt) (Outcome, error) {
	c.n.Add(1)
	return c.Oracle.Solve(ctx, a)
}

func TestAStoppedEvalResumesWhereItStopped(t *testing.T) {
	t.Parallel()
	dirs := builtin(t)
	out := t.TempDir()
	filter := regexp.MustCompile(`^go/`)
	ctx, cancel := context.WithCancel(context.Background())
	first := &counting{}
	f, err := Run(ctx, Options{Sandbox: testBox(t), Dirs: dirs, Solver: first, Out: out, Filter: filter, Limit: 6,
		OnResult: func(Result) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if len(f.Results) != 1 || first.n.Load() < 1 {
		t.Fatalf("%d results after %d attempts", len(f.Results), first.n.Load())
	}
	// What the stopped eval recorded is on disk.
	saved, err := Load(filepath.Join(out, ResultsFile))
	if err != nil || len(saved.Results) != 1 || saved.Results[0].Status != StatusPassed {
		t.Fatalf("saved %+v, %v", saved, err)
	}

	var planned, resumed int
	second := &counting{}
	f, err = Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: second, Out: out, Filter: filter, Limit: 6,
		OnPlan: func(total, r int) { planned, resumed = total, r }})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 6 || f.Totals.Pass1 != 6 || second.n.Load() != 5 || planned != 6 || resumed != 1 {
		t.Errorf("%d results, %d passed, %d attempts the second time, planned %d, resumed %d", len(f.Results), f.Totals.Pass1, second.n.Load(), planned, resumed)
	}

	// An eval of another model in the same folder is refused, not mixed in.
	_, err = Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: second, Out: out, Model: "other", Filter: filter})
	if !errors.Is(err, ErrOtherEval) || !strings.Contains(err.Error(), "--fresh") {
		t.Errorf("err %v", err)
	}
	// --fresh starts over.
	third := &counting{}
	f, err = Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: third, Out: out, Model: "other", Filter: regexp.MustCompile(`^go/leap$`), Fresh: true})
	if err != nil || len(f.Results) != 1 || third.n.Load() != 1 {
		t.Errorf("fresh: %d results, %d attempts, %v", len(f.Results), third.n.Load(), err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBrokenExercisesAreSkippedWithReasonAndFix(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ok := filepath.Join(root, "go", "exercises", "practice", "good")
	write(t, filepath.Join(ok, ".docs", "instructions.md"), "# Good\nReturn 1.\n")
	write(t, filepath.Join(ok, ".meta", "config.json"), `{"files":{"solution":["good.go"],"test":["good_test.go"],"example":[".meta/example.go"]}}`)
	write(t, filepath.Join(ok, "good.go"), "package good\n\nfunc One() int { return 0 }\n")
	write(t, filepath.Join(ok, "good_test.go"), "package good\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(One())\n\t}\n}\n")
	write(t, filepath.Join(ok, ".meta", "example.go"), "package good\n\nfunc One() int { return 1 }\n")
	write(t, filepath.Join(ok, "go.mod"), "module good\n\ngo 1.22\n")

	bad := filepath.Join(root, "go", "exercises", "practice")
	write(t, filepath.Join(bad, "no-config", ".docs", "instructions.md"), "# x\n")
	write(t, filepath.Join(bad, "bad-json", ".docs", "instructions.md"), "# x\n")
	write(t, filepath.Join(bad, "bad-json", ".meta", "config.json"), "{\n  \"files\": {\n    \"solution\": [\"a.go\"],,\n  }\n}\n")
	write(t, filepath.Join(bad, "missing-test", ".docs", "instructions.md"), "# x\n")
	write(t, filepath.Join(bad, "missing-test", ".meta", "config.json"), `{"files":{"solution":["a.go"],"test":["a_test.go"]}}`)
	write(t, filepath.Join(bad, "missing-test", "a.go"), "package a\n")
	write(t, filepath.Join(bad, "escape", ".docs", "instructions.md"), "# x\n")
	write(t, filepath.Join(bad, "escape", ".meta", "config.json"), `{"files":{"solution":["../../x.go"],"test":["a_test.go"]}}`)
	cob := filepath.Join(root, "cobol", "exercises", "practice", "hello")
	write(t, filepath.Join(cob, ".docs", "instructions.md"), "# Hello\n")
	write(t, filepath.Join(cob, ".meta", "config.json"), `{"files":{"solution":["hello.cob"],"test":["hello_test.cob"]}}`)
	write(t, filepath.Join(cob, "hello.cob"), "x")
	write(t, filepath.Join(cob, "hello_test.cob"), "x")
	java := filepath.Join(root, "java", "exercises", "practice", "hello")
	write(t, filepath.Join(java, ".docs", "instructions.md"), "# Hello\n")
	write(t, filepath.Join(java, ".meta", "config.json"), `{"files":{"solution":["src/Hello.java"],"test":["src/HelloTest.java"]}}`)
	write(t, filepath.Join(java, "src", "Hello.java"), "x")
	write(t, filepath.Join(java, "src", "HelloTest.java"), "x")
	empty := t.TempDir()

	langs := DefaultLanguages()
	exs, skips := Discover([]string{root, empty, filepath.Join(root, "nowhere")}, langs)
	if len(exs) != 1 || exs[0].ID != "go/good" || !strings.Contains(exs[0].Instructions, "Return 1.") {
		t.Fatalf("exercises %+v", exs)
	}
	want := map[string]string{
		"go/no-config":                 "no .meta/config.json",
		"go/bad-json":                  "line 3",
		"go/missing-test":              "a_test.go is listed but missing",
		"go/escape":                    "is not a path inside the exercise",
		"hello":                        "unknown language",
		"java/hello":                   "unknown language",
		empty:                          "no exercise found",
		filepath.Join(root, "nowhere"): "cannot read",
	}
	got := map[string]Skip{}
	for _, s := range skips {
		got[s.ID] = s
	}
	for id, reason := range want {
		s, ok := got[id]
		if !ok || !strings.Contains(s.Reason, reason) || s.Fix == "" {
			t.Errorf("%s: %+v, want a reason with %q and a fix", id, s, reason)
		}
	}
	if fix := got["java/hello"].Fix; !strings.Contains(fix, "--test-command java=") {
		t.Errorf("java fix %q", fix)
	}
	if len(skips) != len(want) {
		t.Errorf("%d skips: %+v", len(skips), skips)
	}

	// The eval goes on past every one of them; a missing toolchain skips the
	// exercises of its language, with the fix.
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: []string{root, empty}, Solver: Oracle{}, Out: t.TempDir(),
		Languages: langs.WithTestCommand("go", "no-such-go-toolchain test ./...")})
	if err != nil {
		t.Fatal(err)
	}
	var good Result
	for _, r := range f.Results {
		if r.ID == "go/good" {
			good = r
		}
	}
	if good.Status != StatusSkipped || !strings.Contains(good.Reason, "no-such-go-toolchain is not on PATH") || good.Fix == "" {
		t.Errorf("go/good %+v", good)
	}
	if f.Totals.Skipped != len(f.Results) || len(f.Results) != 8 {
		t.Errorf("totals %+v of %d", f.Totals, len(f.Results))
	}
	// A test command given for a language lemmings does not know makes it known.
	exs, _ = Discover([]string{root}, langs.WithTestCommand("java", "gradle test"))
	if len(exs) != 2 || exs[1].ID != "java/hello" {
		t.Errorf("with a java test command: %+v", exs)
	}
}

// An oracle whose reference solution fails lists the exercise as a
// toolchain problem.
func TestOracleFailureIsAToolchainProblem(t *testing.T) {
	t.Parallel()
	dirs := builtin(t)
	langs := DefaultLanguages().WithTestCommand("go", "go test -count=1 -run NoSuchTest ./... && false")
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: Oracle{}, Out: t.TempDir(), Languages: langs, Filter: regexp.MustCompile(`^go/leap$`)})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Results[0]
	if r.Status != StatusFailed || !r.Toolchain || r.Attempts != 1 || !strings.Contains(r.Fix, "toolchain") {
		t.Fatalf("%+v", r)
	}
	if md := f.Markdown(); !strings.Contains(md, "## Toolchain problems") || !strings.Contains(md, "**go/leap**") {
		t.Errorf("report:\n%s", md)
	}
}

func TestKeyLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ out, want string }{
		{"ok\n--- FAIL: TestX (0.00s)\n    x_test.go:3: bad\nFAIL\n", "--- FAIL: TestX (0.00s)"},
		{"collected 2 items\nFAILED leap_test.py::LeapTest::test_years - AssertionError\n", "FAILED leap_test.py::LeapTest::test_years - AssertionError"},
		{"# leap\n./leap.go:4:2: undefined: x\n", "./leap.go:4:2: undefined: x"},
		{"something\nlast line\n\n", "last line"},
		{"", "(no output)"},
	} {
		if got := KeyLine(tc.out); got != tc.want {
			t.Errorf("KeyLine(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

func TestAnEvalWithoutASandboxIsAWiringError(t *testing.T) {
	_, err := Run(context.Background(), Options{Dirs: []string{t.TempDir()}, Solver: Oracle{}, Out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "wiring error") {
		t.Errorf("err %v", err)
	}
}

func TestTheSecondAttemptReadsPathsRelativeToTheExercise(t *testing.T) {
	t.Parallel()
	out := "summultiples.SumMultiples(...)\n\t/tmp/x/work/go/sum/test/sum_of_multiples.go:8\n\t/usr/local/go/src/testing/testing.go:2036 +0xea\n"
	got := withoutDir(out, "/tmp/x/work/go/sum/test")
	if want := "summultiples.SumMultiples(...)\n\tsum_of_multiples.go:8\n\t/usr/local/go/src/testing/testing.go:2036 +0xea\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
