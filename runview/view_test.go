package runview

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var at = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// busyState is a run in its second milestone with a bit of everything:
// passed, skipped and failed tasks, a task in progress, directives settled,
// pending and planned, supervisor runs, an escalation and model usage.
func busyState() runstate.State {
	return runstate.State{RunID: "r-busy", Remit: "Make | it\nwork", Phase: runstate.PhaseExecute, Branch: "lemmings/r-busy", BaseCommit: "0123456789abcdef",
		StartedAt: at,
		Milestones: []runstate.Milestone{{ID: "m1", Goal: "first", Status: runstate.MilestoneDone}, {ID: "m2", Goal: "second", Status: runstate.MilestoneActive},
			{ID: "m3", Goal: "third", Status: runstate.MilestonePending, Tasks: []runstate.PlannedTask{{Title: "later one"}}}},
		CurrentMilestone: 1,
		DoneList: []runstate.DoneEntry{{TaskID: "t1", Milestone: "m1", Title: "Do a | thing", Summary: "did it\nwell", QA: "passed", Commit: "abcdef0123456789", Attempts: 2},
			{TaskID: "t2", Milestone: "m2", Title: "Other", QA: "skipped", Attempts: 1}},
		Failures: []runstate.Failure{{TaskID: "t3", Milestone: "m2", Title: "Broken", Reason: "QA failed: gate test\n--- FAIL: TestX\nx_test.go:3: want 1 got 2", Attempts: 3},
			{TaskID: "t4", Milestone: "m1", Title: "Short", Reason: "blocked", Attempts: 1}},
		Overruled:      []string{"milestone m2 done | claimed"},
		CurrentTask:    &runstate.Task{ID: "t5", Milestone: "m2", Title: "Now", Attempt: 2, Feedback: "fix the\nthing"},
		CarryForward:   []runstate.PlannedTask{{Title: "next a"}, {Title: "next b", DirectiveID: "d2"}},
		TasksCompleted: 2, TasksFailed: 2,
		PendingDirectives: []runstate.Directive{{ID: "d3", Type: runstate.DirCleanup, Source: "code_style", Description: "tidy", Priority: runstate.PrioLow},
			{ID: "d4", Type: runstate.DirFunctional, Source: "design", Description: "crit", Priority: runstate.PrioCritical},
			{ID: "d2", Type: runstate.DirFunctional, Source: "design", Description: "has task", Priority: runstate.PrioNormal, TaskID: "t6"}},
		DirectiveLog: []runstate.DirectiveFate{{DirectiveID: "d1", Source: "code_style", Description: "docs", Fate: "task", TaskID: "t2", At: at},
			{DirectiveID: "d1", Source: "code_style", Description: "docs", Fate: "completed", Note: "ok", At: at},
			{DirectiveID: "d2", Source: "design", Description: "has task", Fate: "task", TaskID: "t6", At: at}},
		SupervisorRunLog: []runstate.SupervisorRun{{JobID: "j1", Supervisor: "code_style", Trigger: "interval", AtTask: 1, Status: "ok", Summary: "sum", Docs: []string{"conventions/b.md", "conventions/a.md"}, Directives: []string{"d1"}, PromptTokens: 10, CompletionTokens: 5, CostUSD: 0.0123, At: at},
			{JobID: "j2", Supervisor: "design", Trigger: "milestone", AtTask: 2, Status: "failed", Summary: "  ", Warning: "boom", Docs: []string{"conventions/a.md"}, At: at}},
		Escalations: []runstate.Escalation{{Kind: runstate.EscArchitect, TaskID: "t3", Attempt: 2, PromptTokens: 100, CompletionTokens: 50, CostUSD: 0.02, Outcome: runstate.EscHelped, Note: "n | x", At: at}},
		Usage: map[string]runstate.UsageTotals{"implementor": {Calls: 3, PromptTokens: 300, CompletionTokens: 30, Elapsed: 1500 * time.Millisecond},
			"task_planner": {Calls: 2, PromptTokens: 200, CompletionTokens: 20, CostUSD: 0.5, Elapsed: time.Second}, "supervisor": {Calls: 1, CostUSD: 0.25}},
		Warnings: []string{"w1"},
	}
}

// The view works out once what every screen shows.
func TestAViewCountsOnceWhatEveryScreenShows(t *testing.T) {
	s := busyState()
	v := Live(&s)
	if v.Standing.Status != runstate.RunRunning || v.Ended {
		t.Errorf("a run in progress stands %+v (ended %v)", v.Standing, v.Ended)
	}
	if v.Tasks != (Tasks{Completed: 2, Failed: 2, Planned: 2}) || v.Milestone != 2 || v.Milestones != 3 || v.PendingDirectives != 3 {
		t.Errorf("counts: tasks %+v, milestone %d of %d, %d directives pending", v.Tasks, v.Milestone, v.Milestones, v.PendingDirectives)
	}
	if v.Total.Calls != 6 || v.Total.PromptTokens != 500 || v.Total.CompletionTokens != 50 || v.Total.CostUSD != 0.75 || v.Total.Elapsed != 2500*time.Millisecond {
		t.Errorf("total usage %+v", v.Total)
	}
	if len(v.Usage) != 3 || v.Usage[0].Role != "implementor" || v.Usage[2].Role != "task_planner" || v.PlannerCostUSD != 0.5 {
		t.Errorf("usage per role %+v, planner cost %v", v.Usage, v.PlannerCostUSD)
	}
	if strings.Join(v.Knowledge, " ") != "conventions/a.md conventions/b.md" {
		t.Errorf("knowledge written %q", v.Knowledge)
	}
	if len(v.Open) != 2 || v.Open[0].ID != "d4" || v.Open[1].ID != "d3" {
		t.Errorf("open directives (most urgent first, none with a task) %+v", v.Open)
	}
	m := v.Board[1]
	if !m.Current || m.Status != runstate.MilestoneActive || len(m.Done) != 1 || len(m.Failed) != 1 || m.InProgress == nil || len(m.Planned) != 2 {
		t.Errorf("current milestone %+v", m)
	}
	if p := v.Board[2]; p.Current || len(p.Planned) != 1 || p.Planned[0].Title != "later one" {
		t.Errorf("a milestone not started shows its first tasks: %+v", p)
	}
	if got := v.Progress(); got.Planned != 3 || got.CostUSD != 0.75 || got.Milestone != 2 {
		t.Errorf("progress %+v", got)
	}
	if got := v.Progress().Counts(); got != "[milestone 2/3 · tasks 2 done, 2 failed of 7" {
		t.Errorf("progress line %q", got)
	}
}

