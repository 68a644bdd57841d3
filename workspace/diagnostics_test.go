package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The gate outputs in testdata/gateout were captured from the real tools on
// the machines of this project (go 1.26, pytest 9, cargo 1.9x, tsc 5,
// ESLint 9, node 20), run in /tmp/capture/<project>; the sources they point
// at are under testdata/gateout/src/<project> (Go files with a .txt suffix so
// the go tool leaves them alone).
func gateOutput(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gateout", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// sourceTree copies testdata/gateout/src/<project> into a temp dir with the
// .txt suffixes removed, so it looks like the tree the tool ran in.
func sourceTree(t *testing.T, project string) string {
	t.Helper()
	root := filepath.Join("testdata", "gateout", "src", project)
	dst := t.TempDir()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, strings.TrimSuffix(rel, ".txt"))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestParseDiagnosticsOfRealToolOutputs(t *testing.T) {
	cases := []struct {
		output, dir string
		want        []string // the diagnostics, as Path:Line[:Col]: Message prefixes, in order
	}{
		{"go_build", "/tmp/capture/gobuild", []string{
			"stats/stats.go:9:3: invalid operation: total += x",
			"stats/stats.go:11:9: cannot use total / len(xs)",
			"stats/stats.go:19:2: declared and not used: y",
			"stats/stats.go:19:7: undefined: undefinedThing",
		}},
		{"go_vet", "/tmp/capture/govet", []string{"stats/stats.go:7:35: fmt.Sprintf format %s reads arg #2"}},
		{"go_vet_build_error", "/tmp/capture/gobuild", []string{"stats/stats.go:9:3: invalid operation"}},
		{"go_test", "/tmp/capture/gotest", []string{"stats_test.go:7: Mean([1 2]) = 1, want 1.5"}},
		{"go_test_panic", "/tmp/capture/gotest", []string{
			"stats_test.go:7: Mean([1 2]) = 1, want 1.5",
			"stats/stats.go:14",
			"stats/stats_test.go:18",
		}},
		{"pytest", "/tmp/capture/py", []string{"tests/test_stats.py:5: AssertionError", "tests/test_stats.py:13", "app/stats.py:9: IndexError"}},
		{"py_compile", "/tmp/capture/py", []string{"app/broken.py:2"}},
		{"python_traceback", "/tmp/capture/py", []string{"run.py:6: in <module>", "run.py:4: in main", "app/stats.py:9: in at"}},
		{"cargo_build", "/tmp/capture/rs", []string{
			"src/lib.rs:3:13: error[E0308]: mismatched types",
			"src/lib.rs:3:5: error[E0308]: mismatched types",
			"src/lib.rs:3:11: error[E0277]: cannot divide `i64` by `usize`",
		}},
		{"cargo_test", "/tmp/capture/rs", []string{"src/lib.rs:12:9", "src/lib.rs:11:21"}},
		{"tsc", "/tmp/capture/ts", []string{
			"src/stats.ts:2:7: error TS2322: Type 'number' is not assignable to type 'string'.",
			"src/stats.ts:6:10: error TS2362",
			"src/stats.ts:10:3: error TS2322",
		}},
		{"tsc_pretty", "/tmp/capture/ts", []string{"src/stats.ts:2:7: error TS2322", "src/stats.ts:6:10: error TS2362", "src/stats.ts:10:3: error TS2322"}},
		{"eslint", "/tmp/capture/ts", []string{
			"src/app.js:1:7: error: 'unused' is assigned a value but never used",
			"src/app.js:4:9: warning: Expected '===' and instead saw '=='",
			"src/app.js:5:12: error: 'missing' is not defined",
			"src/app.js:10:1: error: 'module' is not defined",
		}},
		{"node_check", "/tmp/capture/ts", []string{"src/bad.js:2"}},
	}
	for _, c := range cases {
		t.Run(c.output, func(t *testing.T) {
			got := ParseDiagnostics(gateOutput(t, c.output), c.dir)
			if len(got) != len(c.want) {
				t.Fatalf("%d diagnostics, want %d:\n%v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(got[i].String(), w) {
					t.Errorf("diagnostic %d = %q, want it to start with %q", i, got[i], w)
				}
			}
		})
	}
}

func TestGateSummaryShowsTheFirstProblemsWithTheirSourceAndTheVerdict(t *testing.T) {
	cases := []struct {
		output, project, capture string
		want                     []string // substrings of the summary
	}{
		{"go_build", "gobuild", "/tmp/capture/gobuild", []string{
			"stats/stats.go:9:3: invalid operation", ">   9| \t\ttotal += x", "    8| \tfor _, x := range xs {",
			"stats/stats.go:19:7: undefined: undefinedThing",
		}},
		{"go_test", "gotest", "/tmp/capture/gotest", []string{
			"stats_test.go:7: Mean([1 2]) = 1, want 1.5", ">   7| \t\tt.Errorf(", "--- FAIL: TestMean", "FAIL\texample.com/calc/stats",
		}},
		{"go_test_panic", "gotest", "/tmp/capture/gotest", []string{"stats/stats.go:14", ">  14| \treturn xs[i]", "panic: runtime error: index out of range"}},
		{"pytest", "py", "/tmp/capture/py", []string{
			"tests/test_stats.py:5: AssertionError", ">   5|     assert mean([1, 2]) == 1.5", ">   9|     return xs[i]",
			"FAILED tests/test_stats.py::test_mean - assert 1 == 1.5", "2 failed, 1 passed",
		}},
		// pytest 9's subtests: which case failed is only in the SUBFAILED
		// lines (the assertion says "True is not False").
		{"pytest_subtests", "py", "/tmp/capture/py", []string{
			"E               AssertionError: True is not False",
			"SUBFAILED(fn='isosceles', sides=[1, 1, 3]) triangle_test.py::TriangleTest::test_isosceles",
			"SUBFAILED(fn='scalene', sides=[7, 3, 2]) triangle_test.py::TriangleTest::test_scalene",
		}},
		{"cargo_build", "rsbuild", "/tmp/capture/rs", []string{"src/lib.rs:3:13: error[E0308]: mismatched types", ">   3|     total / xs.len()"}},
		{"cargo_test", "rs", "/tmp/capture/rs", []string{">  12|         assert_eq!(mean(&[1, 2]), 1.5);", "left: 1.0", "right: 1.5", "test result: FAILED. 1 passed; 1 failed"}},
		{"tsc_pretty", "ts", "/tmp/capture/ts", []string{"src/stats.ts:2:7: error TS2322", ">   2|   let total: string = 0;", "Found 3 errors"}},
		{"eslint", "ts", "/tmp/capture/ts", []string{"src/app.js:5:12: error: 'missing' is not defined", ">   5|     return missing;", "✖ 4 problems"}},
		{"python_traceback", "py", "/tmp/capture/py", []string{"app/stats.py:9: in at", "IndexError: list index out of range"}},
	}
	for _, c := range cases {
		t.Run(c.output, func(t *testing.T) {
			dir := sourceTree(t, c.project)
			out := strings.ReplaceAll(gateOutput(t, c.output), c.capture, dir)
			got := SummarizeGateOutput(out, dir, 0)
			if len(got) > DefaultSummaryBytes+64 {
				t.Errorf("summary of %d bytes exceeds the budget", len(got))
			}
			if strings.Contains(got, "\x1b[") {
				t.Error("colour escapes reached the summary")
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestALongGoBuildFailureKeepsItsFirstErrorWithinTheBudget(t *testing.T) {
	dir := sourceTree(t, "gobuild")
	// What a cut tail loses: the first error, buried under 40 KB of later noise.
	out := "# example.com/calc/stats\nstats/stats.go:9:3: invalid operation: total += x (mismatched types int and float64)\n" +
		strings.Repeat("stats/stats.go:19:7: undefined: undefinedThing\nnote: some long explanation that goes on and on and on\n", 400) + "FAIL\texample.com/calc/stats [build failed]\n"
	got := SummarizeGateOutput(out, dir, 2048)
	if len(got) > 2048+64 {
		t.Errorf("summary is %d bytes", len(got))
	}
	for _, w := range []string{"stats/stats.go:9:3: invalid operation", ">   9|", "[build failed]"} {
		if !strings.Contains(got, w) {
			t.Errorf("summary lacks %q:\n%s", w, got)
		}
	}
}

func TestOutputWithoutLocatedProblemsKeepsHeadAndTail(t *testing.T) {
	out := "starting\n" + strings.Repeat("noise line\n", 1000) + "the verdict: broken\n"
	got := SummarizeGateOutput(out, t.TempDir(), 1024)
	if !strings.HasPrefix(got, "starting") || !strings.HasSuffix(got, "the verdict: broken") || !strings.Contains(got, "bytes not shown") {
		t.Errorf("head and tail not kept:\n%s", got)
	}
	if len(got) > 1100 {
		t.Errorf("%d bytes", len(got))
	}
}
