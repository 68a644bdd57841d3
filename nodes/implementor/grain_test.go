package implementor

import (
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
