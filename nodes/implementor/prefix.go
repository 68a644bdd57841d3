package implementor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
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

// buildPrefix composes the system message and the first user message.
func (l *implLoop) buildPrefix(ctx context.Context) error {
	if l.direct {
		return l.buildDirectPrefix(ctx)
	}
	data := implData{Text: l.text, Direct: l.direct}
	if !l.direct { // a direct attempt offers no actions
		data.Ex = l.examples(ctx)
		tools, err := toolDocsFor(l.text, data.Ex)
		if err != nil {
			return err
		}
		data.Tools = tools
	}
	sections, err := l.sections(ctx)
	if err != nil {
		return err
	}
	full := l.readable(l.d.Settings.Budget)
	msgs, err := l.d.Prompts.Compose(ctx, l.s, data, sections, full*prefixShare/100)
	if llm.TooLarge(err) {
		// A small budget: the required parts take what they need; the
		// history then has little room and the loop says so when it is gone.
		msgs, err = l.d.Prompts.Compose(ctx, l.s, data, sections, full)
	}
	if err != nil {
		return err
	}
	l.conv.prefix = msgs
	l.conv.prefixTokens = tokensOf(l.conv.prefix)
	return nil
}

// readableShare of the run's wall time left is what reading one prompt may
// take: a prompt a CPU cannot read in time is made smaller, not sent.
const readableShare = 4

// readable caps a prompt budget at what the server reads in a quarter of the
// run's wall time left, at the speed measured on this run's calls (no cap
// before one was measured, or with no wall limit).
func (l *implLoop) readable(budget int) int {
	m, ok := l.d.Model.(speedometer)
	if !ok {
		return budget
	}
	rate := m.PrefillRate(rolePrimary)
	left, limited := l.d.Clock.WallTimeLeft(l.s, l.d.Clock.Now())
	if rate <= 0 || !limited {
		return budget
	}
	fits := int(rate * left.Seconds() / readableShare)
	return max(min(budget, fits), minReadable)
}

// minReadable is the least budget a prompt is cut to: below it the task
// and the file no longer fit, and the call would be useless anyway.
const minReadable = 1024

// buildDirectPrefix composes the direct attempt's prompt: a short system
// message and the remit (with the project's knowledge when it has some),
// to which the code call adds the file and the request. Not the shared
// prefix of the other roles: a quick run's direct attempt is most often its
// only call, so there is no cache to share, and a small coder given the
// whole project context, the role text and the test file copied the file
// back unchanged (docs/implementor.md has the counts).
func (l *implLoop) buildDirectPrefix(ctx context.Context) error {
	data := implData{Direct: true, Language: languageName(l.directPath)}
	p, err := l.d.Prompts.ComposeAlone(runstate.NodeImplementor, data, l.d.Settings.Budget, nil)
	if err != nil {
		return err
	}
	task := l.s.Remit
	if !l.s.Quick || strings.TrimSpace(task) == "" {
		task = strings.TrimSpace(l.t.Title + "\n" + l.t.Instructions)
	}
	if know := l.d.Prompts.Knowledge(ctx, l.s).Body; strings.TrimSpace(know) != "" && !strings.HasPrefix(strings.TrimSpace(know), "(") {
		task += "\n\nThe project's conventions:\n" + know
	}
	l.conv.prefix = append(p.Messages, llm.Message{Role: "user", Content: strings.TrimSpace(task)})
	l.conv.prefixTokens = tokensOf(l.conv.prefix)
	if limit := l.d.Settings.Budget; limit > 0 && l.conv.prefixTokens > limit {
		return &llm.Error{Kind: llm.KindContextTooLarge, PromptTokens: l.conv.prefixTokens, Window: limit, Hint: "the remit is over the implementor's token budget"}
	}
	return nil
}

// languageName is how a file's language is called in a prompt.
func languageName(p string) string {
	switch lang := langOf(p); lang {
	case "go":
		return "Go"
	case "python", "javascript", "typescript", "rust", "java", "ruby", "kotlin", "swift":
		return strings.ToUpper(lang[:1]) + lang[1:]
	case "":
		return "software"
	case "cpp", "cc", "hpp":
		return "C++"
	case "c", "h":
		return "C"
	default:
		return lang
	}
}

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

// nextAction asks for one action in the attempt's protocol.
func (l *implLoop) nextAction(ctx context.Context, variation int) (implAction, llm.Response, error) {
	req := request(l.conv.prefix, l.conv.messages(l.views.freshViews()), l.actionReply())
	req.Variation = variation
	if !l.text {
		return ask[implAction](ctx, l.d, l.s, req)
	}
	a, resp, err := ask[implTextAction](ctx, l.d, l.s, req)
	return a.action(), resp, err
}

// reminder closes every tool result: the reply format in one line.
func (l *implLoop) reminder() string {
	if l.text {
		return "Reply with one JSON action (code is asked for after an edit or write_file action)."
	}
	return "Reply with one JSON action."
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

// actionReply is the reply budget of one action: a few hundred tokens in the
// text protocol, where the code comes in a call of its own (codeReply); in
// the JSON protocol the code is inside the action, so room for the largest
// target file rewritten.
func (l *implLoop) actionReply() int {
	if l.text {
		return ActionReplyTokens
	}
	largest := 0
	for _, p := range l.t.TargetFiles {
		if b, err := l.d.Work.FS().ReadFile(p); err == nil {
			largest = max(largest, llm.CountTokens(string(b)))
		}
	}
	return min(max(largest*5/4+512, 1536), 8192)
}

// codeReply is the reply budget of a code call of the text protocol: the
// whole file with room to grow, SEARCH/REPLACE blocks of a part of it, or a
// new file.
func codeReply(old string, whole, exists bool) int {
	n := llm.CountTokens(old)
	switch {
	case !exists:
		return 2048
	case whole:
		// A small file may grow (a stub into its solution), but a reply
		// that fills a large floor is mostly a weak model rambling: 384
		// tokens is some 35 new lines.
		return min(max(n*5/4+256, 384), 8192)
	}
	return min(max(n/2+256, 768), 2048)
}
