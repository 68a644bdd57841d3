package nodes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

var supNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func supIDs(ds []runstate.Directive) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

func supTitles(ts []runstate.PlannedTask) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Title)
	}
	return out
}

// supFates lists the log as "id:fate".
func supFates(s runstate.State) []string {
	var out []string
	for _, f := range s.DirectiveLog {
		out = append(out, f.DirectiveID+":"+f.Fate)
	}
	return out
}

func TestSupAddDirectivesNormalises(t *testing.T) {
	t.Parallel()
	s := supExecState()
	s.TasksCompleted = 7
	ids := supervisors.AddDirectives(&s, prompts.Design, []runstate.Directive{
		{Type: " Functional ", Priority: "NORMAL", Description: "Use a map for the colony"},
		{Type: "rewrite", Priority: "urgent", Description: "Unknown type and priority"},
		{Type: "cleanup", Priority: "low", Description: "   "},                       // empty: dropped
		{Type: "cleanup", Priority: "low", Description: "use a map for the colony "}, // duplicate: dropped
	}, 10, supNow)
	if !slices.Equal(ids, []string{"d1", "d2"}) {
		t.Fatalf("ids = %v", ids)
	}
	d1, d2 := s.PendingDirectives[0], s.PendingDirectives[1]
	if d1.Type != runstate.DirFunctional || d1.Priority != runstate.PrioNormal || d1.Source != prompts.Design || d1.CreatedAtTask != 7 {
		t.Errorf("d1 = %+v", d1)
	}
	if d2.Type != runstate.DirCleanup || d2.Priority != runstate.PrioNormal {
		t.Errorf("d2 = %+v, want the defaults cleanup/normal for unknown values", d2)
	}
	if s.NextDirectiveID != 2 {
		t.Errorf("next id %d", s.NextDirectiveID)
	}
}

// TestSupCleanupCap: at most 10 cleanup directives wait; the oldest is
// dropped with the fate "capped". Functional and planned directives do not
// count.
func TestSupCleanupCap(t *testing.T) {
	t.Parallel()
	s := supExecState()
	supervisors.AddDirectives(&s, prompts.Design, []runstate.Directive{{Type: runstate.DirFunctional, Description: "functional one"}}, 10, supNow)
	for i := 1; i <= 10; i++ {
		supervisors.AddDirectives(&s, prompts.CodeStyle, []runstate.Directive{{Type: runstate.DirCleanup, Priority: runstate.PrioLow, Description: fmt.Sprintf("cleanup %d", i)}}, 10, supNow)
	}
	if n := supPendingCleanup(s); n != 10 || len(s.DirectiveLog) != 0 {
		t.Fatalf("10 cleanup directives: %d pending, log %v", n, supFates(s))
	}
	markDirectiveTask(&s, "d2", "t9") // cleanup 1 is being worked on: not counted, not dropped
	supervisors.AddDirectives(&s, prompts.CodeStyle, []runstate.Directive{{Type: runstate.DirCleanup, Description: "cleanup 11"}}, 10, supNow)
	if n := supPendingCleanup(s); n != 10 {
		t.Fatalf("after a planned one: %d pending cleanup, want 10", n)
	}
	supervisors.AddDirectives(&s, prompts.CodeStyle, []runstate.Directive{{Type: runstate.DirCleanup, Description: "cleanup 12"}, {Type: runstate.DirCleanup, Description: "cleanup 13"}}, 10, supNow)
	if got := supFates(s); !slices.Equal(got, []string{"d3:capped", "d4:capped"}) {
		t.Fatalf("fates %v, want the two oldest unplanned cleanup directives capped", got)
	}
	if n := supPendingCleanup(s); n != 10 {
		t.Fatalf("%d pending cleanup, want 10", n)
	}
	for _, id := range []string{"d1", "d2", "d14"} {
		if !slices.Contains(supIDs(s.PendingDirectives), id) {
			t.Errorf("%s dropped: pending %v", id, supIDs(s.PendingDirectives))
		}
	}
}

