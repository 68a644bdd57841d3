package implementor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// A loop on no work tree: enough for the interceptors that read only its
// counters and settings.
func bareLoop() *implLoop {
	d := &Deps{Settings: Settings{Knobs: Knobs{MaxActions: 12, EditProtocol: EditText}}, Clock: testClock{}}
	return newImplLoop(d, &runstate.State{}, &runstate.Task{ID: "T1", Attempt: 1})
}

func names(chain []Interceptor) []string {
	var out []string
	for _, i := range chain {
		out = append(out, i.Name)
	}
	return out
}

func TestTheChainRunsTheImplementorsInterceptorsInTheDocumentedOrderThenTheCallers(t *testing.T) {
	t.Parallel()
	got := names(bareLoop().chain(Interceptor{Name: "caller's"}))
	want := []string{"wall time", "variation", "prose edits", "reply format", "progress", "finish gates", "repeats", "caller's"}
	if !slices.Equal(got, want) {
		t.Errorf("chain %v, want %v", got, want)
	}
}

// recorder is an interceptor that notes each hook it runs and decides v.
func recorder(name string, log *[]string, v Verdict) Interceptor {
	note := func(hook string) Verdict { *log = append(*log, hook+" "+name); return v }
	return Interceptor{Name: name,
		BeforeModel: func(context.Context, *ModelCall) Verdict { return note("before-model") },
		AfterModel:  func(context.Context, *ModelCall) Verdict { return note("after-model") },
		BeforeTool:  func(context.Context, *ToolCall) Verdict { return note("before-tool") },
		AfterTool:   func(context.Context, *ToolCall) Verdict { return note("after-tool") },
	}
}

func TestHooksRunInTheChainsOrderAndTheFirstThatDecidesStopsTheRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var log []string
	chain := []Interceptor{recorder("a", &log, Verdict{}), recorder("b", &log, Verdict{}), {Name: "no hooks"}, recorder("c", &log, Verdict{})}
	beforeModel(ctx, chain, &ModelCall{})
	afterTool(ctx, chain, &ToolCall{})
	want := []string{"before-model a", "before-model b", "before-model c", "after-tool a", "after-tool b", "after-tool c"}
	if !slices.Equal(log, want) {
		t.Errorf("hooks ran %v, want %v", log, want)
	}

	end := &runstate.ImplResult{Status: runstate.ImplLoop}
	for _, tc := range []struct {
		name string
		v    Verdict
		run  func([]Interceptor) Verdict
		hook string
	}{
		{"an end before the model", Verdict{End: end}, func(c []Interceptor) Verdict { return beforeModel(ctx, c, &ModelCall{}) }, "before-model"},
		{"an answer after the model", Verdict{Answer: "not valid"}, func(c []Interceptor) Verdict { return afterModel(ctx, c, &ModelCall{}) }, "after-model"},
		{"an answer before a tool", Verdict{Answer: "done already"}, func(c []Interceptor) Verdict { return beforeTool(ctx, c, &ToolCall{}) }, "before-tool"},
		{"an end after a tool", Verdict{End: end}, func(c []Interceptor) Verdict { return afterTool(ctx, c, &ToolCall{}) }, "after-tool"},
	} {
		log = nil
		got := tc.run([]Interceptor{recorder("a", &log, Verdict{}), recorder("b", &log, tc.v), recorder("c", &log, Verdict{})})
		if got != tc.v {
			t.Errorf("%s: the chain decided %+v, want b's %+v", tc.name, got, tc.v)
		}
		if want := []string{tc.hook + " a", tc.hook + " b"}; !slices.Equal(log, want) {
			t.Errorf("%s: hooks ran %v, want %v (c never)", tc.name, log, want)
		}
	}
}

