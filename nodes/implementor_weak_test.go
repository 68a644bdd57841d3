package nodes

// The failure modes of weak models replayed against the implementor's loop:
// a scripted model (llmtest) answers each call in turn, a real git work tree
// takes the edits, real gates and syntax checks run.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// weakModel answers the implementor's calls from a list, in order; a call
// past the end gets finish.
type weakModel struct {
	mu      sync.Mutex
	replies []llmtest.Reply
	calls   []llmtest.Call
	// respondWith, when set, answers every call instead of the list.
	respondWith func(llmtest.Call) llmtest.Reply
}

func (m *weakModel) respond(c llmtest.Call) llmtest.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, c)
	if m.respondWith != nil {
		return m.respondWith(c)
	}
	if len(m.replies) == 0 {
		return llmtest.Reply{Content: `{"thought":"done","action":"finish","summary":"done"}`}
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return r
}

func (m *weakModel) recorded() []llmtest.Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llmtest.Call(nil), m.calls...)
}

func act(t *testing.T, v map[string]any) llmtest.Reply {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return llmtest.Reply{Content: string(b)}
}

func text(s string) llmtest.Reply { return llmtest.Reply{Content: s} }

// weakRun is one attempt's set-up: a repository with files, gates, and the
// scripted model.
type weakRun struct {
	d     *Deps
	wt    *workspace.Worktree
	model *weakModel
	task  *runstate.Task
}

func newWeakRun(t *testing.T, protocol string, files map[string]string, replies ...llmtest.Reply) *weakRun {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-q", "-m", "init")
	wt := testWorktree(t, dir)
	ctx := context.Background()
	m := &weakModel{replies: replies}
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "weak", ContextLength: 32768}))
	t.Cleanup(srv.Close)
	srv.Script(llmtest.Step{Times: -1, Respond: m.respond})
	router, err := llm.NewRouter(llm.RouterConfig{Roles: map[string]llm.RoleSpec{RolePrimary: {Provider: llm.ProviderOllama, Model: "weak", BaseURL: srv.URL()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { router.Close() })
	composer, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.EditProtocol = protocol
	set.SyntaxChecks = map[string]string{".go": ""} // Go parsed in-process; no go vet in these tests
	set.MaxActions = 12
	set.Samples, set.Draws = 1, 1 // one candidate per code call: the scripts answer in order
	head, err := wt.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for p := range files {
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			targets = append(targets, p)
		}
	}
	return &weakRun{
		d:     &Deps{Model: router, Composer: composer, Work: wt, Settings: set, Sandbox: sandboxWith(t)},
		wt:    wt,
		model: m,
		task: &runstate.Task{ID: "t1", Title: "Fix Mean", Instructions: "Mean must divide as floats.", AcceptanceCriteria: []string{"the check passes"},
			TargetFiles: targets, StartCommit: head, AttemptBase: head, Attempt: 1},
	}
}

func (r *weakRun) run(t *testing.T) *runstate.ImplResult {
	t.Helper()
	out, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task})
	if err != nil {
		t.Fatal(err)
	}
	return out.Implementation
}

