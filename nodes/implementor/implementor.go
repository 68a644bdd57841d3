package implementor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Loop detection: the same action with the same result a second time within
// the recent window gets a nudge that names it; a third time ends the
// attempt (steer.go).
const (
	loopWindow    = 8
	loopThreshold = 2
	// failedEditNudge edits in a row that did not apply get a nudge;
	// failedEditLimit end the attempt.
	failedEditNudge = 3
	failedEditLimit = 6
	// maxBadReplies in a row end the attempt: the model is not following the format.
	maxBadReplies = 3
)

// implData is what the implementor's template sees: Text selects the edit
// protocol's instructions and examples, Tools are the actions it offers.
type implData struct {
	Text  bool
	Tools []toolDoc
	// Ex names the task's own files in the worked examples.
	Ex implExamples
	// Direct: the attempt asks for one file's code, no actions
	// (direct.go); Language names the file's language.
	Direct   bool
	Language string
}

// Attempt runs one attempt at task t of the run s, from the work tree as
// it stands (the caller has reset it to the attempt's base): the coding CLI
// when one is configured, else lemmings' own tool loop. Its result says how
// the attempt ended; the caller commits it. An error is a system fault.
func Attempt(ctx context.Context, d *Deps, s *runstate.State, t *runstate.Task) (*runstate.ImplResult, error) {
	if d.Settings.CLI != nil {
		return d.cliAttempt(ctx, s, t)
	}
	return newImplLoop(d, s, t).run(ctx)
}

// implLoop is one attempt: it runs the tool loop or the direct attempt and
// hands the work to its parts, each a type of its own with what it needs.
type implLoop struct {
	*scope
	prefix   *prefixBuilder  // the prompt's prefix, composed once
	conv     *conversation   // the prefix as composed, and the history after it
	views    *views          // what the model was shown of the files
	tree     *treeWriter     // changes written, checked and undone
	gates    *gateRunner     // the gates run on the work and their fix rounds
	requests *requestBuilder // a code request at its grain
	coder    *coder          // the code calls and their draws
	tests    *testWriter     // the test a remit asks for, or one written first
}

// scope is what every part of an attempt reads: its dependencies, the run,
// the task and how the attempt asks for code. It has no methods: the parts
// share it, not behaviour.
type scope struct {
	d *Deps
	s *runstate.State
	t *runstate.Task
	// text: the code comes as plain text in a second call (EditText).
	text bool
	// direct: the attempt asks for the code of directPath at once and
	// runs the gates itself (direct.go).
	direct     bool
	directPath string
}

func newImplLoop(d *Deps, s *runstate.State, t *runstate.Task) *implLoop {
	sc := &scope{d: d, s: s, t: t, text: d.Settings.EditProtocol != EditJSON}
	conv := &conversation{budget: d.Settings.Budget}
	vw := &views{scope: sc, focus: map[string]int{}}
	tr := &treeWriter{scope: sc, views: vw, failedEdits: map[string]int{}, wholeFile: map[string]bool{}}
	gr := &gateRunner{scope: sc}
	rb := &requestBuilder{scope: sc, conv: conv, views: vw, tree: tr, gates: gr}
	cd := &coder{scope: sc, conv: conv, tree: tr, gates: gr, requests: rb}
	tw := &testWriter{scope: sc, conv: conv, tree: tr, gates: gr, requests: rb, coder: cd}
	pb := &prefixBuilder{scope: sc, conv: conv, views: vw, requests: rb}
	return &implLoop{scope: sc, prefix: pb, conv: conv, views: vw, tree: tr, gates: gr, requests: rb, coder: cd, tests: tw}
}

func (l *implLoop) run(ctx context.Context) (*runstate.ImplResult, error) {
	var res *runstate.ImplResult
	var err error
	if p, ok := l.directTarget(); ok {
		res, err = l.directAttempt(ctx, p)
	} else {
		res, err = l.loop(ctx)
	}
	if res != nil {
		res.FixRounds, res.Malformed = l.gates.fixRounds, l.coder.malformed
	}
	return res, err
}

