package nodes

// Text helpers every node group shares: clipping, the first non-empty of
// several, the gate list of a prompt, the text a diff adds.

import (
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// gateList lists the gates as a prompt shows them.
var gateList = prompts.GateList

// addedText is the text a diff adds: its + lines, without the markers.
func addedText(diff string) string {
	var b strings.Builder
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			b.WriteString(l[1:])
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// addedLiteral reads a critAdds criterion: the text the change must add.
func addedLiteral(criterion string) (string, bool) {
	q, ok := strings.CutPrefix(criterion, critAdds)
	if !ok {
		return "", false
	}
	lit, err := strconv.Unquote(q)
	return lit, err == nil
}