func (r *weakRun) file(t *testing.T, p string) string {
	t.Helper()
	data, err := r.wt.FS().ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// lastUser is the last user message of call i: the result the model read.
func (r *weakRun) lastUser(i int) string {
	calls := r.model.recorded()
	if i < 0 {
		i += len(calls)
	}
	if i < 0 || i >= len(calls) {
		return ""
	}
	return calls[i].LastUser()
}

const meanGo = "package stats\n\n// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn float64(total / len(xs))\n}\n"

const meanFixed = "package stats\n\n// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn float64(total) / float64(len(xs))\n}\n"

func TestTheTextProtocolTakesAWholeSmallFileFromAFencedBlock(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go"}),
		text("Here is the file:\n```go\n"+meanFixed+"```\n"),
	)
	res := r.run(t)
	if res.Status != runstate.ImplFinished || res.Malformed != 0 {
		t.Fatalf("status %s, %d malformed: %s", res.Status, res.Malformed, res.Summary)
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go =\n%s", got)
	}
	calls := r.model.recorded()
	if len(calls[0].Format) == 0 || len(calls[1].Format) != 0 {
		t.Error("the action must be asked with a JSON format and the code without one")
	}
	if !strings.Contains(calls[1].LastUser(), "complete new content of stats.go") || !strings.Contains(calls[1].LastUser(), "```go\npackage stats") {
		t.Errorf("the code call must ask for the whole file and show it:\n%s", calls[1].LastUser())
	}
	after := r.lastUser(2)
	if !strings.Contains(after, "stats.go now reads:") || !strings.Contains(after, "   9| \treturn float64(total) / float64(len(xs))") {
		t.Errorf("the result must show the edited lines, numbered:\n%s", after)
	}
	if !strings.Contains(after, "CURRENT CONTENT OF THE FILES YOU CHANGED") {
		t.Error("the edited file must be shown fresh at the end of the prompt")
	}
}

func TestAFenceCutOffAtTheLengthLimitIsNotWrittenAndTheModelIsAskedForLess(t *testing.T) {
	t.Parallel()
	cut := llmtest.Reply{Content: "```go\npackage stats\n\n// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\ttotal := 0\n", DoneReason: "length", CompletionTokens: 4096}
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go"}),
		cut,
		text("```go\n"+meanFixed+"```"),
	)
	res := r.run(t)
	if res.Status != runstate.ImplFinished {
		t.Fatalf("status %s: %s", res.Status, res.Summary)
	}
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go =\n%s", got)
	}
	if res.Malformed != 1 {
		t.Errorf("malformed = %d, want the cut reply counted", res.Malformed)
	}
	if reask := r.lastUser(2); !strings.Contains(reask, "cut off at 4096 tokens") || !strings.Contains(reask, "smaller change") {
		t.Errorf("the re-ask must say the reply was cut off:\n%s", reask)
	}
}

func TestACutOffFenceTwiceWritesNothing(t *testing.T) {
	t.Parallel()
	cut := llmtest.Reply{Content: "```go\npackage stats\n\nfunc Mean(", DoneReason: "length", CompletionTokens: 512}
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go"}), cut, cut,
		act(t, map[string]any{"thought": "give up", "action": "blocked", "summary": "too big"}),
	)
	res := r.run(t)
	if got := r.file(t, "stats.go"); got != meanGo {
		t.Errorf("a cut reply changed the file:\n%s", got)
	}
	if res.Status != runstate.ImplBlocked || res.Malformed != 2 {
		t.Errorf("status %s, malformed %d", res.Status, res.Malformed)
	}
	if after := r.lastUser(3); !strings.Contains(after, "No file was changed") {
		t.Errorf("the model must be told nothing was written:\n%s", after)
	}
}

func TestTruncatedJSONWithCodeIsNeverWritten(t *testing.T) {
	t.Parallel()
	// All-JSON protocol: the reply stops at the limit inside the content;
	// the JSON repair could close it, so the length stop must refuse it.
	cut := llmtest.Reply{Content: `{"thought":"write","action":"write_file","path":"stats.go","content":"package stats\n\nfunc Mean(xs []int) float64 {\n\ttotal := 0`,
		DoneReason: "length", CompletionTokens: 2048}
	r := newWeakRun(t, implementor.EditJSON, map[string]string{"stats.go": meanGo}, cut, cut,
		act(t, map[string]any{"thought": "smaller", "action": "edit", "edits": []map[string]string{{"path": "stats.go",
			"search": "\treturn float64(total / len(xs))\n", "replace": "\treturn float64(total) / float64(len(xs))\n"}}}),
	)
	res := r.run(t)
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go =\n%s", got)
	}
	if res.Status != runstate.ImplFinished || res.Malformed == 0 {
		t.Errorf("status %s malformed %d", res.Status, res.Malformed)
	}
	found := false
	for _, c := range r.model.recorded() {
		if strings.Contains(c.LastUser(), "cut off at 2048 tokens") {
			found = true
		}
	}
	if !found {
		t.Error("the model was never told its reply was cut off")
	}
}

