package implementor

import (
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

func TestImplementorHistoryStaysWithinItsBudgetAndItsPrefixStable(t *testing.T) {
	t.Parallel()
	d := &Deps{Settings: Settings{Budget: 6000, Knobs: Knobs{EditProtocol: EditText}}}
	l := newImplLoop(d, &runstate.State{}, &runstate.Task{})
	l.conv.prefixTokens = 1000
	var prev []llm.Message
	breaks := 0
	for i := 0; i < 40; i++ {
		l.conv.note(`{"action":"read_file","path":"big.go"}`, "RESULT of read_file:\n"+strings.Repeat("line of code\n", 60))
		cur := l.conv.messages("")
		// The prompt of this turn must start with all of the last one's
		// messages unless a batch was elided or dropped.
		for j := range prev {
			if j >= len(cur) || cur[j].Content != prev[j].Content {
				breaks++
				break
			}
		}
		prev = cur
		if used := tokensOf(cur); used > 6000-1000-replyReserve {
			t.Fatalf("turn %d: history of %d tokens exceeds what the budget leaves", i, used)
		}
	}
	if breaks == 0 || breaks > 40/elideBatch {
		t.Errorf("the history changed before its end %d times in 40 turns; want a few batches (≤ %d)", breaks, 40/elideBatch)
	}
	last := l.conv.history[len(l.conv.history)-1].Content
	if !strings.HasPrefix(last, "RESULT of read_file:") || strings.Contains(last, "elided") {
		t.Error("the latest result must stay in full")
	}
	if !strings.Contains(l.conv.history[0].Content, "earlier actions are no longer shown") {
		t.Errorf("dropping history must be said: %q", l.conv.history[0].Content)
	}
}