// TestSupDirectiveAging: cleanup directives nobody picked up within 15
// completed tasks age out; functional and planned ones never do.
func TestSupDirectiveAging(t *testing.T) {
	t.Parallel()
	s := supExecState()
	s.TasksCompleted = 2
	supervisors.AddDirectives(&s, prompts.CodeStyle, []runstate.Directive{
		{Type: runstate.DirCleanup, Priority: runstate.PrioLow, Description: "old cleanup"},
		{Type: runstate.DirFunctional, Priority: runstate.PrioNormal, Description: "old functional"},
		{Type: runstate.DirCleanup, Priority: runstate.PrioLow, Description: "planned cleanup"},
	}, 10, supNow)
	markDirectiveTask(&s, "d3", "planned")
	s.TasksCompleted = 17 // 15 completed since: not older than 15 yet
	supervisors.AgeDirectives(&s, 15, supNow)
	if len(s.PendingDirectives) != 3 {
		t.Fatalf("aged too early: %v", supFates(s))
	}
	s.TasksCompleted = 18
	supervisors.AgeDirectives(&s, 15, supNow)
	if got := supFates(s); !slices.Equal(got, []string{"d1:aged_out"}) {
		t.Fatalf("fates %v, want d1 aged out", got)
	}
	if got := supIDs(s.PendingDirectives); !slices.Equal(got, []string{"d2", "d3"}) {
		t.Fatalf("pending %v", got)
	}
	supervisors.AgeDirectives(&s, 0, supNow) // aging off
	if len(s.PendingDirectives) != 2 {
		t.Fatal("aging off dropped something")
	}
}

func TestSupDirectiveOrder(t *testing.T) {
	t.Parallel()
	pending := []runstate.Directive{
		{ID: "d1", Type: runstate.DirCleanup, Priority: runstate.PrioLow},
		{ID: "d2", Type: runstate.DirFunctional, Priority: runstate.PrioLow},
		{ID: "d3", Type: runstate.DirCleanup, Priority: runstate.PrioNormal},
		{ID: "d4", Type: runstate.DirFunctional, Priority: runstate.PrioNormal},
		{ID: "d5", Type: runstate.DirCleanup, Priority: runstate.PrioCritical},
		{ID: "d6", Type: runstate.DirFunctional, Priority: runstate.PrioNormal},
		{ID: "d7", Type: runstate.DirFunctional, Priority: runstate.PrioNormal, TaskID: "t3"}, // planned: not shown
	}
	if got := supIDs(orderedDirectives(pending, false)); !slices.Equal(got, []string{"d5", "d4", "d6", "d2", "d3", "d1"}) {
		t.Fatalf("order %v: want critical, functional (normal, low), cleanup (normal, low), oldest first", got)
	}
	if got := supIDs(orderedDirectives(pending, true)); !slices.Equal(got, []string{"d5", "d3", "d1"}) {
		t.Fatalf("polish sees %v, want the cleanup directives only", got)
	}
}

