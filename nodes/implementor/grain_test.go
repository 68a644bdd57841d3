package implementor

import (
	"context"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/workspace/splice"
)

func TestTheUnitATaskNamesIsTheOneWrittenAsCode(t *testing.T) {
	t.Parallel()
	units := []splice.Unit{{Kind: "func", Name: "Add"}, {Kind: "func", Name: "Mean"}, {Kind: "method", Name: "Stats.Reset"}}
	for text, want := range map[string]string{
		"Add a doc comment to Mean(xs).":      "Mean",
		"Add a doc comment to func Mean.":     "Mean",
		"Add a doc comment to `Mean`.":        "Mean",
		"Fix Stats.Reset so it clears n.":     "Stats.Reset",
		"Add a doc comment to Mean.":          "Mean", // a word opening a sentence ranks last
		"Add one.":                            "Add",
		"Make the reset method clear n first": "",
	} {
		u, ok := taskUnit(units, text)
		if got := map[bool]string{true: u.Name}[ok]; got != want {
			t.Errorf("taskUnit(%q) = %q, want %q", text, got, want)
		}
	}
}

// The test a test-first request asks back is short and calls the target: a
// long helper asked back ran Qwen-1.5B's reply into its limit on a real task.
func TestATestWrittenFirstIsAnchoredOnAShortTestOfTheTarget(t *testing.T) {
	t.Parallel()
	l := &testWriter{scope: &scope{d: &Deps{Parser: splice.Parser{}}}}
	helper := "func testServer() int {\n" + strings.Repeat("\t_ = 1\n", 30) + "\treturn 1\n}\n"
	for name, tc := range map[string]struct{ file, want string }{
		"the shortest test calling the target": {
			"package p\n\nimport \"testing\"\n\nfunc TestLoadURL(t *testing.T) {\n\tLoadURL()\n\tLoadURL()\n}\n\nfunc TestLoad(t *testing.T) {\n\tLoad()\n}\n\nfunc TestOther(t *testing.T) {}\n\n" + helper,
			"TestLoad"},
		"else the shortest test, never the helper": {
			"package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tA()\n\tA()\n}\n\nfunc TestB(t *testing.T) {\n\tB()\n}\n\n" + helper,
			"TestB"},
		"else the file's last function": {
			"package p\n\nfunc other() {}\n\n" + helper,
			"testServer"},
	} {
		if got := l.reproAnchor(context.Background(), "p_test.go", tc.file, "Load"); got != tc.want {
			t.Errorf("%s: anchor %q, want %q", name, got, tc.want)
		}
	}
}
