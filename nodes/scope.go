package nodes

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

type scopeData struct {
	Remit    string
	Feedback string
	// Task limits (tasks.*).
	MaxFiles int
	MaxChars int
}

// overviewFiles are read into the project context when present, each cut
// to its size: the README's opening says what the project is, a build file's
// head what it is built with.
var overviewFiles = []struct {
	name string
	max  int
}{{"README.md", 1200}, {"README", 1200}, {"go.mod", 400}, {"package.json", 600}, {"pyproject.toml", 600}, {"Cargo.toml", 600}, {"Makefile", 300}}

// treeBytes bounds the file tree of the project context.
const treeBytes = 2000

// ScopeAgent cuts the remit into milestones (or takes the operator's plan).
// Sent back by the Assessor, it re-plans what remains and keeps what is done.
func (d *Deps) ScopeAgent(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	replan := len(s.Milestones) > 0
	if s.ProjectContext == "" || replan {
		s.ProjectContext = overview(d.Work, d.Gates)
	}
	var placed placement
	if !replan {
		placed = quickOf(d).choosePipeline(ctx, &s)
		events.Emit(ctx, events.Pipeline{Quick: s.Quick, Why: s.PipelineReason})
	}
	var specs []milestoneSpec
	fromModel := false
	switch {
	case s.Plan != nil && !replan:
		s.Milestones = planMilestones(s.Plan)
	case s.Quick && !replan:
		s.Milestones = []runstate.Milestone{quickOf(d).quickMilestone(&s, placed)}
	default:
		fromModel = true
		data := scopeData{Remit: s.Remit, MaxFiles: d.Settings.Tasks.MaxTargetFiles, MaxChars: d.Settings.Tasks.MaxInstructionChars}
		if replan {
			data.Feedback = textutil.FirstNonEmpty(assessNotes(s.Assessment), s.EscalationContext, "the Assessor found a major divergence")
		}
		var sections []llm.Section // the project context and knowledge are the shared prefix
		if replan {
			sections = append(sections, completedSection(&s))
		}
		c := call{Label: runstate.NodeScope, Role: d.Settings.plannerRole(&s), Data: data, Sections: sections, Reply: scopeBounds(s.Remit).reply()}
		reply, _, err := ask[scopeReply](ctx, d, &s, c)
		if err != nil {
			if !llm.ModelFault(err) {
				return s, err
			}
			if !replan {
				s.SetStop(runstate.FailureStop("the ScopeAgent could not produce a plan: " + err.Error()))
				s.Milestones = nil
				return s, nil
			}
			events.Emit(ctx, events.Warning{Message: "re-plan unusable, keeping the current milestones: " + err.Error()})
			s.ScopeRounds++
			return s, nil
		}
		specs = d.enforceScopeLimits(ctx, &s, c, reply).Milestones
		if !replan && d.Settings.Pipeline.Mode == PipelineAuto && len(specs) == 1 && len(specs[0].Tasks) == 1 {
			// The ScopeAgent says the remit is one task: no planning round,
			// no Assessor; the quick path escalates if it was wrong.
			s.Quick, s.PipelineReason = true, "the ScopeAgent planned one task"
			events.Emit(ctx, events.Pipeline{Quick: true, Why: s.PipelineReason})
		}
	}
	if replan {
		s.ScopeRounds++
		happen(&s, runstate.HappenedScopeReplan)
		s.Milestones = append(doneMilestones(s.Milestones), toMilestones(len(s.Milestones), specs)...)
		s.CurrentMilestone = len(doneMilestones(s.Milestones))
		s.CarryForward = keepDirectiveTasks(s.CarryForward)
	} else if fromModel {
		s.Milestones = toMilestones(0, specs)
	}
	if len(s.Milestones) == 0 || s.CurrentMilestone >= len(s.Milestones) {
		if s.StopReason == "" {
			s.SetStop(runstate.FailureStop("the plan has no milestone left to work on"))
		}
		return s, nil
	}
	cur := &s.Milestones[s.CurrentMilestone]
	cur.Status = runstate.MilestoneActive
	s.CarryForward = append(s.CarryForward, cur.Tasks...)
	events.Emit(ctx, events.Milestones{Count: len(s.Milestones), Replan: replan})
	if s.Approve == "milestones" {
		return s, graph.Interrupt(approveMilestones(s.Milestones))
	}
	return s, nil
}

