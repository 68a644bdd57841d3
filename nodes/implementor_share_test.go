package nodes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/runstate"
)

// reusableShare is the share of each call's prompt (by characters of its
// messages, in order) that repeats the start of the call before it: what a
// server's prompt cache can serve at best.
func reusableShare(calls []llmtest.Call) float64 {
	flat := func(c llmtest.Call) string {
		var b strings.Builder
		for _, m := range c.Messages {
			b.WriteString(m.Role + "\x00" + m.Content + "\x00")
		}
		return b.String()
	}
	same, total := 0, 0
	for i := 1; i < len(calls); i++ {
		a, b := flat(calls[i-1]), flat(calls[i])
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		same += n
		total += len(b)
	}
	if total == 0 {
		return 0
	}
	return float64(same) / float64(total)
}

// A long attempt of reads and edits, the JSON protocol so the same script
// runs against the loop before this change: how much of each prompt repeats
// the one before (docs/implementor.md quotes it).
func TestReusablePromptShareOfALongAttempt(t *testing.T) {
	t.Parallel()
	files := map[string]string{"stats.go": meanGo}
	var replies []llmtest.Reply
	for i := 0; i < 16; i++ {
		p := fmt.Sprintf("f%02d.txt", i)
		files[p] = strings.Repeat(fmt.Sprintf("line of file %d\n", i), 60)
		replies = append(replies, act(t, map[string]any{"thought": "look", "action": "read_file", "path": p}))
	}
	replies = append(replies, act(t, map[string]any{"thought": "fix", "action": "edit", "edits": []map[string]string{{"path": "stats.go",
		"search": "\treturn float64(total / len(xs))\n", "replace": "\treturn float64(total) / float64(len(xs))\n"}}}))
	r := newWeakRun(t, implementor.EditJSON, files, replies...)
	r.d.Settings.MaxActions = 30
	r.d.Settings.TokenBudgets[runstate.NodeImplementor] = 8000
	r.run(t)
	share := reusableShare(r.model.recorded())
	t.Logf("reusable prompt share over %d calls: %.0f%%", len(r.model.recorded()), 100*share)
	if share < 0.7 {
		t.Errorf("only %.0f%% of each prompt repeats the one before; want ≥ 70%%", 100*share)
	}
}
