package nodes

import (
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
)

func TestImplementorHistoryStaysWithinItsBudget(t *testing.T) {
	l := &implLoop{}
	for i := 0; i < 30; i++ {
		l.note(`{"action":"read_file","path":"big.go"}`, "RESULT of read_file:\n"+strings.Repeat("line of code\n", 200))
	}
	full := 0
	for _, m := range l.history {
		full += llm.CountTokens(m.Content)
	}
	out, used := l.compactHistory(3000)
	if used > 3000 {
		t.Errorf("history of %d tokens exceeds the budget of 3000", used)
	}
	if used >= full {
		t.Errorf("nothing was compacted: %d of %d", used, full)
	}
	last := out[len(out)-1].Content
	if !strings.HasPrefix(last, "RESULT of read_file:") || strings.Contains(last, "elided") {
		t.Error("the latest result must stay in full")
	}
	if !strings.Contains(out[0].Content, "earlier actions are no longer shown") {
		t.Errorf("dropping history must be said: %q", out[0].Content)
	}
	if len(l.history) != 60 {
		t.Error("compaction must not change the loop's own record")
	}
}