// TestSupDirectivePlacement: normal functional work goes before the carry-
// forward (in the order shown), low and cleanup work after it; handled and
// escalated directives are closed with their fate.
func TestSupDirectivePlacement(t *testing.T) {
	t.Parallel()
	s := supExecState()
	s.CarryForward = []runstate.PlannedTask{{Title: "planned A"}, {Title: "planned B"}}
	supervisors.AddDirectives(&s, prompts.Design, []runstate.Directive{
		{Type: runstate.DirFunctional, Priority: runstate.PrioNormal, Description: "functional first"},
		{Type: runstate.DirFunctional, Priority: runstate.PrioNormal, Description: "functional second"},
		{Type: runstate.DirCleanup, Priority: runstate.PrioLow, Description: "cleanup low", Files: []string{"a.go"}},
		{Type: runstate.DirFunctional, Priority: runstate.PrioLow, Description: "functional low"},
		{Type: runstate.DirCleanup, Priority: runstate.PrioNormal, Description: "already handled"},
		{Type: runstate.DirFunctional, Priority: runstate.PrioNormal, Description: "needs a human"},
	}, 10, supNow)
	shown := orderedDirectives(s.PendingDirectives, false)
	answers := []DirectiveAnswer{
		{ID: "d1", Fate: runstate.FateTask}, {ID: "d2", Fate: runstate.FateTask}, {ID: "d3", Fate: runstate.FateTask}, {ID: "d4", Fate: runstate.FateTask},
		{ID: "d5", Fate: runstate.FateHandled, Note: "done in t2"}, {ID: "d6", Fate: runstate.FateEscalated, Note: "out of scope"},
	}
	if crit := applyDirectiveAnswers(&s, shown, answers, nil, supNow); crit != nil {
		t.Fatalf("no critical directive, got %+v", crit)
	}
	want := []string{"functional first", "functional second", "planned A", "planned B", "functional low", "cleanup low"}
	if got := supTitles(s.CarryForward); !slices.Equal(got, want) {
		t.Fatalf("carry-forward %q, want %q", got, want)
	}
	last := s.CarryForward[len(s.CarryForward)-1]
	if last.DirectiveID != "d3" || !slices.Equal(last.TargetFiles, []string{"a.go"}) || !strings.Contains(last.Instructions, "directive d3") {
		t.Errorf("directive task %+v", last)
	}
	if got := supFates(s); !slices.Equal(got, []string{"d1:task", "d2:task", "d6:escalated", "d4:task", "d5:handled", "d3:task"}) {
		t.Errorf("fates %v", got)
	}
	if !strings.Contains(s.EscalationContext, "needs a human") {
		t.Errorf("escalation not recorded: %q", s.EscalationContext)
	}
	if got := orderedDirectives(s.PendingDirectives, false); len(got) != 0 {
		t.Errorf("still shown: %v", supIDs(got))
	}
}

// TestSupDirectiveNeverSilentlyDropped: a directive the planner does not
// account for stays pending and is shown again; ignored twice, the
// orchestrator makes it a task itself. A critical one is forced at once.
func TestSupDirectiveNeverSilentlyDropped(t *testing.T) {
	t.Parallel()
	s := supExecState()
	supervisors.AddDirectives(&s, prompts.CodeStyle, []runstate.Directive{{Type: runstate.DirCleanup, Priority: runstate.PrioLow, Description: "rename helpers"}}, 10, supNow)
	for round := 1; round <= 2; round++ {
		shown := orderedDirectives(s.PendingDirectives, false)
		if len(shown) != 1 {
			t.Fatalf("round %d: shown %v, want the directive again", round, supIDs(shown))
		}
		// Round 1 says nothing about it; round 2 answers with an invalid fate.
		answers := []DirectiveAnswer{}
		if round == 2 {
			answers = []DirectiveAnswer{{ID: "d1", Fate: "ignore"}}
		}
		applyDirectiveAnswers(&s, shown, answers, nil, supNow)
	}
	if got := supFates(s); !slices.Equal(got, []string{"d1:forced_task"}) {
		t.Fatalf("fates %v, want d1 forced after two rounds", got)
	}
	if got := supTitles(s.CarryForward); !slices.Equal(got, []string{"rename helpers"}) || s.CarryForward[0].DirectiveID != "d1" {
		t.Fatalf("carry-forward %+v", s.CarryForward)
	}

	c := supExecState()
	supervisors.AddDirectives(&c, prompts.Design, []runstate.Directive{{Type: runstate.DirFunctional, Priority: runstate.PrioCritical, Description: "stop writing to the shared table"}}, 10, supNow)
	crit := applyDirectiveAnswers(&c, orderedDirectives(c.PendingDirectives, false), nil, nil, supNow)
	if crit == nil || crit.DirectiveID != "d1" {
		t.Fatalf("an ignored critical directive was not forced at once: %+v", crit)
	}
}

