package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func builtin(t *testing.T) []string {
	t.Helper()
	dirs, err := WriteBuiltin(filepath.Join(t.TempDir(), "suite"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func TestOraclePassesEveryBuiltinExercise(t *testing.T) {
	t.Parallel()
	dirs := builtin(t)
	out := t.TempDir()
	var seen []string
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: Oracle{}, Out: out, Label: "oracle", Parallel: 4,
		OnResult: func(r Result) { seen = append(seen, r.ID) }})
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]int{}
	for _, r := range f.Results {
		langs[r.Language]++
		if r.Status != StatusPassed || !r.Pass1 || r.Attempts != 1 {
			t.Errorf("%s: %s (%s)\n%s", r.ID, r.Status, r.Reason, r.TestOutput)
		}
	}
	if langs["go"] < 12 || langs["python"] < 6 {
		t.Errorf("the suite has %d Go and %d Python exercises", langs["go"], langs["python"])
	}
	if len(seen) != len(f.Results) || f.Totals.Rate2() != 100 {
		t.Errorf("reported %d of %d results, pass@2 %.1f%%", len(seen), len(f.Results), f.Totals.Rate2())
	}
	report, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "**pass@1 100.0% · pass@2 100.0%**") {
		t.Errorf("report:\n%s", report)
	}
	// Passed exercises leave no work folder behind.
	if entries, _ := os.ReadDir(filepath.Join(out, WorkDir, "go")); len(entries) != 0 {
		t.Errorf("%d work folders left", len(entries))
	}
}

// The tests decide on the original tests: a stub that fails them fails,
// whatever the solver did to its copy of the tests.
func TestStubsFailTheirTests(t *testing.T) {
	t.Parallel()
	dirs := builtin(t)
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: dirs, Solver: stubSolver{}, Out: t.TempDir(), Parallel: 4, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Results {
		if r.Status != StatusFailed || r.Pass2 || r.Reason == "" || r.TestOutput == "" {
			t.Errorf("%s: %s %q", r.ID, r.Status, r.Reason)
		}
	}
}

// stubSolver leaves the stub as it is but empties the tests in its copy.
type stubSolver struct{}

func (stubSolver) Name() string { return "stub" }

func (stubSolver) Solve(ctx context.Context, a Attempt) (Outcome, error) {
	for _, tf := range a.Exercise.Test {
		body := "package " + "x\n"
		if strings.HasSuffix(tf, ".py") {
			body = "def test_nothing():\n    pass\n"
		}
		if err := os.WriteFile(filepath.Join(a.Repo, tf), []byte(body), 0o644); err != nil {
			return Outcome{}, err
		}
	}
	return Outcome{Outcome: "done"}, commitAll(ctx, a.Repo, "empty the tests")
}