func TestEscapedCodeInJSONIsCaughtByTheSyntaxCheck(t *testing.T) {
	t.Parallel()
	// A weak model escapes its newlines twice: the file gets "\n" as text.
	bad := `{"thought":"rewrite","action":"write_file","path":"stats.go","content":"package stats\\n\\nfunc Mean(xs []int) float64 {\\n\\treturn 0\\n}\\n"}`
	r := newWeakRun(t, implementor.EditJSON, map[string]string{"stats.go": meanGo}, text(bad))
	r.run(t)
	result := r.lastUser(1)
	if !strings.Contains(result, "this edit was reverted: it broke the parse of stats.go (line 1:") || !strings.Contains(result, "No file was changed") {
		t.Errorf("the edit that broke the parse must be reverted and said so:\n%s", result)
	}
	if got := r.file(t, "stats.go"); got != meanGo {
		t.Errorf("the file on disk must still parse, as it was:\n%s", got)
	}
}

func TestLineNumbersCopiedIntoSearchBlocksAreStrippedAndApplied(t *testing.T) {
	t.Parallel()
	blocks := "stats.go\n<<<<<<< SEARCH\n   8| \t}\n   9| \treturn float64(total / len(xs))\n=======\n   8| \t}\n   9| \treturn float64(total) / float64(len(xs))\n>>>>>>> REPLACE\n"
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go"}), text(blocks))
	r.d.Settings.WholeFileLines = 5 // blocks, as for a large file
	res := r.run(t)
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go =\n%s", got)
	}
	if res.Status != runstate.ImplFinished {
		t.Errorf("status %s", res.Status)
	}
	if !strings.Contains(r.lastUser(2), "line numbers you copied into SEARCH were removed") {
		t.Errorf("the model must be told not to copy line numbers:\n%s", r.lastUser(2))
	}
	if code := r.model.recorded()[1].LastUser(); !strings.Contains(code, "new version of function Mean") {
		t.Errorf("a large Go file must be asked for by function (blocks are still taken):\n%s", code)
	}
}

func TestStaleSearchTextTwiceSwitchesTheFileToWholeFile(t *testing.T) {
	t.Parallel()
	stale := "stats.go\n<<<<<<< SEARCH\n\treturn total / len(xs)\n=======\n\treturn float64(total) / float64(len(xs))\n>>>>>>> REPLACE\n"
	stale2 := "stats.go\n<<<<<<< SEARCH\n\treturn float64(total / len(words))\n=======\n\treturn float64(total) / float64(len(xs))\n>>>>>>> REPLACE\n"
	edit := act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go"})
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		edit, text(stale), edit, text(stale2), edit, text("```go\n"+meanFixed+"```"))
	r.d.Settings.WholeFileLines = 5
	res := r.run(t)
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go =\n%s", got)
	}
	if res.Status != runstate.ImplFinished {
		t.Errorf("status %s", res.Status)
	}
	calls := r.model.recorded()
	if !strings.Contains(calls[4].LastUser(), "the next edit of it asks for the whole file") {
		t.Errorf("the second failure must announce the switch:\n%s", calls[4].LastUser())
	}
	if !strings.Contains(calls[5].LastUser(), "complete new content of stats.go") {
		t.Errorf("after two failed edits the file must be asked for whole:\n%s", calls[5].LastUser())
	}
}