// One row per directive with the way it went; a pending one takes the
// place of its earlier fate.
func TestDirectivesFoldTheLogIntoOneRowEach(t *testing.T) {
	s := busyState()
	rows := Of(&s, runstate.Standing{}).Directives
	if len(rows) != 4 {
		t.Fatalf("rows %+v", rows)
	}
	if r := rows[0]; r.ID != "d1" || r.Fate != runstate.FateCompleted || r.Trail != "task → completed" || r.TaskID != "t2" || r.Note != "ok" {
		t.Errorf("settled directive %+v", r)
	}
	if r := rows[1]; r.ID != "d2" || r.Fate != PendingFate || r.TaskID != "t6" || r.Priority != runstate.PrioNormal {
		t.Errorf("pending directive with a task %+v", r)
	}
	if r := rows[3]; r.ID != "d4" || r.Fate != PendingFate || r.Trail != "" {
		t.Errorf("pending directive %+v", r)
	}
	// Pending again after one fate: the trail says the way it went, not "pending" twice
	// (lemmings directives printed "pending … — pending").
	s.DirectiveLog = s.DirectiveLog[:0]
	s.LogFate(s.PendingDirectives[0], runstate.FateTask, "", s.StartedAt)
	rows = Of(&s, runstate.Standing{}).Directives
	if r := rows[0]; r.ID != s.PendingDirectives[0].ID || r.Fate != PendingFate || r.Trail != "task → pending" {
		t.Errorf("a directive pending again %+v", r)
	}
}

// A finished run's board has no active milestone: what was open is
// unfinished, what never started says so.
func TestAFinishedBoardShowsNoActiveMilestone(t *testing.T) {
	s := runstate.State{RunID: "r1", Phase: runstate.PhaseDone, Outcome: runstate.OutcomeFailed, StopReason: "3 tasks failed in a row",
		Milestones: []runstate.Milestone{{ID: "m1", Goal: "a", Status: runstate.MilestoneActive}, {ID: "m2", Goal: "b", Status: runstate.MilestonePending}}}
	board := Live(&s).BoardMD()
	for _, want := range []string{"Status: failed — 3 tasks failed in a row", "## m1 [unfinished] a", "## m2 [not started] b"} {
		if !strings.Contains(board, want) {
			t.Errorf("board lacks %q:\n%s", want, board)
		}
	}
	s.Phase = runstate.PhaseExecute // a run still going: its milestone is active
	if board := Live(&s).BoardMD(); !strings.Contains(board, "## m1 [active] a") {
		t.Errorf("a running board:\n%s", board)
	}
}

// board.md and report.md of a busy run, against their golden files
// (go test ./runview -update rewrites them).
func TestBoardAndReportAsGolden(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events.jsonl")
	var log []string
	for _, ev := range []graph.Event{
		custom("qa", map[string]any{"task": "t3", "attempt": 1, "passed": false, "feedback": "Gate \"test\" failed\n--- FAIL: TestX\nx_test.go:3: want 1 got 2"}),
		custom("implementation", map[string]any{"task": "t3", "attempt": 2, "status": "loop"}),
		custom("qa", map[string]any{"task": "t5", "attempt": 1, "passed": true}),
		{Kind: graph.EventNodeEnd, Node: "qa", Duration: 1500 * time.Millisecond},
		{Kind: graph.EventNodeEnd, Node: "qa", Duration: 500 * time.Millisecond},
	} {
		b, _ := json.Marshal(ev)
		log = append(log, string(b))
	}
	if err := os.WriteFile(events, []byte(strings.Join(log, "\n")+"\n{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := busyState()
	failed := busyState()
	failed.Phase, failed.Outcome, failed.StopReason = runstate.PhaseDone, runstate.OutcomeFailed, "3 in a row"
	facts := Facts{Sandbox: "a sandbox", KnowledgeDir: "docs/knowledge", Events: events, Mermaid: "graph TD\n a-->b\n",
		Finished: at.Add(90 * time.Minute), Commits: []workspace.Commit{{SHA: "abcdef0123456789", Subject: "t1: Do a thing"}}}
	halted := Of(&s, runstate.StandingOf(runstate.Stored{Status: graph.StatusHalted, Reason: "reached limits.max_wall_time"}, &s))
	for name, got := range map[string]string{
		"board.golden":         Live(&s).BoardMD(),
		"board-ended.golden":   Live(&failed).BoardMD(),
		"report-ended.golden":  Live(&failed).ReportMD(facts),
		"report-halted.golden": halted.ReportMD(Facts{Sandbox: "a sandbox", KnowledgeDir: "docs/knowledge", Finished: at.Add(time.Hour)}),
	} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs (go test ./runview -update rewrites it):\n%s", name, got)
		}
	}
}

func custom(name string, data any) graph.Event {
	b, _ := json.Marshal(data)
	return graph.Event{Kind: graph.EventCustom, Name: name, Data: b}
}