// supPlannerAnswer answers the planner with a fixed reply; other labels get
// an empty supervisor reply or a summary.
func supPlannerAnswer(reply map[string]any) func(llm.Request) (string, error) {
	return func(req llm.Request) (string, error) {
		switch req.Label {
		case runstate.NodePlanner:
			return suptest.JSON(reply), nil
		case prompts.Summarizer:
			return `{"summary":"done"}`, nil
		}
		return supAnswerEmptySupervisor(req)
	}
}

func supPreemptState(t *testing.T, d *Deps, operator bool) runstate.State {
	t.Helper()
	s := supExecState()
	s.RunID = "sup-run"
	s.Milestones = []runstate.Milestone{{ID: "m1", Goal: "goal", Status: runstate.MilestoneActive}}
	s.CarryForward = []runstate.PlannedTask{
		{Title: "Write out/a.txt", AcceptanceCriteria: []string{"a"}, Operator: operator},
		{Title: "Write out/b.txt", AcceptanceCriteria: []string{"b"}, Operator: operator},
	}
	if operator {
		s.Plan = &runstate.Plan{}
	}
	supervisors.AddDirectives(&s, prompts.Design, []runstate.Directive{{Type: runstate.DirFunctional, Priority: runstate.PrioCritical, Description: "Stop: the store corrupts data", Files: []string{"store.go"}}}, 10, supNow)
	supervisors.AddDirectives(&s, prompts.CodeStyle, []runstate.Directive{{Type: runstate.DirCleanup, Priority: runstate.PrioLow, Description: "Tidy names"}}, 10, supNow)
	return s
}

