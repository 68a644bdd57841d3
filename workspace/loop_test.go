package workspace

import (
	"strings"
	"testing"
)

const sampleDiff = `diff --git a/a.go b/a.go
index 1111111..2222222 100644
--- a/a.go
+++ b/a.go
@@ -1,3 +1,3 @@
 package a
-var x = 1
+var x = 2
diff --git a/b.go b/b.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/b.go
@@ -0,0 +1 @@
+package b
`

func TestDiffHash(t *testing.T) {
	t.Parallel()
	h := DiffHash(sampleDiff)
	if len(h) != 64 {
		t.Fatalf("hash %q", h)
	}
	same := map[string]string{
		"other index hashes":  strings.ReplaceAll(strings.ReplaceAll(sampleDiff, "1111111..2222222", "aaaaaaa..bbbbbbb"), "0000000..3333333", "0000000..ccccccc"),
		"CRLF line endings":   strings.ReplaceAll(sampleDiff, "\n", "\r\n"),
		"trailing whitespace": strings.ReplaceAll(sampleDiff, "+package b\n", "+package b  \n"),
		"files in other order": sampleDiff[strings.Index(sampleDiff, "diff --git a/b.go"):] +
			sampleDiff[:strings.Index(sampleDiff, "diff --git a/b.go")],
		"surrounding blank lines": "\n\n" + sampleDiff + "\n\n",
	}
	for name, d := range same {
		if got := DiffHash(d); got != h {
			t.Errorf("%s: hash differs", name)
		}
	}
	different := map[string]string{
		"another change":   strings.Replace(sampleDiff, "+var x = 2", "+var x = 3", 1),
		"another file":     strings.ReplaceAll(sampleDiff, "b.go", "c.go"),
		"indentation kept": strings.Replace(sampleDiff, "+var x = 2", "+\tvar x = 2", 1),
	}
	for name, d := range different {
		if DiffHash(d) == h {
			t.Errorf("%s: same hash", name)
		}
	}
	if DiffHash("") != "" || DiffHash(" \n\n") != "" {
		t.Error("empty diff should hash to empty")
	}
}

func TestActionLoop(t *testing.T) {
	t.Parallel()
	l := NewActionLoop(6, 3)
	step := func(tool, args, result string, wantRepeated bool, wantCount int) {
		t.Helper()
		rep, n := l.Record(tool, args, result)
		if rep != wantRepeated || n != wantCount {
			t.Errorf("Record(%s, %s, %s) = %v, %d; want %v, %d", tool, args, result, rep, n, wantRepeated, wantCount)
		}
	}
	step("read_file", `{"path":"a.go"}`, "content", false, 1)
	step("read_file", `{ "path" : "a.go" }`, "content", false, 2) // same JSON, other spacing
	step("read_file", `{"path":"a.go"}`, "other content", false, 1)
	step("read_file", `{"path":"b.go"}`, "content", false, 1)
	step("list", `{}`, "tree", false, 1)
	step("read_file", `{"path":"a.go"}`, "content", true, 3) // third time within the last six
	// Key order does not matter either.
	step("grep", `{"pattern":"x","glob":"*.go"}`, "none", false, 1)
	step("grep", `{"glob":"*.go","pattern":"x"}`, "none", false, 2)

	// Repeats that fall out of the window are forgotten.
	w := NewActionLoop(3, 2)
	w.Record("a", "1", "r")
	w.Record("b", "", "")
	w.Record("c", "", "")
	w.Record("d", "", "")
	if rep, n := w.Record("a", "1", "r"); rep || n != 1 {
		t.Errorf("old repeat counted: %v %d", rep, n)
	}
	w.Reset()
	if _, n := w.Record("d", "", ""); n != 1 {
		t.Errorf("after Reset count %d", n)
	}

	// The zero value works with the defaults.
	var z ActionLoop
	var rep bool
	for range DefaultLoopThreshold {
		rep, _ = z.Record("run_gate", `{"name":"test"}`, "FAIL")
	}
	if !rep {
		t.Error("zero-value detector never flagged")
	}
}

// A gate run again on the same code reports other timings: it is still the
// same result (a model calling run_gate ten times in a row is a loop).
func TestActionLoopIgnoresTimings(t *testing.T) {
	l := NewActionLoop(8, 2)
	first := "FAIL\texample.com/m\t0.004s\n--- FAIL: TestX (0.00s)\n1 failed in 0.02s"
	again := "FAIL\texample.com/m\t0.011s\n--- FAIL: TestX (0.01s)\n1 failed in 0.35s"
	if rep, _ := l.Record("run_gate", `{"gate":"test"}`, first); rep {
		t.Fatal("the first run is no repeat")
	}
	if rep, n := l.Record("run_gate", `{"gate":"test"}`, again); !rep || n != 2 {
		t.Errorf("the same failure with other timings: repeated=%v count=%d, want a repeat", rep, n)
	}
	if rep, _ := l.Record("run_gate", `{"gate":"test"}`, "FAIL\texample.com/m\t0.004s\n--- FAIL: TestY (0.00s)"); rep {
		t.Error("another failing test is another result")
	}
}
