package implementor

import (
	"context"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/workspace"
)

// Each tool stands alone: made with what it needs, run on a work tree, no
// attempt around it.
func TestEachToolRunsAloneOnAWorkTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	long := "package stats\n\n" + strings.Repeat("// filler\n", 250) + "\n// Mean returns the mean.\nfunc Mean(xs []int) int { return 0 }\n"
	d := testDeps(t, map[string]string{"stats.go": long, "util/util.go": "package util\n\nfunc Twice(x int) int { return 2 * x }\n"})
	fs := d.Work.FS()
	focus := map[string]int{}
	read := readTool{fs: fs, parser: ParserFor(), focus: focus}
	var landed []change
	land := func(_ context.Context, c change) landing {
		landed = append(landed, c)
		return landing{landed: true, text: "landed"}
	}
	for _, tc := range []struct {
		name string
		tool tool
		act  Action
		want []string
	}{
		{"read_file shows a window of a long file and says its length", read, Action{actionHead: actionHead{Path: "stats.go"}},
			[]string{"stats.go (255 lines):", "   1| package stats"}},
		{"read_file shows the unit a symbol names", read, Action{actionHead: actionHead{Path: "stats.go", Symbol: "Mean"}},
			[]string{"func Mean at lines 254-255", "func Mean(xs []int) int"}},
		{"read_file of a missing file says so", read, Action{actionHead: actionHead{Path: "nope.go"}}, []string{"error:"}},
		{"list_files lists a folder", listTool{fs: fs}, Action{actionHead: actionHead{Path: "util"}}, []string{"util.go"}},
		{"grep finds a pattern with its file and line", grepTool{fs: fs}, Action{actionHead: actionHead{Pattern: "func Twice"}}, []string{"util/util.go:3: func Twice"}},
		{"grep says when nothing matches", grepTool{fs: fs}, Action{actionHead: actionHead{Pattern: "Absent"}}, []string{"no matches"}},
		{"rag_search without an index says what to use instead", searchTool{}, Action{actionHead: actionHead{Query: "mean"}}, []string{"use grep instead"}},
		{"run_gate of an unknown gate lists the gates", gateTool{gates: []workspace.Gate{{Name: "test", Command: "go test ./..."}}, dir: d.Work.Dir()},
			Action{actionTail: actionTail{Gate: "lint"}}, []string{`unknown gate "lint"`, "test"}},
		{"write_file of the same content changes nothing", writeTool{fs: fs, land: land}, Action{actionHead: actionHead{Path: "util/util.go"}, Content: "package util\n\nfunc Twice(x int) int { return 2 * x }\n"},
			[]string{"no change"}},
		{"edit without edits is refused", editTool{land: land}, Action{}, []string{"no edits given"}},
	} {
		if got := tc.tool.run(ctx, tc.act); !containsAll(got, tc.want) {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
	if focus["stats.go"] != 254 {
		t.Errorf("read_file noted line %d of stats.go as viewed, want the unit's 254", focus["stats.go"])
	}
	if len(landed) != 0 {
		t.Errorf("a refused write or edit landed: %+v", landed)
	}
	if got := (writeTool{fs: fs, land: land}).run(ctx, Action{actionHead: actionHead{Path: "new.go"}, Content: "package stats"}); got != "landed" || len(landed) != 1 || landed[0].files["new.go"] != "package stats\n" {
		t.Errorf("write_file of a new file: %q, landed %+v", got, landed)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