func (l *implLoop) loop(ctx context.Context) (*runstate.ImplResult, error) {
	d := l.d
	if err := l.prefix.buildPrefix(ctx); llm.TooLarge(err) {
		return &runstate.ImplResult{Status: runstate.ImplExhausted, Summary: "the task's prompt does not fit the model's context window: " + err.Error()}, nil
	} else if err != nil {
		return nil, err
	}
	chain := l.chain(d.Interceptors...)
	for n := 1; n <= d.Settings.MaxActions; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mc := &ModelCall{N: n}
		if v := beforeModel(ctx, chain, mc); v.End != nil {
			return v.End, nil
		}
		mc.act, mc.Reply, mc.Err = l.nextAction(ctx, mc.Variation)
		if llm.TooLarge(mc.Err) {
			return &runstate.ImplResult{Status: runstate.ImplExhausted, Actions: n, Summary: "the conversation no longer fits the model's context window: " + mc.Err.Error()}, nil
		}
		if mc.Err != nil && !llm.ModelFault(mc.Err) {
			return nil, mc.Err
		}
		if v := afterModel(ctx, chain, mc); v.End != nil {
			return v.End, nil
		} else if v.Answer != "" {
			l.conv.note(mc.Reply.Content, v.Answer)
			continue
		}
		if mc.Err != nil { // an interceptor let an unusable reply through
			return nil, mc.Err
		}
		act := mc.act
		tool, _ := toolNamed(act.Action)
		tc := &ToolCall{N: n, Action: act.Action, Args: actionArgs(act), Ends: tool.end != nil, act: act}
		answered := false
		if v := beforeTool(ctx, chain, tc); v.End != nil {
			return v.End, nil
		} else if v.Answer != "" {
			tc.Result, tc.signature, answered = v.Answer, tc.Args, true
		} else if tool.end != nil {
			if res := tool.end(l, ctx, tc); res != nil {
				return res, nil
			}
		} else if res, err := l.runTool(ctx, tool, tc); res != nil || err != nil {
			return res, err
		}
		if v := afterTool(ctx, chain, tc); v.End != nil {
			return v.End, nil
		}
		if !tc.Ends || answered { // an ending action that goes on has said why (finish)
			l.conv.note(tc.Args, "RESULT of "+act.Action+":\n"+tc.Result+"\n"+l.reminder())
		}
	}
	return &runstate.ImplResult{Status: runstate.ImplExhausted, Actions: d.Settings.MaxActions, Summary: fmt.Sprintf("used all %d actions without finishing", d.Settings.MaxActions)}, nil
}

// runTool runs an action that does not end the attempt. In the text protocol
// an edit's code is asked for in a second call, and that code is what the
// conversation records and the repeat detector compares.
func (l *implLoop) runTool(ctx context.Context, tool implTool, c *ToolCall) (*runstate.ImplResult, error) {
	if !l.text || !tool.codeAfter {
		c.Result, c.signature = l.execute(ctx, c.act), c.Args
		return nil, nil
	}
	ex, err := l.coder.codeEdit(ctx, c.act, c.Args, "")
	if llm.TooLarge(err) {
		return &runstate.ImplResult{Status: runstate.ImplExhausted, Actions: c.N, Summary: "the conversation no longer fits the model's context window: " + err.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	l.conv.note(c.Args, ex.instruction)
	c.Args, c.Result, c.signature = ex.reply, ex.result, ex.reply
	return nil, nil
}

// writesCode says whether an action carries code in its JSON.
func writesCode(a Action) bool {
	t, _ := toolNamed(a.Action)
	return t.writes && (len(a.Edits) > 0 || a.Blocks != "" || a.Content != "")
}

func actionArgs(a Action) string {
	b, _ := json.Marshal(a)
	return string(b)
}

// numberedFrom renders lines first..first+count-1 of text (1-based) with
// line numbers, and says what lies outside the window and how to see it.
func numberedFrom(text string, first, count int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if text == "" {
		return "(empty file)\n"
	}
	first = max(1, min(first, len(lines)))
	last := min(len(lines), first+count-1)
	var b strings.Builder
	if first > 1 {
		fmt.Fprintf(&b, "… (lines 1-%d above are not shown)\n", first-1)
	}
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%4d| %s\n", i, lines[i-1])
	}
	if last < len(lines) {
		fmt.Fprintf(&b, "… (lines %d-%d below are not shown: read_file with start_line %d)\n", last+1, len(lines), last+1)
	}
	return b.String()
}

// PromptSamples are samples of the data the implementor template runs with
// (nodes.PromptSamples): the JSON protocol's, the text protocol's with
// every example set, and a direct attempt's.
func PromptSamples() []any {
	ex := implExamples{File: "pkg/example.go", Symbol: "Example", Lang: "go", Ext: ".go", Dir: "pkg", NewFile: "pkg/helpers.go", Gate: "test", Content: "package pkg\n"}
	tools, _ := toolDocsFor(true, ex)
	jsonTools, _ := toolDocsFor(false, implExamples{})
	return []any{implData{Tools: jsonTools}, implData{Text: true, Tools: tools, Ex: ex}, implData{Text: true, Direct: true}}
}
