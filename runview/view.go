// Package runview is a run as every screen shows it: one View, computed
// once from the workflow's state, that board.md and report.md, lemmings
// status, runs and directives, lemmings serve, lemmings eval and the MCP
// server read. What a run counts (tasks, attempts, tokens, cost), how its
// milestones and directives stand and how the run itself stands
// (runstate.StandingOf) are worked out here and nowhere else.
package runview

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
)

// View is a run as the screens show it.
type View struct {
	RunID, Remit, Phase string
	// Branch is where the run commits, from BaseCommit.
	Branch, BaseCommit string
	StartedAt          time.Time
	// Standing is how the run stands: status, reason, next step.
	Standing runstate.Standing
	// Ended: the Report node settled the run (runstate.PhaseDone).
	Ended bool
	// Outcome, StopReason and Evidence are the workflow's own
	// (runstate.State): how the Report node settled the run, and why.
	Outcome              runstate.Outcome
	StopReason, Evidence string
	ReportPath           string

	Tasks Tasks
	// Milestone is the current milestone's number (1-based) of Milestones.
	Milestone, Milestones int
	Board                 []Milestone
	// Current is the task in progress (nil between tasks).
	Current *runstate.Task
	// Done and Failures are every finished and abandoned task, in order.
	Done      []runstate.DoneEntry
	Failures  []runstate.Failure
	Overruled []string
	// Tells are the messages the user told the run; Undone the tasks the
	// user took back (docs/time-travel.md).
	Tells  []runstate.ToldMessage
	Undone []runstate.UndoneTask

	// Directives is one row per directive, in the order they first came.
	Directives []Directive
	// Open are the pending directives no task addresses yet, most urgent
	// first, as the planner sees them.
	Open []runstate.Directive
	// PendingDirectives counts the directives not settled yet.
	PendingDirectives int

	Supervisors []runstate.SupervisorRun
	// Knowledge lists the documents the supervisors wrote, sorted, once each.
	Knowledge   []string
	Escalations []runstate.Escalation
	// PlannerCostUSD is what the ScopeAgent and TaskPlanner cost (a cloud
	// planner is paid from the supervisor budget).
	PlannerCostUSD float64

	// Usage is tokens, cost and model time per role label, sorted by label;
	// Total adds them up.
	Usage    []RoleUsage
	Total    runstate.UsageTotals
	Warnings []string
}

// Tasks counts the run's tasks.
type Tasks struct {
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// Planned are the tasks planned next (carry-forward), the one in
	// progress not counted.
	Planned int `json:"planned"`
}

// Milestone is one milestone with its tasks.
type Milestone struct {
	ID, Goal string
	// Status is the milestone's status as shown (runstate.MilestoneShown): a
	// run that ended for good has no active milestone.
	Status string
	// Current: the run works on (or ended in) this milestone.
	Current bool
	Done    []runstate.DoneEntry
	Failed  []runstate.Failure
	// InProgress is the task in progress, on the current milestone.
	InProgress *runstate.Task
	// Planned are the next tasks: the carry-forward of the current
	// milestone, the initial tasks of one not started.
	Planned []runstate.PlannedTask
}

// RoleUsage is what one role label used.
type RoleUsage struct {
	Role string
	runstate.UsageTotals
}

// Of is the view of a run's state s standing as st.
func Of(s *runstate.State, st runstate.Standing) View {
	v := View{RunID: s.RunID, Remit: s.Remit, Phase: s.Phase, Branch: s.Branch, BaseCommit: s.BaseCommit,
		StartedAt: s.StartedAt, Standing: st, Ended: s.Phase == runstate.PhaseDone,
		Outcome: s.Outcome, StopReason: s.StopReason, Evidence: s.Evidence, ReportPath: s.ReportPath,
		Tasks:     Tasks{Completed: s.TasksCompleted, Failed: s.TasksFailed, Planned: len(s.CarryForward)},
		Milestone: min(s.CurrentMilestone+1, len(s.Milestones)), Milestones: len(s.Milestones),
		Current: s.CurrentTask, Done: s.DoneList, Failures: s.Failures, Overruled: s.Overruled, Tells: s.Tells, Undone: s.Undone,
		Directives: directiveRows(s.DirectiveLog, s.PendingDirectives), Open: s.OpenDirectives(),
		PendingDirectives: len(s.PendingDirectives), Supervisors: s.SupervisorRunLog, Escalations: s.Escalations,
		PlannerCostUSD: s.Usage[runstate.NodePlanner].CostUSD + s.Usage[runstate.NodeScope].CostUSD,
		Warnings:       s.Warnings,
	}
	v.Board = boardOf(s, st)
	for _, r := range s.SupervisorRunLog {
		v.Knowledge = append(v.Knowledge, r.Docs...)
	}
	slices.Sort(v.Knowledge)
	v.Knowledge = slices.Compact(v.Knowledge)
	for _, label := range slices.Sorted(maps.Keys(s.Usage)) {
		u := s.Usage[label]
		v.Usage = append(v.Usage, RoleUsage{Role: label, UsageTotals: u})
		v.Total.Calls += u.Calls
		v.Total.PromptTokens += u.PromptTokens
		v.Total.PromptCached += u.PromptCached
		v.Total.CompletionTokens += u.CompletionTokens
		v.Total.CostUSD += u.CostUSD
		v.Total.Elapsed += u.Elapsed
	}
	return v
}

