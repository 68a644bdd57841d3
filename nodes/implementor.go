package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Loop detection: the same action with the same result a second time within
// the recent window gets a nudge that names it; a third time ends the
// attempt (implementor_steer.go).
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
	// (implementor_direct.go); Language names the file's language.
	Direct   bool
	Language string
}

// Implementor runs one attempt at the current task: a bounded tool loop in
// which every model reply is one schema-constrained action, executed by the
// orchestrator inside the work tree. The attempt starts from its base commit
// (so a resumed run repeats it exactly) and ends in a work-in-progress commit.
func (d *Deps) Implementor(ctx context.Context, in WorkflowState) (WorkflowState, error) {
	s := in.Clone()
	t := s.CurrentTask
	if t == nil {
		return s, errors.New("implementor: no current task")
	}
	if a := s.Approval; a != nil && a.Kind == "task" {
		s.Approval = nil
		if !a.Approved {
			return d.endAttempt(ctx, s, &ImplResult{Status: ImplRejected, Summary: "operator rejected the task: " + a.Reason}), nil
		}
	}
	if err := d.Work.ResetHard(ctx, t.AttemptBase); err != nil {
		return s, fmt.Errorf("implementor: reset to attempt base: %w", err)
	}
	var res *ImplResult
	var err error
	if d.Settings.CLI != nil {
		res, err = d.cliAttempt(ctx, &s, t)
	} else {
		res, err = newImplLoop(d, &s, t).run(ctx)
	}
	if err != nil {
		return s, err
	}
	return d.endAttempt(ctx, s, res), nil
}

// endAttempt records the attempt, commits its work in progress and catches a
// repeated diff (the model going round in circles across attempts).
func (d *Deps) endAttempt(ctx context.Context, s WorkflowState, res *ImplResult) WorkflowState {
	t := s.CurrentTask
	if res.Status == ImplFinished {
		if err := d.wipCommit(ctx, t, res); err != nil {
			res.Status, res.Error = ImplError, err.Error()
		}
	}
	if res.Status == ImplFinished && res.DiffHash != "" {
		d.markDisputed(t, res.DiffHash) // a diff the review failed with the gates passing: QA resolves it
		if i := slices.Index(t.DiffHashes, res.DiffHash); i >= 0 && !t.Disputed {
			res.Status = ImplLoop
			res.Summary = fmt.Sprintf("attempt %d produced the same change as attempt %d", t.Attempt, i+1)
		}
		t.DiffHashes = append(slices.Clone(t.DiffHashes), res.DiffHash)
	}
	if res.Status != ImplFinished {
		t.Retries++
		t.Feedback = fmt.Sprintf("implementor %s: %s", res.Status, res.Summary)
		if res.Question != "" {
			t.Feedback += "\nQuestion: " + res.Question
		}
	}
	s.Implementation = res
	events.Emit(ctx, events.Implementation{Task: t.ID, Attempt: t.Attempt, Status: res.Status, Actions: res.Actions, Files: res.Files,
		FixRounds: res.FixRounds, Malformed: res.Malformed})
	return s
}

func (d *Deps) wipCommit(ctx context.Context, t *Task, res *ImplResult) error {
	diff, files, err := d.Work.Changes(ctx, t.StartCommit)
	if err != nil {
		return err
	}
	res.Files = files
	if strings.TrimSpace(diff) == "" {
		return nil
	}
	res.DiffHash = workspace.DiffHash(diff)
	sha, err := d.Work.Commit(ctx, fmt.Sprintf("lemmings wip: %s attempt %d", t.ID, t.Attempt), map[string]string{"Lemmings-Wip": t.ID})
	if errors.Is(err, workspace.ErrNothingToCommit) {
		return nil // the attempt changed nothing on top of its base
	}
	if err != nil {
		return err
	}
	res.Commit = sha
	return nil
}

