package implementor

import (
	"context"
	"strings"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// prefixBuilder composes the prompt's prefix, once an attempt: the system
// message and the task with what the repository shows of it (its files,
// their symbols, what lies near them), within what the server reads in time.
type prefixBuilder struct {
	*scope
	conv     *conversation
	views    *views
	requests *requestBuilder
}

// buildPrefix composes the system message and the first user message.
func (pb *prefixBuilder) buildPrefix(ctx context.Context) error {
	if pb.direct {
		return pb.buildDirectPrefix(ctx)
	}
	data := implData{Text: pb.text, Direct: pb.direct}
	if !pb.direct { // a direct attempt offers no actions
		data.Ex = pb.examples(ctx)
		tools, err := toolDocsFor(pb.text, data.Ex)
		if err != nil {
			return err
		}
		data.Tools = tools
	}
	sections, err := pb.sections(ctx)
	if err != nil {
		return err
	}
	full := pb.readable(pb.d.Settings.Budget)
	msgs, err := pb.d.Prompts.Compose(ctx, pb.s, data, sections, full*prefixShare/100)
	if llm.TooLarge(err) {
		// A small budget: the required parts take what they need; the
		// history then has little room and the loop says so when it is gone.
		msgs, err = pb.d.Prompts.Compose(ctx, pb.s, data, sections, full)
	}
	if err != nil {
		return err
	}
	pb.conv.prefix = msgs
	pb.conv.prefixTokens = tokensOf(pb.conv.prefix)
	return nil
}

// readableShare of the run's wall time left is what reading one prompt may
// take: a prompt a CPU cannot read in time is made smaller, not sent.
const readableShare = 4

// readable caps a prompt budget at what the server reads in a quarter of the
// run's wall time left, at the speed measured on this run's calls (no cap
// before one was measured, or with no wall limit).
func (pb *prefixBuilder) readable(budget int) int {
	m, ok := pb.d.Model.(speedometer)
	if !ok {
		return budget
	}
	rate := m.PrefillRate(rolePrimary)
	left, limited := pb.d.Clock.WallTimeLeft(pb.s, pb.d.Clock.Now())
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
func (pb *prefixBuilder) buildDirectPrefix(ctx context.Context) error {
	data := implData{Direct: true, Language: languageName(pb.directPath)}
	p, err := pb.d.Prompts.ComposeAlone(runstate.NodeImplementor, data, pb.d.Settings.Budget, nil)
	if err != nil {
		return err
	}
	task := pb.s.Remit
	if !pb.s.Quick || strings.TrimSpace(task) == "" {
		task = strings.TrimSpace(pb.t.Title + "\n" + pb.t.Instructions)
	}
	if know := pb.d.Prompts.Knowledge(ctx, pb.s).Body; strings.TrimSpace(know) != "" && !strings.HasPrefix(strings.TrimSpace(know), "(") {
		task += "\n\nThe project's conventions:\n" + know
	}
	pb.conv.prefix = append(p.Messages, llm.Message{Role: "user", Content: strings.TrimSpace(task)})
	pb.conv.prefixTokens = tokensOf(pb.conv.prefix)
	if limit := pb.d.Settings.Budget; limit > 0 && pb.conv.prefixTokens > limit {
		return &llm.Error{Kind: llm.KindContextTooLarge, PromptTokens: pb.conv.prefixTokens, Window: limit, Hint: "the remit is over the implementor's token budget"}
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

// nextAction asks for one action in the attempt's protocol.
func (l *implLoop) nextAction(ctx context.Context, variation int) (Action, llm.Response, error) {
	req := request(l.conv.prefix, l.conv.messages(l.views.freshViews()), l.actionReply())
	req.Variation = variation
	if !l.text {
		return ask[Action](ctx, l.d, l.s, req)
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
