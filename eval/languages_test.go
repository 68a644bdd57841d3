package eval

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// JavaScript and Rust exercises in the polyglot benchmark's layout go
// through the same harness: the oracle passes them, a stub fails them, and
// Jest's skipped tests (xtest) are turned on. The JavaScript exercise tests
// with node --test, so no package is installed.
func TestJavaScriptAndRustExercises(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var want []string
	if _, err := exec.LookPath("node"); err == nil {
		js := filepath.Join(root, "javascript", "exercises", "practice", "two-fer")
		write(t, filepath.Join(js, ".docs", "instructions.md"), "# Two-fer\n")
		write(t, filepath.Join(js, ".meta", "config.json"), `{"files":{"solution":["two-fer.js"],"test":["two-fer.spec.js"],"example":[".meta/proof.ci.js"]}}`)
		write(t, filepath.Join(js, "package.json"), `{"name":"two-fer","private":true,"scripts":{"test":"node --test"}}`)
		// The stub passes the first test only.
		write(t, filepath.Join(js, "two-fer.js"), "export const twoFer = () => 'One for you, one for me.';\n")
		write(t, filepath.Join(js, ".meta", "proof.ci.js"), "export const twoFer = (name = 'you') => `One for ${name}, one for me.`;\n")
		// The second test is skipped as Exercism ships it; the harness runs it.
		write(t, filepath.Join(js, "two-fer.spec.js"), `import { test as nodeTest } from 'node:test';
import assert from 'node:assert';
import { twoFer } from './two-fer.js';
const test = nodeTest;
const xtest = nodeTest.skip;
test('no name', () => assert.strictEqual(twoFer(), 'One for you, one for me.'));
xtest('a name', () => assert.strictEqual(twoFer('Alice'), 'One for Alice, one for me.'));
`)
		want = append(want, "javascript/two-fer")
	}
	if _, err := exec.LookPath("cargo"); err == nil {
		rs := filepath.Join(root, "rust", "exercises", "practice", "leap")
		write(t, filepath.Join(rs, ".docs", "instructions.md"), "# Leap\n")
		write(t, filepath.Join(rs, ".meta", "config.json"), `{"files":{"solution":["src/lib.rs"],"test":["tests/leap.rs"],"example":[".meta/example.rs"]}}`)
		write(t, filepath.Join(rs, "Cargo.toml"), "[package]\nname = \"leap\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
		// The stub passes the test that is not ignored.
		write(t, filepath.Join(rs, "src", "lib.rs"), "pub fn is_leap_year(year: u64) -> bool {\n    year % 4 == 0\n}\n")
		write(t, filepath.Join(rs, ".meta", "example.rs"), "pub fn is_leap_year(year: u64) -> bool {\n    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)\n}\n")
		write(t, filepath.Join(rs, "tests", "leap.rs"), "use leap::*;\n\n#[test]\nfn year_2000() {\n    assert!(is_leap_year(2000));\n}\n\n#[test]\n#[ignore]\nfn year_1900() {\n    assert!(!is_leap_year(1900));\n}\n")
		want = append(want, "rust/leap")
	}
	if len(want) == 0 {
		t.Skip("neither node nor cargo on PATH")
	}
	f, err := Run(context.Background(), Options{Sandbox: testBox(t), Dirs: []string{root}, Solver: Oracle{}, Out: t.TempDir(), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != len(want) {
		t.Fatalf("results %+v", f.Results)
	}
	for i, r := range f.Results {
		if r.ID != want[i] || r.Status != StatusPassed {
			t.Errorf("oracle: %s %s %s\n%s", r.ID, r.Status, r.Reason, r.TestOutput)
		}
	}
	// The stubs fail on the tests Exercism ships skipped or ignored.
	f, err = Run(context.Background(), Options{Sandbox: testBox(t), Dirs: []string{root}, Solver: stubSolver{}, Out: t.TempDir(), Parallel: 2, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Results {
		if r.Status != StatusFailed || !strings.Contains(r.TestOutput, map[string]string{"javascript/two-fer": "a name", "rust/leap": "year_1900"}[r.ID]) {
			t.Errorf("stub: %s %s\n%s", r.ID, r.Status, r.TestOutput)
		}
	}
	if got := unskipJS("xtest('a', f)\nxit('b', g)\n"); got != "test('a', f)\nit('b', g)\n" {
		t.Errorf("unskip: %q", got)
	}
}
