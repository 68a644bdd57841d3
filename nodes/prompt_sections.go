package nodes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
)

// Section priorities for packing: the lowest goes first when a prompt is over
// budget. Required sections (the task, the instructions) are never dropped.
const (
	prioHistory   = prompts.PrioHistory
	prioOverview  = prompts.PrioOverview
	prioKnowledge = prompts.PrioKnowledge
	prioContext   = prompts.PrioContext
)

// LabelShared is the budget label of the shared prefix
// (limits.token_budgets.shared).
const LabelShared = "shared"

// sharedPrefix is the start every local role's prompt shares byte for byte:
// the shared system text, the project context and the knowledge selected for
// the current milestone, packed once to the shared budget. The same model
// answers the ScopeAgent, the planner, the implementor, QA and the Assessor,
// so the server's prompt cache serves this part across role switches; it
// changes only when the ScopeAgent plans again or the knowledge for the
// milestone changes.
func (d *Deps) sharedPrefix(ctx context.Context, s *runstate.State) (llm.Shared, error) {
	return d.Composer.Shared(d.Settings.Budget(LabelShared), projectContextSection(s), d.knowledgeSection(ctx, s))
}

func projectContextSection(s *runstate.State) llm.Section {
	body := "Remit: " + s.Remit
	if s.ProjectContext != "" {
		body += "\n\n" + s.ProjectContext
	}
	return llm.Section{Title: prompts.SecProjectContext, Body: body, Priority: prompts.PrioOverview}
}

// knowledgeSection selects the docs for the current milestone within the
// knowledge budget, records provisional docs the task will be judged on, and
// logs what was left out.
func (d *Deps) knowledgeSection(ctx context.Context, s *runstate.State) llm.Section {
	sec := llm.Section{Title: prompts.SecProjectKnowledge, Priority: prompts.PrioKnowledge}
	if d.Settings.KnowledgeBudget <= 0 {
		sec.Body = "(knowledge injection is off: knowledge.budget_tokens is 0)"
		return sec
	}
	store, problems, err := openKnowledge(d.Work, d.Settings.KnowledgeDir)
	if err != nil {
		events.Emit(ctx, events.Warning{Message: "knowledge store unreadable: " + err.Error()})
		sec.Body = "(no project knowledge available)"
		return sec
	}
	if len(problems) > 0 && d.noted.once("knowledge_problems", problems[0].String()) {
		events.Emit(ctx, events.KnowledgeProblems{Count: len(problems), First: problems[0].String()})
	}
	req := knowledge.SelectRequest{Budget: d.Settings.KnowledgeBudget}
	if m := s.ActiveMilestone(); m != nil {
		req.Themes = append(slices.Clone(m.Themes), strings.Fields(m.Goal)...)
		req.Milestone = m.ID
	}
	sel := store.Select(req)
	s.LastKnowledge = sel.Provisional
	if len(sel.Omitted) > 0 && d.noted.once("knowledge_omitted", fmt.Sprint(sel.Omitted)) {
		events.Emit(ctx, events.KnowledgeOmitted{Omitted: omissions(sel.Omitted)})
	}
	if strings.TrimSpace(sel.Text) == "" {
		sec.Body = "(no project knowledge yet)"
		return sec
	}
	sec.Body = sel.Text
	return sec
}

func milestoneSection(s *runstate.State) llm.Section {
	var b strings.Builder
	if m := s.ActiveMilestone(); m != nil {
		fmt.Fprintf(&b, "Milestone %s (%d of %d): %s\n", m.ID, s.CurrentMilestone+1, len(s.Milestones), m.Goal)
		if len(m.Themes) > 0 {
			fmt.Fprintf(&b, "Themes: %s\n", strings.Join(m.Themes, ", "))
		}
	}
	if t := s.CurrentTask; t != nil {
		fmt.Fprintf(&b, "\nTask in progress: %s — %s (attempt %d)\n", t.ID, t.Title, t.Attempt)
		writeTask(&b, t.Instructions, t.AcceptanceCriteria, t.TargetFiles)
	}
	if len(s.CarryForward) == 0 {
		b.WriteString("\nPlanned next tasks: none.\n")
	} else {
		b.WriteString("\nPlanned next tasks (carry-forward):\n")
		for i, t := range s.CarryForward {
			tag := ""
			if t.DirectiveID != "" {
				tag = " [directive " + t.DirectiveID + "]"
			}
			fmt.Fprintf(&b, "%d. %s%s\n", i+1, t.Title, tag)
		}
	}
	return llm.Section{Title: prompts.SecMilestone, Body: strings.TrimSpace(b.String()), Required: true}
}

// writeTask and directiveLine write a task and a directive as every prompt
// does (package prompts).
var (
	writeTask     = prompts.WriteTask
	directiveLine = prompts.DirectiveLine
)

func directivesSection(shown []runstate.Directive) llm.Section {
	if len(shown) == 0 {
		return llm.Section{Title: prompts.SecDirectives, Body: "(none)", Required: true}
	}
	var b strings.Builder
	for _, d := range shown {
		b.WriteString("- " + directiveLine(d) + "\n")
	}
	return llm.Section{Title: prompts.SecDirectives, Body: strings.TrimSpace(b.String()), Required: true}
}

// completedSection lists finished work, newest first, so packing cuts the
// oldest history first.
func completedSection(s *runstate.State) llm.Section {
	var b strings.Builder
	if len(s.DoneList) == 0 && len(s.Failures) == 0 {
		b.WriteString("(nothing yet)")
	}
	for i := len(s.DoneList) - 1; i >= 0; i-- {
		e := s.DoneList[i]
		fmt.Fprintf(&b, "- %s [%s, %s] %s: %s", e.TaskID, e.Milestone, e.QA, e.Title, e.Summary)
		if len(e.Files) > 0 {
			fmt.Fprintf(&b, " (files: %s)", strings.Join(e.Files, ", "))
		}
		b.WriteByte('\n')
	}
	for i := len(s.Failures) - 1; i >= 0; i-- {
		f := s.Failures[i]
		fmt.Fprintf(&b, "- FAILED %s %s: %s\n", f.TaskID, f.Title, f.Reason)
	}
	if s.EscalationContext != "" {
		fmt.Fprintf(&b, "\nEscalations:\n%s\n", s.EscalationContext)
	}
	return llm.Section{Title: prompts.SecCompleted, Body: strings.TrimSpace(b.String()), Priority: prompts.PrioHistory}
}

// instructionsSection renders the role template's "instructions" block.
func instructionsSection(composer *llm.Composer, label string, data any) (llm.Section, error) {
	body, err := composer.Render(label, "instructions", data)
	if err != nil {
		return llm.Section{}, err
	}
	return llm.Section{Title: prompts.SecInstructions, Body: strings.TrimSpace(body), Required: true}, nil
}

// omissions are the knowledge left out of a prompt as its event says them.
func omissions(in []knowledge.Omission) []events.Omission {
	if in == nil {
		return nil
	}
	out := make([]events.Omission, len(in))
	for i, o := range in {
		out[i] = events.Omission{Path: o.Path, Reason: o.Reason}
	}
	return out
}
