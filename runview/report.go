package runview

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Facts is what report.md says beside the view: what the run's process
// knows of the world around the state.
type Facts struct {
	// Commits are the run branch's commits since its base, oldest first
	// (nil: the section is left out).
	Commits []workspace.Commit
	// Sandbox says how model-written code was confined.
	Sandbox string
	// KnowledgeDir is where the knowledge documents live (knowledge.dir).
	KnowledgeDir string
	// Events is the run's event log: the failed attempts and the time per
	// node come from it ("" or missing: those sections are left out).
	Events string
	// Mermaid is the compiled graph ("" leaves the graph out).
	Mermaid string
	// Finished is when the report was written.
	Finished time.Time
	// Step is the run's last checkpoint, said beside its status when an undo
	// or a fork set it (0: not said).
	Step int
}

// ReportMD is report.md: what was done, the commits, the failures and why,
// directives, supervisor runs, escalations, knowledge written, tokens and
// cost, time per node, the graph.
func (v View) ReportMD(f Facts) string {
	var b strings.Builder
	st := v.Standing
	fmt.Fprintf(&b, "# lemmings report — run %s\n\n", v.RunID)
	fmt.Fprintf(&b, "- **Remit:** %s\n- **Status:** %s", v.Remit, st.Status)
	if f.Step > 0 {
		fmt.Fprintf(&b, " (step %d)", f.Step)
	}
	if st.Status == runstate.RunDone {
		fmt.Fprintf(&b, "\n- **Evidence:** %s", orNoneRecorded(st.Reason))
	} else {
		fmt.Fprintf(&b, "\n- **Reason:** %s", orNoneRecorded(st.Reason))
	}
	if st.Next != "" {
		fmt.Fprintf(&b, "\n- **How to go on:** %s", st.Next)
	}
	fmt.Fprintf(&b, "\n- **Branch:** `%s` (from `%s`)\n", v.Branch, short(v.BaseCommit))
	fmt.Fprintf(&b, "- **Sandbox:** %s\n", f.Sandbox)
	if !v.StartedAt.IsZero() {
		// One line, so that comparisons of two runs' reports drop it whole.
		finished := f.Finished.UTC()
		fmt.Fprintf(&b, "- **Started:** %s · **Finished:** %s · **Took:** %s\n", v.StartedAt.UTC().Format(time.RFC3339),
			finished.Format(time.RFC3339), finished.Sub(v.StartedAt).Round(time.Second))
	}
	fmt.Fprintf(&b, "- **Tasks:** %d completed, %d failed\n\n", v.Tasks.Completed, v.Tasks.Failed)

	b.WriteString("## Milestones\n\n")
	for _, m := range v.Board {
		fmt.Fprintf(&b, "- %s [%s] %s\n", m.ID, m.Status, m.Goal)
	}
	v.writeTasks(&b, f)
	if f.Commits != nil {
		b.WriteString("\n## Commits\n\n")
		for _, c := range f.Commits {
			fmt.Fprintf(&b, "- `%s` %s\n", short(c.SHA), c.Subject)
		}
	}
	v.writeDirectives(&b)
	b.WriteString(v.Steering())
	v.writeSupervisors(&b)
	b.WriteString(v.escalations())
	b.WriteString("\n## Knowledge written\n\n")
	if len(v.Knowledge) == 0 {
		b.WriteString("None.\n")
	}
	for _, p := range v.Knowledge {
		fmt.Fprintf(&b, "- `%s/%s`\n", f.KnowledgeDir, p)
	}

	b.WriteString("\n## Tokens and cost\n\n| who | calls | prompt tokens | completion tokens | cost | model time |\n|---|---|---|---|---|---|\n")
	for _, u := range v.Usage {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | $%.4f | %s |\n", u.Role, u.Calls, u.PromptTokens, u.CompletionTokens, u.CostUSD, u.Elapsed.Round(time.Millisecond))
	}
	t := v.Total
	fmt.Fprintf(&b, "| **total** | %d | %d | %d | $%.4f | %s |\n", t.Calls, t.PromptTokens, t.CompletionTokens, t.CostUSD, t.Elapsed.Round(time.Millisecond))

	if times := nodeTimes(f.Events); len(times) > 0 {
		b.WriteString("\n## Time per node\n\n| node | runs | total |\n|---|---|---|\n")
		for _, name := range slices.Sorted(maps.Keys(times)) {
			t := times[name]
			fmt.Fprintf(&b, "| %s | %d | %s |\n", name, t.runs, t.total.Round(time.Millisecond))
		}
	}
	if f.Mermaid != "" {
		fmt.Fprintf(&b, "\n## Graph\n\n```mermaid\n%s\n```\n", strings.TrimSpace(f.Mermaid))
	}
	return b.String()
}