func TestTheSameFailingEditIsNudgedBeforeTheAttemptEnds(t *testing.T) {
	t.Parallel()
	same := act(t, map[string]any{"thought": "fix", "action": "edit", "edits": []map[string]string{{"path": "stats.go", "search": "no such line\n", "replace": "x\n"}}})
	r := newWeakRun(t, implementor.EditJSON, map[string]string{"stats.go": meanGo}, same, same, same, same, same, same, same)
	res := r.run(t)
	if res.Status != runstate.ImplLoop {
		t.Fatalf("status %s after %d actions: %s", res.Status, res.Actions, res.Summary)
	}
	if res.Actions != 3 {
		t.Errorf("ended after %d actions, want 3 (the second gets a nudge, the third ends it)", res.Actions)
	}
	nudge := r.lastUser(2)
	if !strings.Contains(nudge, "NOTE: this is the second time you did this same edit") || !strings.Contains(nudge, "read the file again") {
		t.Errorf("the second repeat must get a nudge naming it:\n%s", nudge)
	}
	if got := r.file(t, "stats.go"); got != meanGo {
		t.Error("a failed edit changed the file")
	}
}

func TestFailingGatesOnFinishComeBackIntoTheSameConversation(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "done?", "action": "finish", "summary": "nothing to do"}),
		act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go"}),
		text("```go\n"+meanFixed+"```"),
		act(t, map[string]any{"thought": "now", "action": "finish", "summary": "fixed the division"}),
	)
	r.d.Gates = []workspace.Gate{{Name: "check", Command: `grep -q 'float64(total) / float64' stats.go || { echo "stats.go:9:9: integer division"; echo "FAIL check"; exit 1; }`}}
	res := r.run(t)
	if res.Status != runstate.ImplFinished || res.FixRounds != 1 || res.Summary != "fixed the division" {
		t.Fatalf("status %s, fix rounds %d, summary %q", res.Status, res.FixRounds, res.Summary)
	}
	fb := r.lastUser(1)
	for _, w := range []string{"not finished yet: a gate fails (fix round 1 of 3)", "stats.go:9:9: integer division", ">   9| \treturn float64(total / len(xs))", "FAIL check"} {
		if !strings.Contains(fb, w) {
			t.Errorf("the fix round lacks %q:\n%s", w, fb)
		}
	}
}

// Fix rounds are for changes: gates that keep failing on changed code end the
// attempt after the configured rounds.
func TestGatesThatNeverPassEndTheAttemptAfterTheFixRounds(t *testing.T) {
	t.Parallel()
	finish := act(t, map[string]any{"thought": "done", "action": "finish", "summary": "done"})
	write := func(n int) llmtest.Reply {
		return act(t, map[string]any{"thought": "try", "action": "write_file", "path": fmt.Sprintf("try%d.txt", n), "content": "x\n"})
	}
	r := newWeakRun(t, implementor.EditJSON, map[string]string{"stats.go": meanGo}, finish, write(1), finish, write(2), finish, finish)
	r.d.Gates = []workspace.Gate{{Name: "check", Command: "echo broken; exit 1"}}
	r.d.Settings.FixRounds = 2
	res := r.run(t)
	if res.Status != runstate.ImplFinished || res.FixRounds != 2 || res.Actions != 5 {
		t.Errorf("status %s, fix rounds %d, actions %d: want finished after 2 rounds", res.Status, res.FixRounds, res.Actions)
	}
}

