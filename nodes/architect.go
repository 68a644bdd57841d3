package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
)

// architectReply is the cloud architect's answer: edit instructions precise
// enough for the local model to apply (Aider's architect/editor split).
type architectReply struct {
	Diagnosis    string   `json:"diagnosis" jsonschema:"maxLength=600"`
	Instructions string   `json:"instructions" jsonschema:"minLength=1,maxLength=4000"`
	TargetFiles  []string `json:"target_files" jsonschema:"maxItems=4,items.maxLength=200"`
}

// architectCodeChars caps the code of the target files sent to the architect.
const architectCodeChars = 20000

// architectRound asks the cloud architect for the next attempt's instructions
// once a task has failed escalation.architect_after times. It answers false
// when the architect is not due (or its call failed): the local planner then
// re-plans as usual.
func (d *Deps) architectRound(ctx context.Context, s runstate.State) (runstate.State, bool, error) {
	t := s.CurrentTask
	n := d.Settings.ArchitectAfter
	if t == nil || n <= 0 || t.Architect || t.Retries < n || !cloudAvailable(d.Settings.Supervisors, d.Supervisors, &s) {
		return s, false, nil
	}
	t.Architect = true
	var task strings.Builder
	fmt.Fprintf(&task, "%s: %s\n%s\n", t.ID, t.Title, t.Instructions)
	if len(t.TargetFiles) > 0 {
		fmt.Fprintf(&task, "Files: %s\n", strings.Join(t.TargetFiles, ", "))
	}
	task.WriteString("Acceptance criteria:\n")
	for i, c := range t.AcceptanceCriteria {
		fmt.Fprintf(&task, "%d. %s\n", i+1, c)
	}
	sections := []llm.Section{
		{Title: prompts.SecTask, Body: strings.TrimSpace(task.String()), Required: true},
		{Title: prompts.SecFailed, Body: fmt.Sprintf("%d attempts failed. The last failure:\n%s", t.Retries, textutil.ClipTrimmed(t.Feedback, 6000)), Required: true},
	}
	if diff, err := d.Work.Diff(ctx, t.StartCommit); err == nil && strings.TrimSpace(diff) != "" {
		sections = append(sections, llm.Section{Title: prompts.SecLastDiff, Body: filterDiff(diff, d.Settings.denied), Priority: prompts.PrioContext})
	}
	if code := checksOf(d).architectCode(t); code != "" {
		sections = append(sections, llm.Section{Title: prompts.SecCode, Body: code, Priority: prompts.PrioContext + 1})
	}
	reply, resp, err := ask[architectReply](ctx, d, &s, call{Label: prompts.Architect, Role: supervisors.Role,
		Sections: sections, Budget: d.Settings.Budget(runstate.NodeImplementor)})
	esc := escalation(runstate.EscArchitect, t, resp, d.now())
	esc.Attempt = t.Attempt + 1 // the attempt the instructions are for
	if err != nil {
		if ctx.Err() != nil {
			return s, false, ctx.Err()
		}
		esc.Outcome, esc.Note = runstate.EscCallFailed, textutil.ClipTrimmed(err.Error(), 300)
		s.Escalations = append(s.Escalations, esc)
		events.Emit(ctx, events.Warning{Message: "architect unavailable, the local planner re-plans: " + err.Error()})
		return s, false, nil
	}
	esc.Outcome, esc.Note = runstate.EscPending, textutil.ClipTrimmed(reply.Diagnosis, 300)
	s.Escalations = append(s.Escalations, esc)
	t.Instructions = strings.TrimSpace(reply.Instructions)
	if files := (&targetIndex{work: d.Work}).resolve(ctx, t.Title, reply.TargetFiles); len(files) > 0 {
		t.TargetFiles = files
	}
	events.Emit(ctx, events.Escalation{EscKind: runstate.EscArchitect, Task: t.ID, Attempt: esc.Attempt, CostUSD: esc.CostUSD})
	s.PlannerDecision = DecisionImplement
	return tasksOf(d).prepareAttempt(s), true, nil
}

// architectCode is the current content of the task's files (those that may
// leave the machine), with line numbers.
func (d checks) architectCode(t *runstate.Task) string {
	var b strings.Builder
	for _, p := range t.TargetFiles {
		if d.Settings.denied(p) {
			continue
		}
		src, err := d.readWorkFile(p)
		if err != nil {
			fmt.Fprintf(&b, "### %s\n(does not exist yet)\n", p)
			continue
		}
		fmt.Fprintf(&b, "### %s\n", p)
		for i, l := range strings.Split(strings.TrimRight(src, "\n"), "\n") {
			fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
		}
		if b.Len() > architectCodeChars {
			return textutil.ClipTrimmed(b.String(), architectCodeChars) + "\n(cut)"
		}
	}
	return strings.TrimSpace(b.String())
}
