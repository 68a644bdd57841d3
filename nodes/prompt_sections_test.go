package nodes

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
)

// A long run must not grow the planner's prompt without bound: the oldest
// history goes first, the task, the directives and the instructions never.
func TestPlannerPromptStaysWithinBudgetAsTheRunGrows(t *testing.T) {
	t.Parallel()
	c, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	s := runstate.State{Remit: "grow", Milestones: []runstate.Milestone{{ID: "m1", Goal: "many tasks", Status: runstate.MilestoneActive}},
		PendingDirectives: []runstate.Directive{{ID: "d7", Type: runstate.DirCleanup, Priority: runstate.PrioLow, Source: prompts.CodeStyle, Description: "rename the helpers"}}}
	for i := 1; i <= 400; i++ {
		s.DoneList = append(s.DoneList, runstate.DoneEntry{TaskID: fmt.Sprintf("t%d", i), Milestone: "m1", Title: fmt.Sprintf("task number %d", i),
			Summary: strings.Repeat("changed things carefully ", 8), QA: "passed", Files: []string{"a.go", "b.go"}, At: time.Now()})
	}
	instr, err := c.Render(runstate.NodePlanner, "instructions", plannerData{MilestoneID: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	budget := DefaultSettings().Budget(runstate.NodePlanner)
	p, err := c.Compose(runstate.NodePlanner, plannerData{}, budget,
		projectContextSection(&s),
		llm.Section{Title: prompts.SecProjectKnowledge, Body: "(none)", Priority: prompts.PrioKnowledge},
		milestoneSection(&s), directivesSection(orderedDirectives(s.PendingDirectives, false)), completedSection(&s),
		llm.Section{Title: prompts.SecInstructions, Body: instr, Required: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Tokens > budget {
		t.Errorf("prompt is %d tokens, budget %d", p.Tokens, budget)
	}
	if len(p.Dropped) == 0 {
		t.Error("nothing was dropped or cut from a 400-task history")
	}
	user := p.Messages[len(p.Messages)-1].Content
	for _, must := range []string{"rename the helpers", "Each directive MUST be addressed", "Milestone m1", "t400"} {
		if !strings.Contains(user, must) {
			t.Errorf("the packed prompt lost %q", must)
		}
	}
	if strings.Contains(user, "- t1 [") {
		t.Error("the oldest task survived packing while newer ones were cut")
	}
}

func TestLimitsStopTheRunBeforeNewWork(t *testing.T) {
	t.Parallel()
	d := &Deps{Settings: DefaultSettings()}
	d.Settings.MaxTasks = 3
	now := time.Now()
	if r := planningOf(d).stopReason(&runstate.State{TasksCompleted: 2, TasksFailed: 1}, now); r.Kind != runstate.StopLimit || r.Key != "limits.max_tasks" || !strings.Contains(r.Reason, "max_tasks") {
		t.Errorf("max tasks: %+v", r)
	}
	if r := planningOf(d).stopReason(&runstate.State{TasksCompleted: 2, TasksFailed: 1, CurrentTask: &runstate.Task{}}, now); !r.IsZero() {
		t.Errorf("a task in progress finishes before the limit applies: %+v", r)
	}
	if r := planningOf(d).stopReason(&runstate.State{StartedAt: now.Add(-5 * time.Hour)}, now); r.Kind != runstate.StopLimit || r.Key != "limits.max_wall_time" {
		t.Errorf("wall time: %+v", r)
	}
	if r := planningOf(d).stopReason(&runstate.State{ConsecutiveFailures: 3}, now); r.Kind != runstate.StopFailure || !strings.Contains(r.Reason, "in a row") {
		t.Errorf("circuit breaker: %+v", r)
	}
	if r := planningOf(d).stopReason(&runstate.State{}, now); !r.IsZero() {
		t.Errorf("a fresh run must not stop: %+v", r)
	}
}