// A finish on the very code the gates just failed is answered by lemmings:
// the gates do not run again, and the second such finish ends the attempt
// (the first real coder said finish four times in a row, each a model call
// and a gate run).
func TestASecondFinishOnFailingCodeEndsTheAttempt(t *testing.T) {
	finish := act(t, map[string]any{"thought": "done", "action": "finish", "summary": "done"})
	// The gate counts its runs in a file of the work tree that git ignores
	// (the sandbox lets a gate write nowhere else).
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo, ".gitignore": "gate-runs\n"}, finish, finish, finish, finish)
	counter := filepath.Join(r.d.Work.Dir(), "gate-runs")
	r.d.Gates = []workspace.Gate{{Name: "check", Command: "echo run >> gate-runs; echo broken; exit 1"}}
	r.d.Settings.FixRounds = 3
	res := r.run(t)
	if res.Status != runstate.ImplLoop || res.Actions != 2 || !strings.Contains(res.Summary, "finish twice") {
		t.Fatalf("status %s after %d actions (%s): want a loop at the second finish", res.Status, res.Actions, res.Summary)
	}
	if calls := len(r.model.recorded()); calls != 2 {
		t.Errorf("%d model calls, want 2", calls)
	}
	if data, _ := os.ReadFile(counter); strings.Count(string(data), "run") != 1 {
		t.Errorf("the gates ran %d times, want once", strings.Count(string(data), "run"))
	}
}

func TestThePromptPrefixStaysByteIdenticalAcrossTheAttempt(t *testing.T) {
	t.Parallel()
	var replies []llmtest.Reply
	for i := 0; i < 10; i++ {
		replies = append(replies, act(t, map[string]any{"thought": "look", "action": "read_file", "path": fmt.Sprintf("f%d.txt", i)}))
	}
	replies = append(replies, act(t, map[string]any{"thought": "fix", "action": "edit", "path": "stats.go"}), text("```go\n"+meanFixed+"```"))
	files := map[string]string{"stats.go": meanGo}
	for i := 0; i < 10; i++ {
		files[fmt.Sprintf("f%d.txt", i)] = strings.Repeat(fmt.Sprintf("line of file %d\n", i), 40)
	}
	r := newWeakRun(t, implementor.EditText, files, replies...)
	r.d.Settings.MaxActions = 20
	r.run(t)
	calls := r.model.recorded()
	breaks := 0
	for i := 1; i < len(calls); i++ {
		prev, cur := calls[i-1].Messages, calls[i].Messages
		if cur[0].Content != prev[0].Content || cur[1].Content != prev[1].Content {
			t.Fatalf("call %d: the system message or the task prompt changed", i+1)
		}
		// Every message of the previous call but its last (which may carry
		// a transient view) comes back unchanged.
		for j := 0; j < len(prev)-1; j++ {
			if j >= len(cur) || cur[j].Content != prev[j].Content {
				breaks++
				break
			}
		}
	}
	if breaks > 1 {
		t.Errorf("the prompt changed before its end in %d of %d calls; want at most one batch", breaks, len(calls)-1)
	}
	if !strings.Contains(llmtest.Section(calls[0].FirstUser(), llm.RoleSection), `"action": "edit", "path": "stats.go", "symbol": "Mean"`) {
		t.Errorf("the role's instructions must carry a worked example of edit naming the task's own file:\n%s", calls[0].FirstUser())
	}
	if !strings.Contains(calls[1].LastUser(), "Reply with one JSON action") {
		t.Error("each result must end with the reply-format reminder")
	}
}

func TestReadFileShowsAWindowAndSaysWhatLiesOutside(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	r := newWeakRun(t, implementor.EditText, map[string]string{"big.txt": b.String()},
		act(t, map[string]any{"thought": "read", "action": "read_file", "path": "big.txt", "start_line": 301}),
		act(t, map[string]any{"thought": "read", "action": "read_file", "path": "big.txt"}),
	)
	r.run(t)
	w := r.lastUser(1)
	for _, want := range []string{"big.txt (400 lines):", "… (lines 1-300 above are not shown)", " 301| line 301", " 400| line 400"} {
		if !strings.Contains(w, want) {
			t.Errorf("window lacks %q:\n%s", want, w)
		}
	}
	if w2 := r.lastUser(2); !strings.Contains(w2, " 150| line 150") || strings.Contains(w2, " 151| line 151") || !strings.Contains(w2, "read_file with start_line 151") {
		t.Errorf("the first window must stop at 150 lines and say how to go on:\n%.300s", w2)
	}
}