// TestSupCriticalPreemptsCarryForward: the planner picked the next planned
// task, but a critical directive runs first; the planned work waits, once.
func TestSupCriticalPreemptsCarryForward(t *testing.T) {
	t.Parallel()
	for _, operator := range []bool{false, true} {
		t.Run(fmt.Sprintf("operator_plan=%v", operator), func(t *testing.T) {
			m := &supFakeModel{}
			d := supDeps(t, m, true)
			s := supPreemptState(t, d, operator)
			m.answer = supPlannerAnswer(map[string]any{
				"decision": "implement", "reasoning": "next planned",
				"task":          map[string]any{"title": "Write out/a.txt", "instructions": "a", "acceptance_criteria": []string{"a"}},
				"carry_forward": []map[string]any{{"title": "Write out/b.txt", "instructions": "b", "acceptance_criteria": []string{"b"}}},
				"directives":    []map[string]any{{"id": "d1", "fate": "task", "note": "now"}, {"id": "d2", "fate": "task", "note": "later"}},
			})
			out, err := d.TaskPlanner(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if out.CurrentTask == nil || out.CurrentTask.DirectiveID != "d1" || out.PlannerDecision != DecisionImplement {
				t.Fatalf("current task %+v (decision %s), want the critical directive's", out.CurrentTask, out.PlannerDecision)
			}
			want := []string{"Write out/a.txt", "Write out/b.txt", "Tidy names"}
			if got := supTitles(out.CarryForward); !slices.Equal(got, want) {
				t.Fatalf("carry-forward %q, want %q", got, want)
			}
		})
	}
}

// TestSupCriticalPreemptsTaskInProgress: a critical directive arriving while
// a task is being re-planned after a failed attempt runs first; the
// interrupted task is not lost and its half-done work does not leak into the
// directive's commit.
func TestSupCriticalPreemptsTaskInProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := &supFakeModel{}
	d := supDeps(t, m, true)
	s := supPreemptState(t, d, false)
	head, _ := d.Work.Head(ctx)
	s.CurrentTask = &runstate.Task{ID: "t1", Title: "Write out/z.txt", StartCommit: head, AttemptBase: head, Attempt: 1, Retries: 1, Feedback: "QA failed", AcceptanceCriteria: []string{"z"}}
	if err := d.Work.FS().WriteFile("out/z.txt", []byte("half done\n")); err != nil {
		t.Fatal(err)
	}
	wip, err := d.Work.Commit(ctx, "lemmings wip: t1 attempt 1", map[string]string{"Lemmings-Wip": "t1"})
	if err != nil {
		t.Fatal(err)
	}
	s.Implementation = &runstate.ImplResult{Status: runstate.ImplFinished, Commit: wip}
	m.answer = supPlannerAnswer(map[string]any{
		"decision": "implement", "reasoning": "retry",
		"task":          map[string]any{"title": "Write out/z.txt", "instructions": "fix it", "acceptance_criteria": []string{"z"}},
		"carry_forward": []map[string]any{},
		"directives":    []map[string]any{{"id": "d1", "fate": "task", "note": "now"}, {"id": "d2", "fate": "task", "note": "later"}},
	})
	out, err := d.TaskPlanner(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if out.CurrentTask == nil || out.CurrentTask.DirectiveID != "d1" {
		t.Fatalf("current task %+v, want the critical directive's", out.CurrentTask)
	}
	if out.CurrentTask.StartCommit != head {
		t.Errorf("the directive's task starts at %s, the interrupted attempt's work in progress; want the task's start %s", out.CurrentTask.StartCommit, head)
	}
	if !slices.Contains(supTitles(out.CarryForward), "Write out/z.txt") {
		t.Errorf("the interrupted task is lost: carry-forward %q", supTitles(out.CarryForward))
	}
}

// TestSupDirectivesInPlannerPrompt: pending directives reach the planner in
// an ACTIVE DIRECTIVES section, in priority order, with the instruction that
// each MUST be addressed; the answer's fates are recorded.
func TestSupDirectivesInPlannerPrompt(t *testing.T) {
	t.Parallel()
	m := &supFakeModel{}
	d := supDeps(t, m, true)
	s := supPreemptState(t, d, false)
	s.PendingDirectives[0].Priority = runstate.PrioNormal // no pre-emption here
	m.answer = supPlannerAnswer(map[string]any{
		"decision": "implement", "reasoning": "next planned",
		"task":          map[string]any{"title": "Write out/a.txt", "instructions": "a", "acceptance_criteria": []string{"a"}},
		"carry_forward": []map[string]any{{"title": "Write out/b.txt", "instructions": "b", "acceptance_criteria": []string{"b"}}},
		"directives":    []map[string]any{{"id": "d1", "fate": "task", "note": "prepend"}, {"id": "d2", "fate": "handled", "note": "names are fine"}},
	})
	out, err := d.TaskPlanner(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.requests(runstate.NodePlanner)
	if len(reqs) != 1 {
		t.Fatalf("%d planner calls", len(reqs))
	}
	prompt := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	sec := llmtest.Section(prompt, prompts.SecDirectives)
	i1 := strings.Index(sec, "- [d1] NORMAL functional from design: Stop: the store corrupts data")
	i2 := strings.Index(sec, "- [d2] LOW cleanup from code_style: Tidy names")
	if i1 < 0 || i2 < i1 {
		t.Fatalf("ACTIVE DIRECTIVES section:\n%s", sec)
	}
	if !strings.Contains(sec, "files: store.go") {
		t.Errorf("directive files missing:\n%s", sec)
	}
	if !strings.Contains(llmtest.Section(prompt, prompts.SecInstructions), "MUST be addressed") {
		t.Errorf("instructions do not demand an answer for each directive:\n%s", llmtest.Section(prompt, prompts.SecInstructions))
	}
	if got := supFates(out); !slices.Equal(got, []string{"d1:task", "d2:handled"}) {
		t.Fatalf("fates %v", got)
	}
	if got := supTitles(out.CarryForward); !slices.Equal(got, []string{"Stop: the store corrupts data", "Write out/b.txt"}) {
		t.Fatalf("carry-forward %q: want the normal functional directive first", got)
	}
}

// supPendingCleanup counts the cleanup directives no task addresses yet.
func supPendingCleanup(s runstate.State) int {
	n := 0
	for _, d := range s.PendingDirectives {
		if d.Type == runstate.DirCleanup && d.TaskID == "" {
			n++
		}
	}
	return n
}
