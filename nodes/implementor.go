package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Implementation statuses.
const (
	ImplFinished  = "finished"
	ImplBlocked   = "blocked"
	ImplQuestion  = "question"
	ImplExhausted = "exhausted"
	ImplLoop      = "loop"
	ImplError     = "error"
	ImplRejected  = "rejected"
)

// Loop detection: the same action with the same result this many times within
// the recent window stops the attempt.
const (
	loopWindow    = 8
	loopThreshold = 3
	// maxBadReplies in a row end the attempt: the model is not following the format.
	maxBadReplies = 3
	// keepResults is how many recent tool results stay in full in the
	// conversation; older ones are elided so the prompt stays within budget.
	keepResults = 6
)

type implData struct{}

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
	loop := &implLoop{d: d, s: &s, t: t, detector: workspace.NewActionLoop(loopWindow, loopThreshold)}
	res, err := loop.run(ctx)
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
	graph.Emit(ctx, "implementation", map[string]any{"task": t.ID, "attempt": t.Attempt, "status": res.Status, "actions": res.Actions, "files": res.Files})
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
	history  []llm.Message
	touched  []string
}

func (l *implLoop) run(ctx context.Context) (*ImplResult, error) {
	d := l.d
	sections, err := l.sections(ctx)
	if err != nil {
		return nil, err
	}
	bad := 0
	for n := 1; n <= d.Settings.MaxActions; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		history, used := l.compactHistory(d.Settings.budget(NodeImplementor) / 2)
		act, resp, err := ask[implAction](ctx, d, l.s, call{Label: NodeImplementor, Data: implData{}, Sections: sections,
			Messages: history, Budget: d.Settings.budget(NodeImplementor) - used})
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
			if errors.As(err, &se) {
				if edits, perr := workspace.ParseEditBlocks(se.Raw); perr == nil && len(edits) > 0 {
					act = implAction{Action: "edit_blocks", Blocks: se.Raw, Thought: "(edit blocks in prose)"}
					err = nil
				}
			}
			if err != nil {
				bad++
				if bad >= maxBadReplies {
					return &ImplResult{Status: ImplError, Actions: n, Summary: "the model's replies were not valid actions: " + err.Error()}, nil
				}
				l.note(resp.Content, "Your reply was not a valid action ("+err.Error()+"). Answer with one JSON action.")
				continue
			}
		}
		bad = 0
		switch act.Action {
		case "finish":
			return &ImplResult{Status: ImplFinished, Actions: n, Summary: firstNonEmpty(act.Summary, act.Thought)}, nil
		case "blocked":
			return &ImplResult{Status: ImplBlocked, Actions: n, Summary: firstNonEmpty(act.Summary, act.Thought)}, nil
		case "ask":
			return &ImplResult{Status: ImplQuestion, Actions: n, Summary: "the implementor asked a question", Question: firstNonEmpty(act.Question, act.Summary)}, nil
		}
		result := l.execute(ctx, act)
		args, _ := json.Marshal(act)
		if repeated, count := l.detector.Record(act.Action, string(args), result); repeated {
			return &ImplResult{Status: ImplLoop, Actions: n, Summary: fmt.Sprintf("repeated the same %s action %d times with the same result", act.Action, count)}, nil
		}
		l.note(string(args), "RESULT of "+act.Action+":\n"+result)
	}
	return &ImplResult{Status: ImplExhausted, Actions: d.Settings.MaxActions, Summary: fmt.Sprintf("used all %d actions without finishing", d.Settings.MaxActions)}, nil
}

// note appends one exchange to the conversation.
func (l *implLoop) note(assistant, user string) {
	l.history = append(l.history,
		llm.Message{Role: "assistant", Content: assistant},
		llm.Message{Role: "user", Content: user})
}

// compactHistory keeps the latest tool results in full and elides older ones,
// then drops the oldest exchanges while the history exceeds budget tokens: the
// model still sees what it did last, and the prompt does not grow without
// end. It returns the history and its size.
func (l *implLoop) compactHistory(budget int) ([]llm.Message, int) {
	out := slices.Clone(l.history)
	cut := len(out) - 2*keepResults
	for i := 0; i < cut; i++ {
		if out[i].Role == "user" && len(out[i].Content) > 200 {
			first, _, _ := strings.Cut(out[i].Content, "\n")
			out[i].Content = first + "\n(output elided; repeat the action if you need it again)"
		}
	}
	size := func(ms []llm.Message) int {
		n := 0
		for _, m := range ms {
			n += llm.CountTokens(m.Content)
		}
		return n
	}
	dropped := 0
	for len(out) > 2 && size(out) > budget {
		out = out[2:]
		dropped++
	}
	if dropped > 0 {
		note := llm.Message{Role: "user", Content: fmt.Sprintf("(%d earlier actions are no longer shown; their changes are in the files)", dropped)}
		out = append([]llm.Message{note}, out...)
	}
	return out, size(out)
}

func (l *implLoop) sections(ctx context.Context) ([]llm.Section, error) {
	d, t, s := l.d, l.t, l.s
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", t.ID, t.Title)
	writeTask(&b, t.Instructions, t.AcceptanceCriteria, t.TargetFiles)
	secs := []llm.Section{
		d.knowledgeSection(ctx, s),
		{Title: "TASK", Body: strings.TrimSpace(b.String()), Required: true},
	}
	if t.Feedback != "" {
		secs = append(secs, llm.Section{Title: "FEEDBACK FROM THE LAST ATTEMPT", Body: t.Feedback, Required: true})
	}
	if files := l.targetFiles(); files != "" {
		secs = append(secs, llm.Section{Title: "TARGET FILES", Body: files, Priority: prioContext})
	}
	if tree, err := d.Work.FS().Tree(".", 200); err == nil {
		secs = append(secs, llm.Section{Title: "REPOSITORY", Body: tree, Priority: prioOverview})
	}
	secs = append(secs, llm.Section{Title: "GATES", Body: gateList(d.Gates), Priority: prioOverview})
	instr, err := d.instructionsSection(NodeImplementor, implData{})
	if err != nil {
		return nil, err
	}
	return append(secs, instr), nil
}

// targetFiles shows the task's files up front so a weak model need not ask.
func (l *implLoop) targetFiles() string {
	var b strings.Builder
	for _, p := range l.t.TargetFiles {
		data, err := l.d.Work.FS().ReadFile(p)
		if err != nil {
			fmt.Fprintf(&b, "%s: (does not exist yet)\n", p)
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s\n", p, numbered(string(data), 400))
	}
	return strings.TrimSpace(b.String())
}

func gateList(gates []workspace.Gate) string {
	if len(gates) == 0 {
		return "(no gates configured or detected)"
	}
	var b strings.Builder
	for _, g := range gates {
		fmt.Fprintf(&b, "- %s: %s\n", g.Name, g.Command)
	}
	return strings.TrimSpace(b.String())
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// numbered renders text with line numbers, cut at maxLines.
func numbered(text string, maxLines int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var b strings.Builder
	for i, line := range lines {
		if i == maxLines {
			fmt.Fprintf(&b, "… (%d more lines)\n", len(lines)-maxLines)
			break
		}
		fmt.Fprintf(&b, "%4d| %s\n", i+1, line)
	}
	return b.String()
}