func TestTheSymbolMapListsTheTargetPackageAndWhatItImports(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{
		"go.mod":         "module example.com/m\n\ngo 1.22\n",
		"stats/stats.go": "package stats\n\nimport \"example.com/m/words\"\n\n// Mean is the mean word length.\nfunc Mean(s string) float64 { return float64(len(words.Split(s))) }\n\nfunc helper() {}\n",
		"words/words.go": "package words\n\nimport \"strings\"\n\n// Split splits.\nfunc Split(s string) []string { return strings.Fields(s) }\n\nfunc internal() {}\n",
	})
	r.task.TargetFiles = []string{"stats/stats.go"}
	r.run(t)
	prompt := r.model.recorded()[0].Messages[1].Content
	_, sym, _ := strings.Cut(prompt, "## "+prompts.SecSymbols+"\n")
	sym, _, _ = strings.Cut(sym, "\n## ")
	for _, w := range []string{"package stats (stats/)", "func Mean(s string) float64", "func helper()", "imported package words (words/)", "func Split(s string) []string"} {
		if !strings.Contains(sym, w) {
			t.Errorf("symbol map lacks %q:\n%s", w, sym)
		}
	}
	if strings.Contains(sym, "internal") {
		t.Errorf("an imported package's unexported names are not shown:\n%s", sym)
	}
}

func TestQAReusesGatesThatPassedInsideTheLoopOnTheSameTree(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "runs")
	qa := act(t, map[string]any{"criteria": []map[string]any{{"number": 1, "criterion": "the check passes", "met": true, "quote": "return float64(total) / float64(len(xs))", "evidence": "it passed"}}, "feedback": ""})
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go"}),
		text("```go\n"+meanFixed+"```"),
		act(t, map[string]any{"thought": "done", "action": "finish", "summary": "fixed"}),
		qa,
	)
	r.d.Gates = []workspace.Gate{{Name: "check", Command: "echo run >> '" + counter + "'"}}
	r.d.Sandbox = sandboxWith(t, filepath.Dir(counter)) // the gate counts its runs outside the work tree
	ctx := context.Background()
	s, err := r.d.Implementor(ctx, runstate.State{RunID: "r1", CurrentTask: r.task})
	if err != nil {
		t.Fatal(err)
	}
	if s.Implementation.Status != runstate.ImplFinished || s.Implementation.GatesDiffHash == "" {
		t.Fatalf("implementation %+v", s.Implementation)
	}
	s, err = r.d.QA(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !s.QA.Passed {
		t.Fatalf("QA failed: %+v", s.QA)
	}
	data, _ := os.ReadFile(counter)
	if n := strings.Count(string(data), "run"); n != 1 {
		t.Errorf("the gate ran %d times; QA should reuse the passing run on the same tree", n)
	}

	// A tree changed after the gates passed is checked again.
	s.Implementation.DiffHash = "something else"
	if _, err := r.d.QA(ctx, s); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(counter)
	if n := strings.Count(string(data), "run"); n != 2 {
		t.Errorf("the gate ran %d times; a different tree must be checked again", n)
	}
}

// A run whose wall time is spent ends the attempt before the next model
// call, not only at the next task.
func TestTheImplementorStopsWhenTheRunsWallTimeIsUp(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "look", "action": "read_file", "path": "stats.go"}))
	r.d.Settings.MaxWallTime = time.Minute
	out, err := r.d.Implementor(context.Background(), runstate.State{RunID: "r1", CurrentTask: r.task, StartedAt: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Implementation; res.Status != runstate.ImplExhausted || res.Actions != 0 || !strings.Contains(res.Summary, "limits.max_wall_time") {
		t.Errorf("result %+v", res)
	}
	if n := len(r.model.recorded()); n != 0 {
		t.Errorf("%d model calls after the wall time was spent", n)
	}
}
