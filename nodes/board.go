package nodes

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
)

// writeBoard keeps board.md, a kanban of milestones and tasks (docs/architecture.md
// "The run on disk"), in
// step with the state after every node.
// Only a changed board is written: most steps leave it as it was.
func (d *Deps) writeBoard(s *WorkflowState) error {
	if d.RunDir == "" {
		return nil
	}
	board := renderBoard(s)
	if board == d.lastBoard {
		return nil
	}
	if err := WriteFileAtomic(filepath.Join(d.RunDir, "board.md"), []byte(llm.Redact(board))); err != nil {
		return err
	}
	d.lastBoard = board
	return nil
}

func renderBoard(s *WorkflowState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Board — run %s\n\n", s.RunID)
	fmt.Fprintf(&b, "Remit: %s  \nPhase: %s · %d done, %d failed\n", s.Remit, s.Phase, s.TasksCompleted, s.TasksFailed)
	ended := Standing{Status: RunRunning}
	if s.Phase == PhaseDone { // the Report node settled the run
		ended = StandingOf(Stored{Status: graph.StatusDone}, s)
		fmt.Fprintf(&b, "Status: %s — %s\n", ended.Status, ended.Reason)
	} else if s.StopReason != "" {
		fmt.Fprintf(&b, "Stopping: %s\n", s.StopReason)
	}
	for i, m := range s.Milestones {
		fmt.Fprintf(&b, "\n## %s [%s] %s\n", m.ID, MilestoneShown(m.Status, ended), m.Goal)
		b.WriteString("\n### Done\n")
		n := 0
		for _, e := range s.DoneList {
			if e.Milestone == m.ID {
				fmt.Fprintf(&b, "- [x] %s %s (%s, %s)\n", e.TaskID, e.Title, e.QA, short(e.Commit))
				n++
			}
		}
		for _, f := range s.Failures {
			if f.Milestone == m.ID {
				fmt.Fprintf(&b, "- [ ] ~~%s %s~~ failed: %s\n", f.TaskID, f.Title, clip(firstLine(f.Reason), 160))
				n++
			}
		}
		if n == 0 {
			b.WriteString("- (none)\n")
		}
		if i != s.CurrentMilestone {
			continue
		}
		b.WriteString("\n### In progress\n")
		if t := s.CurrentTask; t != nil {
			fmt.Fprintf(&b, "- [ ] %s %s (attempt %d", t.ID, t.Title, t.Attempt)
			if t.Feedback != "" {
				fmt.Fprintf(&b, "; last feedback: %s", clip(firstLine(t.Feedback), 160))
			}
			b.WriteString(")\n")
		} else {
			b.WriteString("- (none)\n")
		}
		b.WriteString("\n### To do\n")
		if len(s.CarryForward) == 0 {
			b.WriteString("- (none planned)\n")
		}
		for _, t := range s.CarryForward {
			fmt.Fprintf(&b, "- [ ] %s\n", t.Title)
		}
	}
	if len(s.PendingDirectives) > 0 {
		b.WriteString("\n## Directives pending\n")
		for _, d := range orderedDirectives(s.PendingDirectives, false) {
			fmt.Fprintf(&b, "- %s [%s %s] %s (from %s)\n", d.ID, d.Priority, d.Type, d.Description, d.Source)
		}
	}
	return b.String()
}

func firstLine(s string) string { return textutil.FirstLine(s) }
