package runview

import (
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// BoardMD is board.md: a kanban of the milestones and their tasks, and the
// directives pending (docs/architecture.md "The run on disk"), rewritten
// after every node while the run goes.
func (v View) BoardMD() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Board — run %s\n\n", v.RunID)
	fmt.Fprintf(&b, "Remit: %s  \nPhase: %s · %d done, %d failed\n", v.Remit, v.Phase, v.Tasks.Completed, v.Tasks.Failed)
	if v.Ended {
		fmt.Fprintf(&b, "Status: %s — %s\n", v.Standing.Status, v.Standing.Reason)
	} else if v.StopReason != "" {
		fmt.Fprintf(&b, "Stopping: %s\n", v.StopReason)
	}
	for _, m := range v.Board {
		fmt.Fprintf(&b, "\n## %s [%s] %s\n", m.ID, m.Status, m.Goal)
		b.WriteString("\n### Done\n")
		for _, e := range m.Done {
			fmt.Fprintf(&b, "- [x] %s %s (%s, %s)\n", e.TaskID, e.Title, e.QA, short(e.Commit))
		}
		for _, f := range m.Failed {
			fmt.Fprintf(&b, "- [ ] ~~%s %s~~ failed: %s\n", f.TaskID, f.Title, textutil.ClipTrimmed(textutil.FirstLine(f.Reason), 160))
		}
		if len(m.Done)+len(m.Failed) == 0 {
			b.WriteString("- (none)\n")
		}
		if !m.Current {
			continue
		}
		b.WriteString("\n### In progress\n")
		if t := v.Current; t != nil {
			fmt.Fprintf(&b, "- [ ] %s %s (attempt %d", t.ID, t.Title, t.Attempt)
			if t.Feedback != "" {
				fmt.Fprintf(&b, "; last feedback: %s", textutil.ClipTrimmed(textutil.FirstLine(t.Feedback), 160))
			}
			b.WriteString(")\n")
		} else {
			b.WriteString("- (none)\n")
		}
		b.WriteString("\n### To do\n")
		if len(m.Planned) == 0 {
			b.WriteString("- (none planned)\n")
		}
		for _, t := range m.Planned {
			fmt.Fprintf(&b, "- [ ] %s\n", t.Title)
		}
	}
	b.WriteString(v.Steering())
	if v.PendingDirectives > 0 {
		b.WriteString("\n## Directives pending\n")
		for _, d := range v.Open {
			fmt.Fprintf(&b, "- %s [%s %s] %s (from %s)\n", d.ID, d.Priority, d.Type, d.Description, d.Source)
		}
	}
	return b.String()
}

// short is a commit's abbreviation as the board and the report write it.
func short(sha string) string { return sha[:min(len(sha), 10)] }