func (v View) writeTasks(b *strings.Builder, f Facts) {
	b.WriteString("\n## Tasks done\n\n| task | milestone | title | QA | attempts | commit |\n|---|---|---|---|---|---|\n")
	for _, e := range v.Done {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s |\n", e.TaskID, e.Milestone, cell(e.Title), e.QA, e.Attempts, short(e.Commit))
	}
	for _, e := range v.Done {
		if e.Summary != "" {
			fmt.Fprintf(b, "\n- **%s:** %s", e.TaskID, cell(e.Summary))
		}
	}
	b.WriteString("\n")

	if len(v.Overruled) > 0 {
		b.WriteString("\n## Claims overruled\n\n")
		for _, o := range v.Overruled {
			fmt.Fprintf(b, "- %s\n", cell(o))
		}
	}

	b.WriteString("\n## Failures\n\n")
	if len(v.Failures) == 0 {
		b.WriteString("None.\n")
	}
	for _, fl := range v.Failures {
		fmt.Fprintf(b, "- **%s %s** (%d attempts): %s\n", fl.TaskID, fl.Title, fl.Attempts, indentReason(fl.Reason))
		if fl.Attempted != "" {
			fmt.Fprintf(b, "  The last attempt's code, rolled back from the branch: `git show %s`\n", short(fl.Attempted))
		}
	}
	if attempts := FailedAttempts(f.Events); len(attempts) > 0 {
		b.WriteString("\n## Failed attempts\n\n")
		for _, a := range attempts {
			fmt.Fprintf(b, "- **%s attempt %d:** %s\n", a.TaskID, a.Attempt, cell(a.Reason))
		}
	}
}