func TestAnAnswerDoesNotStopTheHooksThatCannotTakeOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var log []string
	chain := []Interceptor{recorder("a", &log, Verdict{Answer: "ignored"}), recorder("b", &log, Verdict{})}
	if v := beforeModel(ctx, chain, &ModelCall{}); v.stops() {
		t.Errorf("before the model an answer is not taken: %+v", v)
	}
	if v := afterTool(ctx, chain, &ToolCall{}); v.stops() {
		t.Errorf("after a tool an answer is not taken: %+v", v)
	}
	if want := []string{"before-model a", "before-model b", "after-tool a", "after-tool b"}; !slices.Equal(log, want) {
		t.Errorf("hooks ran %v, want %v", log, want)
	}
}

func TestWallTimeEndsTheAttemptBeforeAnActionPastTheLimit(t *testing.T) {
	t.Parallel()
	l := bareLoop()
	i := wallTime(l)
	if v := i.BeforeModel(context.Background(), &ModelCall{N: 4}); v.stops() {
		t.Errorf("without a limit the call goes on: %+v", v)
	}
	l.d.Clock = testClock{left: 1, limited: true}
	if v := i.BeforeModel(context.Background(), &ModelCall{N: 4}); v.stops() {
		t.Errorf("with time left the call goes on: %+v", v)
	}
	l.d.Clock = testClock{left: 0, limited: true}
	v := i.BeforeModel(context.Background(), &ModelCall{N: 4})
	if v.End == nil || v.End.Status != runstate.ImplExhausted || v.End.Actions != 3 || v.End.Summary != "reached the wall-time limit" {
		t.Errorf("past the limit the attempt ends exhausted after 3 actions: %+v", v.End)
	}
}

func TestRunawayRepliesVaryTheNextSampling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	i := variation()
	next := func() int { c := &ModelCall{}; i.BeforeModel(ctx, c); return c.Variation }
	if got := next(); got != 0 {
		t.Errorf("first call varied %d", got)
	}
	i.AfterModel(ctx, &ModelCall{Err: &llm.StructuredError{Problem: "bad json"}})
	if got := next(); got != 0 {
		t.Errorf("an unusable reply that is no runaway varied the next call: %d", got)
	}
	for range 2 {
		if v := i.AfterModel(ctx, &ModelCall{Err: &llm.StructuredError{Stop: llm.StopRunaway}}); v.stops() {
			t.Errorf("variation decided %+v", v)
		}
	}
	if got := next(); got != 2 {
		t.Errorf("after two runaways the next call varies %d, want 2", got)
	}
}

func TestEditBlocksInProseAreTakenUnlessTheReplyWasCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	blocks := "calc.go\n<<<<<<< SEARCH\nreturn a - b\n=======\nreturn a + b\n>>>>>>> REPLACE\n"
	i := proseEdits()

	c := &ModelCall{Err: &llm.StructuredError{Raw: "Here is the fix:\n" + blocks}}
	if v := i.AfterModel(ctx, c); v.stops() || c.Err != nil || c.Action() != "edit_blocks" || c.act.Blocks == "" {
		t.Errorf("prose with edit blocks becomes an edit_blocks action: %+v err=%v action=%q", v, c.Err, c.Action())
	}
	for name, err := range map[string]error{
		"cut at the reply limit": &llm.StructuredError{Raw: blocks, Stop: llm.StopLength},
		"no blocks":              &llm.StructuredError{Raw: "I would change calc.go."},
		"not a reply":            errors.New("connection refused"),
	} {
		c := &ModelCall{Err: err}
		if i.AfterModel(ctx, c); c.Err != err || c.Action() != "" {
			t.Errorf("%s: the reply was changed: err=%v action=%q", name, c.Err, c.Action())
		}
	}
}