// approveMilestones is what a milestones pause asks: each milestone to work
// on, with its goal and number of tasks; lemmings status lists the tasks.
func approveMilestones(ms []runstate.Milestone) string {
	var todo []string
	for _, m := range ms {
		if m.Status != runstate.MilestoneDone {
			todo = append(todo, fmt.Sprintf("%s %q (%s)", m.ID, textutil.Clip(m.Goal, 100), textutil.Count(len(m.Tasks), "task")))
		}
	}
	return fmt.Sprintf("approve %s: %s (lemmings status lists their tasks; lemmings resume --approve, or --reject \"why\")",
		textutil.Count(len(todo), "milestone"), strings.Join(todo, "; "))
}

func assessNotes(a *runstate.Assessment) string {
	if a == nil {
		return ""
	}
	return a.Notes
}

func doneMilestones(ms []runstate.Milestone) []runstate.Milestone {
	var out []runstate.Milestone
	for _, m := range ms {
		if m.Status == runstate.MilestoneDone {
			out = append(out, m)
		}
	}
	return out
}

// toMilestones numbers new milestones after the ones that exist.
func toMilestones(existing int, specs []milestoneSpec) []runstate.Milestone {
	var out []runstate.Milestone
	for i, sp := range specs {
		m := runstate.Milestone{ID: fmt.Sprintf("m%d", existing+i+1), Goal: sp.Goal, Themes: sp.Themes, Status: runstate.MilestonePending}
		for _, t := range sp.Tasks {
			if strings.TrimSpace(t.Title) != "" {
				m.Tasks = append(m.Tasks, t.planned())
			}
		}
		out = append(out, m)
	}
	return out
}

func planMilestones(p *runstate.Plan) []runstate.Milestone {
	var out []runstate.Milestone
	for i, pm := range p.Milestones {
		m := runstate.Milestone{ID: fmt.Sprintf("m%d", i+1), Goal: pm.Goal, Themes: pm.Themes, Status: runstate.MilestonePending}
		for _, t := range pm.Tasks {
			t.Operator = true
			m.Tasks = append(m.Tasks, t)
		}
		out = append(out, m)
	}
	return out
}

// overview describes the repository for every prompt (the shared prefix):
// its files, folder by folder, and the files that say what it is and how it
// builds, each cut short. It is built once per run (again on a re-plan), so
// every prompt starts with the same bytes.
func overview(work *workspace.Worktree, gates []workspace.Gate) string {
	fs := work.FS()
	var b strings.Builder
	if entries, err := fs.List(".", 3000); err == nil || len(entries) > 0 {
		fmt.Fprintf(&b, "Repository files (folder: files):\n%s\n", compactTree(entries, treeBytes))
	}
	for _, f := range overviewFiles {
		data, err := fs.ReadFile(f.name)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n%s\n", f.name, textutil.ClipTrimmed(string(data), f.max))
	}
	if len(gates) > 0 {
		fmt.Fprintf(&b, "\nGates (run by QA):\n%s\n", gateList(gates))
	}
	return strings.TrimSpace(b.String())
}

// compactTree lists files folder by folder, one line per folder
// ("cmd/lemmings: main.go, run.go"), within maxBytes: a folder's names stop
// at its share of the room with "+N more", and folders past the room are
// counted at the end. Far fewer tokens than a path per line.
func compactTree(entries []workspace.Entry, maxBytes int) string {
	var dirs []string
	files := map[string][]string{}
	for _, e := range entries {
		if e.Dir {
			continue
		}
		dir, name := path.Split(e.Path)
		dir = strings.TrimSuffix(dir, "/")
		if dir == "" {
			dir = "."
		}
		if _, ok := files[dir]; !ok {
			dirs = append(dirs, dir)
		}
		files[dir] = append(files[dir], name)
	}
	if len(dirs) == 0 {
		return "(no files)"
	}
	// Shallow folders first: the room goes to the project's layout (every
	// top-level package) before any one deep subtree, such as a folder of
	// test fixtures, can fill it.
	slices.SortStableFunc(dirs, func(a, b string) int {
		return cmp.Or(cmp.Compare(folderDepth(a), folderDepth(b)), strings.Compare(a, b))
	})
	per := max(maxBytes/len(dirs), 60)
	var b strings.Builder
	for i, dir := range dirs {
		line := dir + ": "
		names := files[dir]
		n := 0
		for n < len(names) && len(line)+len(names[n])+2 <= per {
			if n > 0 {
				line += ", "
			}
			line += names[n]
			n++
		}
		if n < len(names) {
			line += fmt.Sprintf(" +%d more", len(names)-n)
		}
		if b.Len()+len(line) > maxBytes {
			fmt.Fprintf(&b, "… %d deeper folders (list_files to see them)\n", len(dirs)-i)
			break
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// folderDepth is how deep a folder of the tree lies ("." and "cmd" are 0
// and 1 apart only by their separators).
func folderDepth(dir string) int {
	if dir == "." {
		return 0
	}
	return strings.Count(dir, "/") + 1
}
