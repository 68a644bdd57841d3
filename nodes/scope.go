package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
)

type scopeData struct {
	Remit    string
	Feedback string
	// Task limits (tasks.*).
	MaxFiles int
	MaxChars int
}

// overviewFiles are read into the project context when present.
var overviewFiles = []string{"README.md", "README", "go.mod", "package.json", "pyproject.toml", "Cargo.toml", "Makefile"}

// ScopeAgent cuts the remit into milestones (or takes the operator's plan).
// Sent back by the Assessor, it re-plans what remains and keeps what is done.
func (d *Deps) ScopeAgent(ctx context.Context, in WorkflowState) (WorkflowState, error) {
	s := in.Clone()
	replan := len(s.Milestones) > 0
	if s.ProjectContext == "" || replan {
		s.ProjectContext = d.overview()
	}
	var specs []milestoneSpec
	if s.Plan != nil && !replan {
		s.Milestones = planMilestones(s.Plan)
	} else {
		data := scopeData{Remit: s.Remit, MaxFiles: d.Settings.Tasks.MaxTargetFiles, MaxChars: d.Settings.Tasks.MaxInstructionChars}
		if replan {
			data.Feedback = firstNonEmpty(assessNotes(s.Assessment), s.EscalationContext, "the Assessor found a major divergence")
		}
		sections := []llm.Section{projectContextSection(&s), d.knowledgeSection(ctx, &s)}
		if replan {
			sections = append(sections, completedSection(&s))
		}
		c := call{Label: NodeScope, Role: d.plannerRole(&s), Data: data, Sections: sections}
		reply, _, err := ask[scopeReply](ctx, d, &s, c)
		if err != nil {
			if !modelFault(err) {
				return s, err
			}
			if !replan {
				s.StopReason = "the ScopeAgent could not produce a plan: " + err.Error()
				s.Milestones = nil
				return s, nil
			}
			graph.Emit(ctx, "warning", map[string]any{"message": "re-plan unusable, keeping the current milestones: " + err.Error()})
			s.ScopeRounds++
			return s, nil
		}
		specs = d.enforceScopeLimits(ctx, &s, c, reply).Milestones
	}
	if replan {
		s.ScopeRounds++
		addTrigger(&s, TriggerScopeReplan)
		s.Milestones = append(doneMilestones(s.Milestones), d.toMilestones(len(s.Milestones), specs)...)
		s.CurrentMilestone = len(doneMilestones(s.Milestones))
		s.CarryForward = keepDirectiveTasks(s.CarryForward)
	} else if s.Plan == nil {
		s.Milestones = d.toMilestones(0, specs)
	}
	if len(s.Milestones) == 0 || s.CurrentMilestone >= len(s.Milestones) {
		s.StopReason = firstNonEmpty(s.StopReason, "the plan has no milestone left to work on")
		return s, nil
	}
	cur := &s.Milestones[s.CurrentMilestone]
	cur.Status = MilestoneActive
	s.CarryForward = append(s.CarryForward, cur.Tasks...)
	graph.Emit(ctx, "milestones", map[string]any{"count": len(s.Milestones), "replan": replan})
	if s.Approve == "milestones" {
		return s, graph.Interrupt(fmt.Sprintf("approve %d milestones (lemmings resume --approve, or --reject \"why\")", len(s.Milestones)))
	}
	return s, nil
}

func assessNotes(a *Assessment) string {
	if a == nil {
		return ""
	}
	return a.Notes
}

func doneMilestones(ms []Milestone) []Milestone {
	var out []Milestone
	for _, m := range ms {
		if m.Status == MilestoneDone {
			out = append(out, m)
		}
	}
	return out
}

// toMilestones numbers new milestones after the ones that exist.
func (d *Deps) toMilestones(existing int, specs []milestoneSpec) []Milestone {
	var out []Milestone
	for i, sp := range specs {
		m := Milestone{ID: fmt.Sprintf("m%d", existing+i+1), Goal: sp.Goal, Themes: sp.Themes, Status: MilestonePending}
		for _, t := range sp.Tasks {
			if strings.TrimSpace(t.Title) != "" {
				m.Tasks = append(m.Tasks, t.planned())
			}
		}
		out = append(out, m)
	}
	return out
}

func planMilestones(p *Plan) []Milestone {
	var out []Milestone
	for i, pm := range p.Milestones {
		m := Milestone{ID: fmt.Sprintf("m%d", i+1), Goal: pm.Goal, Themes: pm.Themes, Status: MilestonePending}
		for _, t := range pm.Tasks {
			t.Operator = true
			m.Tasks = append(m.Tasks, t)
		}
		out = append(out, m)
	}
	return out
}

// overview describes the repository for planning prompts: its tree and the
// files that say what it is and how it builds.
func (d *Deps) overview() string {
	fs := d.Work.FS()
	var b strings.Builder
	if tree, err := fs.Tree(".", 300); err == nil {
		fmt.Fprintf(&b, "Repository files:\n%s\n", tree)
	}
	for _, name := range overviewFiles {
		data, err := fs.ReadFile(name)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n%s\n", name, clip(string(data), 3000))
	}
	if len(d.Gates) > 0 {
		fmt.Fprintf(&b, "\nGates (run by QA):\n%s\n", gateList(d.Gates))
	}
	return strings.TrimSpace(b.String())
}