func TestUnusableRepliesAreAnsweredUntilTheThirdInARowEndsTheAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := bareLoop()
	i := replyFormat(l)
	bad := func(n int) Verdict {
		return i.AfterModel(ctx, &ModelCall{N: n, Err: &llm.StructuredError{Problem: "no JSON"}})
	}
	if v := bad(1); v.End != nil || !strings.HasPrefix(v.Answer, "Your reply was not a valid action (") {
		t.Errorf("a bad reply is answered: %+v", v)
	}
	if v := i.AfterModel(ctx, &ModelCall{N: 2, act: Action{actionHead: actionHead{Action: "read_file"}}}); v.stops() {
		t.Errorf("a good reply goes on: %+v", v)
	}
	for n := 3; n <= 4; n++ {
		if v := bad(n); v.End != nil {
			t.Fatalf("a good reply between starts the count again; bad reply %d ended the attempt: %+v", n, v.End)
		}
	}
	v := bad(5)
	if v.End == nil || v.End.Status != runstate.ImplError || v.End.Actions != 5 {
		t.Errorf("the third bad reply in a row ends the attempt: %+v", v)
	}
	if l.coder.malformed != 4 {
		t.Errorf("malformed replies counted %d, want 4", l.coder.malformed)
	}
	// Cut at the reply limit with code in it: never half a change.
	l = bareLoop()
	i = replyFormat(l)
	cut := &ModelCall{N: 1, Reply: llm.Response{DoneReason: "length"}, act: Action{actionHead: actionHead{Action: "write_file", Path: "a.go"}, Content: "package a"}}
	if v := i.AfterModel(ctx, cut); !strings.Contains(v.Answer, "cut off") {
		t.Errorf("a cut reply carrying code is answered: %+v", v)
	}
	cut.act.Content = ""
	if v := i.AfterModel(ctx, cut); v.stops() {
		t.Errorf("a cut reply without code goes on: %+v", v)
	}
}

func TestProgressShowsAnEndingActionBeforeItRunsAndTheOthersWithTheirResult(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := bareLoop()
	var got []events.Action
	l.d.Emit = func(_ context.Context, p events.Payload) {
		if a, ok := p.(events.Action); ok {
			got = append(got, a)
		}
	}
	i := progress(l)
	finish := &ToolCall{N: 3, Action: "finish", Ends: true, act: Action{actionHead: actionHead{Action: "finish"}, actionTail: actionTail{Summary: "fixed Add"}}}
	read := &ToolCall{N: 2, Action: "read_file", Result: "  1| package calc\n  2| ...", act: Action{actionHead: actionHead{Action: "read_file", Path: "calc.go"}}}
	for _, v := range []Verdict{i.BeforeTool(ctx, read), i.AfterTool(ctx, read), i.BeforeTool(ctx, finish), i.AfterTool(ctx, finish)} {
		if v.stops() {
			t.Errorf("progress decided %+v", v)
		}
	}
	want := []events.Action{
		{Task: "T1", Attempt: 1, N: 2, Action: "read_file", Path: "calc.go", Result: "1| package calc"},
		{Task: "T1", Attempt: 1, N: 3, Action: "finish", Result: "fixed Add"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("events %+v\nwant %+v", got, want)
	}
}

func TestAFinishOnCodeTheGatesJustFailedOnEndsTheAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testDeps(t, map[string]string{"calc.go": "package calc\n"})
	head, err := d.Work.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := newImplLoop(d, &runstate.State{}, &runstate.Task{ID: "T1", Attempt: 1, StartCommit: head})
	i := finishOnFailedGates(l)
	finish := func(n int) *ToolCall { return &ToolCall{N: n, Action: "finish", Ends: true} }

	if v := i.BeforeTool(ctx, &ToolCall{N: 1, Action: "read_file"}); v.stops() {
		t.Errorf("another action goes on: %+v", v)
	}
	first := finish(2)
	if v := i.BeforeTool(ctx, first); v.stops() {
		t.Errorf("the first finish runs the gates: %+v", v)
	}
	first.Result = "a gate fails (fix round 1 of 2).\nFAIL TestAdd"
	i.AfterTool(ctx, first)
	v := i.BeforeTool(ctx, finish(3))
	if v.End == nil || v.End.Status != runstate.ImplLoop || v.End.Actions != 3 ||
		v.End.Summary != "said finish twice while a gate failed on the same code: a gate fails (fix round 1 of 2)." {
		t.Errorf("a finish on the same code ends the attempt: %+v", v.End)
	}
	if err := os.WriteFile(filepath.Join(d.Work.Dir(), "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v := i.BeforeTool(ctx, finish(4)); v.stops() {
		t.Errorf("after a change the finish runs the gates again: %+v", v)
	}
}

func TestARepeatIsNudgedThenEndsTheAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := bareLoop()
	i := repeats(l)
	read := func(n int) *ToolCall {
		return &ToolCall{N: n, Action: "read_file", signature: `{"path":"a.go"}`, Result: "1| package a",
			act: Action{actionHead: actionHead{Action: "read_file", Path: "a.go"}}}
	}
	if v := i.AfterTool(ctx, read(1)); v.stops() {
		t.Errorf("a first action goes on: %+v", v)
	}
	second := read(2)
	if v := i.AfterTool(ctx, second); v.stops() || !strings.Contains(second.Result, "NOTE: this is the second time") {
		t.Errorf("a repeat is nudged and goes on: %+v %q", v, second.Result)
	}
	v := i.AfterTool(ctx, read(3))
	if v.End == nil || v.End.Status != runstate.ImplLoop || v.End.Actions != 3 {
		t.Errorf("the same once more ends the attempt: %+v", v.End)
	}
	// An ending action is not a repeat (finish goes to the gates).
	for n := 4; n <= 6; n++ {
		fin := &ToolCall{N: n, Action: "finish", Ends: true, signature: "x", act: Action{actionHead: actionHead{Action: "finish"}}}
		if v := i.AfterTool(ctx, fin); v.stops() || fin.Result != "" {
			t.Errorf("finish counted as a repeat: %+v %q", v, fin.Result)
		}
	}
	// Edits that keep failing end it too.
	l = bareLoop()
	i = repeats(l)
	l.tree.failStreak = failedEditLimit
	if v := i.AfterTool(ctx, &ToolCall{N: 7, Action: "edit", Result: "error: no match", signature: "e"}); v.End == nil ||
		v.End.Summary != "6 edits in a row did not apply" {
		t.Errorf("failing edits end the attempt: %+v", v.End)
	}
}

