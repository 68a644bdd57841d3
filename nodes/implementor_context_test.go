package nodes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
)

// section cuts one "## TITLE" section out of a prompt.
func section(prompt, title string) string {
	_, s, _ := strings.Cut(prompt, "## "+title+"\n")
	s, _, _ = strings.Cut(s, "\n## ")
	return s
}

func TestFilesNearTheTargetAreListedForTheTask(t *testing.T) {
	t.Parallel()
	files := map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "zeta/z.go": "package zeta\n"}
	// Many files that sort before the target's directory.
	for i := 0; i < 120; i++ {
		files[fmt.Sprintf("aaa/f%03d.txt", i)] = "x\n"
		files[fmt.Sprintf("aab/g%03d.txt", i)] = "x\n"
	}
	files["pkg/stats/stats.go"] = meanGo
	files["pkg/stats/more.go"] = "package stats\n"
	files["pkg/other/other.go"] = "package other\n"
	r := newWeakRun(t, implementor.EditText, files)
	r.task.TargetFiles = []string{"pkg/stats/stats.go"}
	r.run(t)
	tree := section(r.model.recorded()[0].FirstUser(), "FILES NEAR THE TARGET")
	want := []string{"pkg/stats/ (the task's directory):\n  pkg/stats/more.go", "beside pkg/stats/ in pkg/:\n  pkg/other/  (1 files)"}
	at := -1
	for _, w := range want {
		i := strings.Index(tree, w)
		if i < 0 {
			t.Fatalf("the tree lacks %q:\n%s", w, tree)
		}
		if i < at {
			t.Errorf("%q comes too early:\n%s", w, tree)
		}
		at = i
	}
	if strings.Contains(tree, "f000.txt") {
		t.Errorf("files far from the target are listed (the shared overview has them):\n%s", tree)
	}
}

func TestALongTargetFileIsShownAroundTheUnitTheTaskNames(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("package stats\n\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "// F%d does nothing.\nfunc F%d() {\n\t_ = %d\n}\n\n", i, i, i)
	}
	b.WriteString(meanGoBody)
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": b.String()})
	r.task.Instructions = "Mean must divide as floats."
	r.run(t)
	prompt := r.model.recorded()[0].FirstUser()
	files := section(prompt, "TARGET FILES")
	if !strings.Contains(files, "func Mean at lines 303-310") || !strings.Contains(files, " 309| \treturn float64(total / len(xs))") {
		t.Errorf("the target file must be shown around Mean:\n%.600s", files)
	}
	if strings.Contains(files, "   3| // F0 does nothing.") {
		t.Errorf("the top of the file is shown instead of the unit:\n%.300s", files)
	}
	system := llmtest.Section(r.model.recorded()[0].FirstUser(), llm.RoleSection)
	if strings.Contains(system, "read a file before you edit it") {
		t.Error("the prompt still asks to read what it already shows")
	}
	for _, w := range []string{`"path": "stats.go", "symbol": "Mean"`, `"pattern": "Mean\\(", "path": "*.go"`} {
		if !strings.Contains(system, w) {
			t.Errorf("the worked examples must use the task's own file and unit (%q):\n%s", w, system)
		}
	}
	if strings.Contains(system, "textstats") || strings.Contains(system, "MeanWordLength") {
		t.Error("the worked examples name the demo's files")
	}
}

func TestTheSymbolMapStartsWithTheTargetFileAndNamesItsUsers(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{
		"go.mod":         "module example.com/m\n\ngo 1.22\n",
		"stats/a.go":     "package stats\n\n// A comes first alphabetically.\nfunc A() {}\n",
		"stats/stats.go": "package stats\n\n// Mean is the mean.\nfunc Mean(xs []int) float64 { return 0 }\n",
		"cmd/main.go":    "package main\n\nimport \"example.com/m/stats\"\n\nfunc main() { _ = stats.Mean(nil) }\n",
	})
	r.task.TargetFiles = []string{"stats/stats.go"}
	r.run(t)
	sym := section(r.model.recorded()[0].FirstUser(), "SYMBOLS")
	iMean, iA := strings.Index(sym, "func Mean("), strings.Index(sym, "func A()")
	if iMean < 0 || iA < 0 || iMean > iA {
		t.Errorf("the target file's symbols must come first:\n%s", sym)
	}
	if !strings.Contains(sym, "used by:\n  cmd/: main.go") {
		t.Errorf("the symbol map must name the packages that import the target:\n%s", sym)
	}
}

// Without a target file there is no name an example could use: the tools
// that need one are described without an example, never with an invented
// file a small coder would copy ("helpers.go", "example.go").
func TestWorkedExamplesNameNothingWithoutATargetFile(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{"README.md": "# x\n"})
	r.task.TargetFiles = nil
	r.run(t)
	system := llmtest.Section(r.model.recorded()[0].FirstUser(), llm.RoleSection)
	for _, invented := range []string{"example.go", "Example", "helpers", `"path": "`, "textstats"} {
		if invented == `"path": "` {
			if strings.Count(system, invented) != 1 || !strings.Contains(system, `"path": "."`) {
				t.Errorf("an example names a path other than the root:\n%s", system)
			}
			continue
		}
		if strings.Contains(system, invented) {
			t.Errorf("the examples name %q:\n%s", invented, system)
		}
	}
}
