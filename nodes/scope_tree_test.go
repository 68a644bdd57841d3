package nodes

import (
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/workspace"
)

// A deep subtree listed first (fixtures, vendored code) must not crowd the
// project's own top-level folders out of the tree every prompt starts with.
func TestTheTreeShowsShallowFoldersBeforeADeepSubtree(t *testing.T) {
	t.Parallel()
	var entries []workspace.Entry
	for i := range 200 {
		entries = append(entries, workspace.Entry{Path: "aaa/fixtures/case" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "/input.txt"})
	}
	for _, p := range []string{"go.mod", "nodes/planner.go", "workspace/fs.go", "zeta/z.go"} {
		entries = append(entries, workspace.Entry{Path: p})
	}
	tree := compactTree(entries, 800)
	for _, want := range []string{".: go.mod", "nodes: planner.go", "workspace: fs.go", "zeta: z.go"} {
		if !strings.Contains(tree, want) {
			t.Errorf("the tree lacks %q:\n%s", want, tree)
		}
	}
	if !strings.Contains(tree, "deeper folders") || len(tree) > 800+80 {
		t.Errorf("the tree does not fold the deep subtree within its room (%d bytes):\n%s", len(tree), tree)
	}
}