// scripted answers each call with the next reply and keeps the requests.
type scripted struct {
	replies []string
	reqs    []llm.Request
}

func (m *scripted) Chat(_ context.Context, req llm.Request) (llm.Response, error) {
	m.reqs = append(m.reqs, req)
	if len(m.replies) == 0 {
		return llm.Response{}, errors.New("script ran out")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return llm.Response{Content: r, DoneReason: "stop"}, nil
}

func TestACallersInterceptorAnswersForAToolInTheLoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testDeps(t, map[string]string{"calc.go": "package calc\n"})
	m := &scripted{replies: []string{
		`{"thought":"check","action":"run_gate","gate":"test"}`,
		`{"thought":"stuck","action":"blocked","summary":"cannot"}`,
	}}
	d.Model = m
	var seen []string
	d.Interceptors = []Interceptor{{Name: "no gates here",
		BeforeTool: func(_ context.Context, c *ToolCall) Verdict {
			if c.Action == "run_gate" {
				return Verdict{Answer: "gates are off in this test"}
			}
			return Verdict{}
		},
		AfterTool: func(_ context.Context, c *ToolCall) Verdict {
			seen = append(seen, c.Action+": "+c.Result)
			return Verdict{}
		}}}
	head, err := d.Work.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task := &runstate.Task{ID: "T1", Attempt: 1, Title: "Fix Add", StartCommit: head, AttemptBase: head, TargetFiles: []string{"calc.go"}}
	res, err := Attempt(ctx, d, &runstate.State{CurrentTask: task}, task)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runstate.ImplBlocked || res.Actions != 2 {
		t.Errorf("attempt ended %s after %d actions, want blocked after 2", res.Status, res.Actions)
	}
	if len(seen) != 1 || seen[0] != "run_gate: gates are off in this test" {
		t.Errorf("the caller's AfterTool saw %q, want the answered gate alone (blocked ended the attempt)", seen)
	}
	last := m.reqs[len(m.reqs)-1].Messages
	if got := last[len(last)-1].Content; !strings.Contains(got, "RESULT of run_gate:\ngates are off in this test") {
		t.Errorf("the model did not read the answer as the gate's result: %q", got)
	}
}