func (v View) writeDirectives(b *strings.Builder) {
	b.WriteString("\n## Directives\n\n")
	if len(v.Directives) == 0 {
		b.WriteString("None.\n")
		return
	}
	b.WriteString("| directive | source | fate | task | description | note |\n|---|---|---|---|---|---|\n")
	for _, r := range v.Directives {
		fate := r.Fate
		if fate == PendingFate {
			fate = "pending at end"
		}
		note := r.Note
		if r.Trail != "" {
			note = strings.TrimSuffix(r.Trail+"; "+note, "; ")
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", r.ID, r.Source, fate, r.TaskID, cell(r.Description), cell(note))
	}
}

func (v View) writeSupervisors(b *strings.Builder) {
	b.WriteString("\n## Supervisor runs\n\n")
	if len(v.Supervisors) == 0 {
		b.WriteString("None.\n")
		return
	}
	b.WriteString("| supervisor | trigger | after task | status | tokens in/out | cost | directives | docs | summary |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range v.Supervisors {
		summary := r.Summary
		if strings.TrimSpace(summary) == "" {
			summary = r.Warning
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %d/%d | $%.4f | %s | %s | %s |\n", r.Supervisor, r.Trigger, r.AtTask, r.Status,
			r.PromptTokens, r.CompletionTokens, r.CostUSD, strings.Join(r.Directives, " "), strings.Join(r.Docs, " "), cell(summary))
	}
}

// escalations is the report's account of cloud help.
func (v View) escalations() string {
	planner := v.PlannerCostUSD
	if len(v.Escalations) == 0 && planner == 0 {
		return ""
	}
	var b strings.Builder
	if len(v.Escalations) == 0 {
		fmt.Fprintf(&b, "\n## Escalations\n\nNone; the cloud planner cost $%.4f (counted against supervisors.budget_usd).\n", planner)
		return b.String()
	}
	calls, helped, architects := 0, 0, 0
	cost := 0.0
	for _, e := range v.Escalations {
		if e.Kind != runstate.EscReviewDisputed {
			calls++
		}
		cost += e.CostUSD
		if e.Kind == runstate.EscArchitect {
			architects++
			if e.Outcome == runstate.EscHelped {
				helped++
			}
		}
	}
	fmt.Fprintf(&b, "\n## Escalations\n\n%d cloud calls, $%.4f (counted against supervisors.budget_usd); the architect helped %d of %d tasks.", calls, cost, helped, architects)
	if planner > 0 {
		fmt.Fprintf(&b, " The cloud planner cost $%.4f more.", planner)
	}
	b.WriteString("\n\n")
	b.WriteString("| task | kind | attempt | tokens in/out | cost | outcome | note |\n|---|---|---|---|---|---|---|\n")
	for _, e := range v.Escalations {
		fmt.Fprintf(&b, "| %s | %s | %d | %d/%d | $%.4f | %s | %s |\n", e.TaskID, e.Kind, e.Attempt, e.PromptTokens, e.CompletionTokens, e.CostUSD, e.Outcome, cell(textutil.ClipTrimmed(e.Note, 200)))
	}
	return b.String()
}

// cell makes text one cell of a Markdown table.
func cell(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

// indentReason keeps a multi-line reason's first line (the gate and its exit
// code, say) on the task's own line, so a reader skimming the list sees why,
// and sets the rest (the gate's output) in a code block under it.
func indentReason(r string) string {
	r = strings.TrimSpace(r)
	head, rest, multi := strings.Cut(r, "\n")
	if rest = strings.TrimSpace(rest); !multi || rest == "" {
		return head
	}
	return strings.TrimSpace(head) + "\n\n  ```\n  " + strings.ReplaceAll(textutil.ClipTrimmed(rest, 1500), "\n", "\n  ") + "\n  ```"
}

func orNoneRecorded(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none recorded)"
	}
	return s
}

// Steering is what the user did to the run from outside it: the messages
// told (with the directive each became and its fate) and the tasks taken
// back ("" when neither).
func (v View) Steering() string {
	if len(v.Tells)+len(v.Undone) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Steering\n")
	if len(v.Tells) > 0 {
		b.WriteString("\nTold by the user (lemmings tell):\n\n")
		fates := map[string]string{}
		for _, d := range v.Directives {
			fates[d.ID] = strings.TrimSpace(strings.ReplaceAll(d.Fate, PendingFate, "pending") + " " + d.TaskID)
		}
		for _, m := range v.Tells {
			fmt.Fprintf(&b, "- %s (%s, taken in %s) → %s: %s\n", m.Directive, m.Priority, m.Delivered.UTC().Format(time.RFC3339),
				cmpOr(fates[m.Directive], "pending"), cell(m.Message))
		}
	}
	if len(v.Undone) > 0 {
		b.WriteString("\nTaken back by the user:\n\n")
		for _, u := range v.Undone {
			how := "back in the plan"
			switch {
			case u.Revert != "":
				how = fmt.Sprintf("`%s` reverted by `%s`", short(u.Commit), short(u.Revert))
			case u.Reset:
				how = "rolled back to its start"
			}
			fmt.Fprintf(&b, "- %s %s (lemmings %s): %s; why: %s\n", u.TaskID, cell(u.Title), u.By, how, cell(u.Reason))
		}
	}
	return b.String()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
