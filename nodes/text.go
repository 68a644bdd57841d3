package nodes

// Text helpers every node group shares: clipping, the first non-empty of
// several, the gate list of a prompt, the text a diff adds.

import (
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// clip trims s and cuts it to n bytes with a marker.
func clip(s string, n int) string { return textutil.Clip(strings.TrimSpace(s), n) }

// firstNonEmpty is the first of vs with more than blanks, trimmed.
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

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
