package implementor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/llm"
)

// The conversation's shape. The prefix (system message and task prompt) is
// composed once per attempt within prefixShare of the budget and never
// re-packed; old results are elided in batches of elideBatch, so from one
// call to the next the prompt only grows at its end and Ollama reuses its
// cache of everything before.
const (
	prefixShare = 50 // percent of the implementor's budget
	// keepResults is how many recent exchanges stay in full.
	keepResults = 6
	// elideBatch old exchanges are elided at once, not one per turn.
	elideBatch = 4
	// replyReserve is kept free for the fresh views and the reply.
	replyReserve = 2500
	// elideOver: longer messages outside the kept window are elided.
	elideOver = 300
)

// conversation is an attempt's prompt: the prefix (the system message and
// the first user message), composed once so every call starts with the
// same bytes and the server's prompt cache is reused, and the history after
// it, kept within budget.
type conversation struct {
	budget       int // the implementor's prompt budget in tokens
	prefix       []llm.Message
	prefixTokens int
	history      []llm.Message
	dropped      int // exchanges dropped from the history so far
}

const elidedNote = "\n(output elided; repeat the action if you need it again)"

func tokensOf(ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		n += llm.CountTokens(m.Content)
	}
	return n
}

// messages is the history after the prefix with the transient text (fresh
// views) added to its last message; the history itself is not changed.
func (cv *conversation) messages(transient string) []llm.Message {
	out := slices.Clone(cv.history)
	if transient == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Role == "user" {
		out[n-1].Content += "\n\n" + transient
		return out
	}
	return append(out, llm.Message{Role: "user", Content: transient})
}

// compact keeps the history within budget in batches: once elideBatch
// exchanges older than the last keepResults carry long text, all of them are
// elided at once; when the whole prompt would pass the budget, the oldest
// half of the history goes.
func (cv *conversation) compact() {
	keepFrom := len(cv.history) - 2*keepResults
	var long []int
	for i := 0; i < keepFrom; i++ {
		if m := cv.history[i]; len(m.Content) > elideOver && !strings.HasSuffix(m.Content, elidedNote) {
			long = append(long, i)
		}
	}
	if len(long) >= 2*elideBatch {
		for _, i := range long {
			first, _, _ := strings.Cut(cv.history[i].Content, "\n")
			if len(first) > 200 {
				first = first[:200] + "…"
			}
			cv.history[i].Content = first + elidedNote
		}
	}
	avail := cv.budget - cv.prefixTokens - replyReserve
	if tokensOf(cv.history) <= avail {
		return
	}
	// Drop the oldest exchanges until the history is down to half of what
	// is available, so this happens seldom.
	h := cv.history
	if len(h) > 0 && strings.HasPrefix(h[0].Content, "(") && strings.Contains(h[0].Content, "earlier actions are no longer shown") {
		h = h[1:]
	}
	for len(h) > 2 && tokensOf(h) > avail/2 {
		h = h[2:]
		cv.dropped++
	}
	note := llm.Message{Role: "user", Content: fmt.Sprintf("(%d earlier actions are no longer shown; their changes are in the files)", cv.dropped)}
	cv.history = append([]llm.Message{note}, h...)
}

// note appends one exchange to the conversation and keeps it within budget.
func (cv *conversation) note(assistant, user string) {
	cv.history = append(cv.history,
		llm.Message{Role: "assistant", Content: assistant},
		llm.Message{Role: "user", Content: user})
	cv.compact()
}