type implLoop struct {
	d        *Deps
	s        *WorkflowState
	t        *Task
	detector *workspace.ActionLoop
	// text: the code comes as plain text in a second call (EditText).
	text bool
	// direct: the attempt asks for the code of directPath at once and
	// runs the gates itself (implementor_direct.go).
	direct     bool
	directPath string
	// diagnose: the next direct code call asks for the failure's cause in a
	// sentence before the code (after code that changed nothing).
	diagnose bool
	// prefill opens the reply of the next code call (a direct attempt's
	// fenced block); prefillStop closes it, and the code's own stops end
	// it early (tests a small coder appends to the file it was asked for).
	prefill  string
	stopping []string
	// expect is the direct attempt's expected size (llm.Request.Expect).
	expect int
	// codeCalls counts the code calls made (each candidate drawn).
	codeCalls int
	// prefix is the system message and the first user message, composed
	// once per attempt so every call starts with the same bytes and the
	// server's prompt cache is reused.
	prefix       []llm.Message
	prefixTokens int
	history      []llm.Message
	dropped      int // exchanges dropped from the history so far
	touched      []string
	focus        map[string]int  // file → the line last read or changed
	failedEdits  map[string]int  // file → edits that did not apply
	wholeFile    map[string]bool // files whose targeted edits failed twice
	failStreak   int             // edits in a row that did not apply
	// hint is advice on the last failed edit, added after the loop
	// detector has seen the result, so advice that varies does not hide a
	// repeat.
	hint      string
	fixRounds int
	malformed int
	// checkLast is what the fast checks found after the last change (the
	// baseline of the next), checkStart what they found before the first.
	checkLast, checkStart workspace.Checks
	// codeBudget is the reply budget of the next code call (codeReply).
	codeBudget int
	// failedTree is the work the gates last failed on at a finish, and
	// failedGates what they said.
	failedTree, failedGates string
}

func newImplLoop(d *Deps, s *WorkflowState, t *Task) *implLoop {
	return &implLoop{d: d, s: s, t: t, detector: workspace.NewActionLoop(loopWindow, loopThreshold),
		text:  d.Settings.EditProtocol != EditJSON,
		focus: map[string]int{}, failedEdits: map[string]int{}, wholeFile: map[string]bool{}}
}

func (l *implLoop) run(ctx context.Context) (*ImplResult, error) {
	var res *ImplResult
	var err error
	if p, ok := l.directTarget(); ok {
		res, err = l.directAttempt(ctx, p)
	} else {
		res, err = l.loop(ctx)
	}
	if res != nil {
		res.FixRounds, res.Malformed = l.fixRounds, l.malformed
	}
	return res, err
}