// Live is the view of a run in progress, as its own process sees it after
// each node: running, or once the Report node settled it, ended.
func Live(s *runstate.State) View {
	st := runstate.Standing{Status: runstate.RunRunning}
	if s.Phase == runstate.PhaseDone {
		st = runstate.StandingOf(runstate.Stored{Status: graph.StatusDone}, s)
	}
	return Of(s, st)
}

func boardOf(s *runstate.State, st runstate.Standing) []Milestone {
	var out []Milestone
	for i, m := range s.Milestones {
		mv := Milestone{ID: m.ID, Goal: m.Goal, Status: runstate.MilestoneShown(m.Status, st), Current: i == s.CurrentMilestone}
		for _, e := range s.DoneList {
			if e.Milestone == m.ID {
				mv.Done = append(mv.Done, e)
			}
		}
		for _, f := range s.Failures {
			if f.Milestone == m.ID {
				mv.Failed = append(mv.Failed, f)
			}
		}
		if mv.Current {
			if t := s.CurrentTask; t != nil && (t.Milestone == m.ID || t.Milestone == "") {
				mv.InProgress = t
			}
			mv.Planned = s.CarryForward
		} else if m.Status == runstate.MilestonePending {
			mv.Planned = m.Tasks
		}
		out = append(out, mv)
	}
	return out
}

// Progress is the run's progress as the "progress" event after each node
// carries it, and as its readers (lemmings run's terminal, the MCP server's
// wait) decode it.
type Progress struct {
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Planned int `json:"planned"` // the task in progress included
	// Milestone is the current milestone's number (1-based) of Milestones.
	Milestone  int     `json:"milestone"`
	Milestones int     `json:"milestones"`
	CostUSD    float64 `json:"cost_usd"`
	Phase      string  `json:"phase"`
}

// Progress is the view's progress.
func (v View) Progress() Progress {
	planned := v.Tasks.Planned
	if v.Current != nil {
		planned++
	}
	return Progress{Done: v.Tasks.Completed, Failed: v.Tasks.Failed, Planned: planned,
		Milestone: v.Milestone, Milestones: v.Milestones, CostUSD: v.Total.CostUSD, Phase: v.Phase}
}

// ProgressOf is the progress a progress event carries.
func ProgressOf(e events.Progress) Progress {
	return Progress{Done: e.Done, Failed: e.Failed, Planned: e.Planned,
		Milestone: e.Milestone, Milestones: e.Milestones, CostUSD: e.CostUSD, Phase: e.Phase}
}

// Event is the progress as the event's data.
func (p Progress) Event() events.Progress {
	return events.Progress{Done: p.Done, Failed: p.Failed, Planned: p.Planned,
		Milestone: p.Milestone, Milestones: p.Milestones, CostUSD: p.CostUSD, Phase: p.Phase}
}

// Counts is the progress as a status line starts it, "[milestone 1/2 ·
// tasks 3 done, 1 failed of 6"; the caller adds what it knows and the "]".
func (p Progress) Counts() string {
	s := fmt.Sprintf("[milestone %d/%d · tasks %d done", p.Milestone, p.Milestones, p.Done)
	if p.Failed > 0 {
		s += fmt.Sprintf(", %d failed", p.Failed)
	}
	return s + fmt.Sprintf(" of %d", p.Done+p.Failed+p.Planned)
}

// Verdict is one QA verdict: the gates and the criteria that failed.
type Verdict struct {
	// Step is the checkpoint that holds it, when read from the run's history.
	Step    int
	Task    string
	Title   string
	Attempt int
	Passed  bool
	Gates   []runstate.GateOutcome
	Failing []runstate.CriterionResult
}

// VerdictOf is the last QA verdict of a state (nil when none).
func VerdictOf(s *runstate.State) *Verdict {
	if s.QA == nil {
		return nil
	}
	g := &Verdict{Passed: s.QA.Passed, Gates: s.QA.Gates}
	if t := s.CurrentTask; t != nil {
		g.Task, g.Title, g.Attempt = t.ID, t.Title, t.Attempt
	}
	for _, c := range s.QA.Criteria {
		if !c.Met {
			g.Failing = append(g.Failing, c)
		}
	}
	return g
}
