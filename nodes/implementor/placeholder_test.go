package implementor

import (
	"regexp"
	"testing"

	"github.com/lemmings-dev/lemmings/workspace/splice"
)

// The tool loop's request for code says its form in words: no fenced block
// holding a placeholder, which Qwen2.5-Coder-1.5B returned as the file
// ("<every line of the file>", then "<the complete file with your change
// made>"), twice a round, in the full pipeline.
func TestTheCodeRequestHoldsNoPlaceholderToCopy(t *testing.T) {
	t.Parallel()
	placeholder := regexp.MustCompile(`(?m)^\s*<[^<>\n]+>\s*$|^\s*` + "```")
	u := splice.Unit{Kind: "func", Name: "Add", Start: 3, End: 5}
	for name, text := range map[string]string{
		"whole":  codeInstruction("calc/add.go", true, true, 5),
		"new":    codeInstruction("calc/mul.go", true, false, 0),
		"blocks": codeInstruction("calc/add.go", false, true, 400),
		"unit":   unitInstruction("calc/add.go", grain{kind: grainUnit, unit: u}),
	} {
		if m := placeholder.FindString(text); m != "" {
			t.Errorf("%s: the request has a line to copy (%q):\n%s", name, m, text)
		}
	}
}