func (l *implLoop) loop(ctx context.Context) (*ImplResult, error) {
	d := l.d
	if err := l.buildPrefix(ctx); tooLarge(err) {
		return &ImplResult{Status: ImplExhausted, Summary: "the task's prompt does not fit the model's context window: " + err.Error()}, nil
	} else if err != nil {
		return nil, err
	}
	bad, runaways := 0, 0
	for n := 1; n <= d.Settings.MaxActions; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The run's wall time is checked before every action, not only
		// between tasks: a slow model must not run hours past the limit.
		if left, limited := d.wallTimeLeft(l.s, d.now()); limited && left <= 0 {
			return &ImplResult{Status: ImplExhausted, Actions: n - 1, Summary: d.wallTimeReached()}, nil
		}
		act, resp, err := l.nextAction(ctx, runaways)
		if tooLarge(err) {
			return &ImplResult{Status: ImplExhausted, Actions: n, Summary: "the conversation no longer fits the model's context window: " + err.Error()}, nil
		}
		if err != nil {
			if !modelFault(err) {
				return nil, err
			}
			// Many local coding models answer with SEARCH/REPLACE blocks in
			// prose: take those rather than waste the attempt.
			var se *llm.StructuredError
			if llm.Runaway(err) {
				runaways++ // the next asks vary the sampling further
			}
			// A reply cut at the length limit is missing its end: nothing
			// is taken from it.
			if errors.As(err, &se) && se.Stop != llm.StopLength {
				if edits, perr := workspace.ParseEditBlocks(se.Raw); perr == nil && len(edits) > 0 {
					act = implAction{actionHead: actionHead{Action: "edit_blocks", Thought: "(edit blocks in prose)"}, Blocks: se.Raw}
					err = nil
				}
			}
			if err != nil {
				bad++
				l.malformed++
				if bad >= maxBadReplies {
					return &ImplResult{Status: ImplError, Actions: n, Summary: "the model's replies were not valid actions: " + err.Error()}, nil
				}
				l.note(resp.Content, "Your reply was not a valid action ("+err.Error()+"). "+l.reminder())
				continue
			}
		}
		if resp.DoneReason == "length" && writesCode(act) {
			// A reply cut at the length limit may still parse (the JSON
			// repair closes it): never write half a change.
			bad++
			l.malformed++
			if bad >= maxBadReplies {
				return &ImplResult{Status: ImplError, Actions: n, Summary: "the model's replies kept hitting the reply limit"}, nil
			}
			l.note(resp.Content, fmt.Sprintf("Your reply was cut off at %d tokens (the reply limit), so nothing was written. Make a smaller change. %s", resp.Usage.CompletionTokens, l.reminder()))
			continue
		}
		bad = 0
		args := actionArgs(act)
		tool, _ := toolNamed(act.Action)
		if tool.end != nil {
			emitAction(ctx, l.t, n, act, act.Summary+act.Question)
			if res := tool.end(l, ctx, act, args, n); res != nil {
				return res, nil
			}
			continue
		}
		var result, signature string
		if l.text && tool.codeAfter {
			ex, err := l.codeEdit(ctx, act, args, "")
			if tooLarge(err) {
				return &ImplResult{Status: ImplExhausted, Actions: n, Summary: "the conversation no longer fits the model's context window: " + err.Error()}, nil
			}
			if err != nil {
				return nil, err
			}
			l.note(args, ex.instruction)
			args, result, signature = ex.reply, ex.result, ex.reply
		} else {
			result = l.execute(ctx, act)
			signature = args
		}
		emitAction(ctx, l.t, n, act, result)
		if end := l.steer(act, signature, &result); end != "" {
			return &ImplResult{Status: ImplLoop, Actions: n, Summary: end}, nil
		}
		l.note(args, "RESULT of "+act.Action+":\n"+result+"\n"+l.reminder())
	}
	return &ImplResult{Status: ImplExhausted, Actions: d.Settings.MaxActions, Summary: fmt.Sprintf("used all %d actions without finishing", d.Settings.MaxActions)}, nil
}

// writesCode says whether an action carries code in its JSON.
func writesCode(a implAction) bool {
	t, _ := toolNamed(a.Action)
	return t.writes && (len(a.Edits) > 0 || a.Blocks != "" || a.Content != "")
}

func actionArgs(a implAction) string {
	b, _ := json.Marshal(a)
	return string(b)
}

// note appends one exchange to the conversation and keeps it within budget.
func (l *implLoop) note(assistant, user string) {
	l.history = append(l.history,
		llm.Message{Role: "assistant", Content: assistant},
		llm.Message{Role: "user", Content: user})
	l.compact()
}

func (l *implLoop) sections(ctx context.Context) ([]llm.Section, error) {
	t := l.t
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", t.ID, t.Title)
	writeTask(&b, t.Instructions, t.AcceptanceCriteria, t.TargetFiles)
	secs := []llm.Section{ // after the shared prefix (project context, knowledge)
		{Title: prompts.SecTask, Body: strings.TrimSpace(b.String()), Required: true},
	}
	if t.Feedback != "" {
		secs = append(secs, llm.Section{Title: prompts.SecFeedback, Body: t.Feedback, Required: true})
	}
	if files := l.targetFiles(ctx); files != "" {
		secs = append(secs, llm.Section{Title: prompts.SecTargetFiles, Body: files, Priority: prioContext})
	}
	if l.direct {
		return secs, nil // one file, shown with the request: no map of the rest
	}
	if symbols := l.symbolMap(); symbols != "" {
		secs = append(secs, llm.Section{Title: prompts.SecSymbols, Body: symbols, Priority: prioContext - 5})
	}
	if near, err := l.filesNearTarget(); err == nil && near != "" {
		secs = append(secs, llm.Section{Title: prompts.SecNearFiles, Body: near, Priority: prioOverview})
	}
	return secs, nil
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
