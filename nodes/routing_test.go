package nodes

import (
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

func TestRoutingFollowsTheDesignTopology(t *testing.T) {
	t.Parallel()
	set := DefaultSettings()
	set.Supervisors.Enabled = false
	withSup := DefaultSettings()
	task := func(retries int) *runstate.Task { return &runstate.Task{ID: "t1", Retries: retries} }

	cases := []struct {
		name string
		got  string
		want string
	}{
		{"scope with milestones goes to the planner", routeAfterScope(runstate.State{Milestones: []runstate.Milestone{{ID: "m1"}}}, set), runstate.NodePlanner},
		{"scope without milestones ends with a report", routeAfterScope(runstate.State{}, set), runstate.NodeReport},
		{"a re-plan is a design trigger: supervisors first", routeAfterScope(runstate.State{Phase: runstate.PhaseExecute, Milestones: []runstate.Milestone{{ID: "m1"}}, PendingTriggers: []string{supervisors.TriggerScopeReplan}}, withSup), runstate.NodeSupervisors},
		{"planner implement goes to the implementor", routeAfterPlanner(runstate.State{PlannerDecision: DecisionImplement}, set), runstate.NodeImplementor},
		{"planner skip goes to mark_complete", routeAfterPlanner(runstate.State{PlannerDecision: DecisionSkip}, set), runstate.NodeComplete},
		{"planner abort goes to mark_failed", routeAfterPlanner(runstate.State{PlannerDecision: DecisionAbort}, set), runstate.NodeFailed},
		{"milestone done goes to the assessor", routeAfterPlanner(runstate.State{PlannerDecision: DecisionMilestoneDone}, set), runstate.NodeAssessor},
		{"milestone done with supervisors due goes through them first", routeAfterPlanner(runstate.State{Phase: runstate.PhaseExecute, PlannerDecision: DecisionMilestoneDone, PendingTriggers: []string{supervisors.TriggerMilestoneComplete}}, withSup), runstate.NodeSupervisors},
		{"a stop ends with the report", routeAfterPlanner(runstate.State{PlannerDecision: DecisionStop}, set), runstate.NodeReport},
		{"an unknown decision never crashes: report", routeAfterPlanner(runstate.State{PlannerDecision: "weird"}, set), runstate.NodeReport},
		{"a finished attempt goes to QA", routeAfterImplementor(runstate.State{Implementation: &runstate.ImplResult{Status: runstate.ImplFinished}, CurrentTask: task(0)}, 3), runstate.NodeQA},
		{"a blocked attempt goes back to the planner", routeAfterImplementor(runstate.State{Implementation: &runstate.ImplResult{Status: runstate.ImplBlocked}, CurrentTask: task(1)}, 3), runstate.NodePlanner},
		{"a looping attempt past the retries fails the task", routeAfterImplementor(runstate.State{Implementation: &runstate.ImplResult{Status: runstate.ImplLoop}, CurrentTask: task(4)}, 3), runstate.NodeFailed},
		{"QA pass goes to mark_complete", routeAfterQA(runstate.State{QA: &runstate.QAResult{Passed: true}, CurrentTask: task(0)}, 3), runstate.NodeComplete},
		{"QA fail goes back to the planner with feedback", routeAfterQA(runstate.State{QA: &runstate.QAResult{}, CurrentTask: task(1)}, 3), runstate.NodePlanner},
		{"QA fail at max retries fails the task", routeAfterQA(runstate.State{QA: &runstate.QAResult{}, CurrentTask: task(4)}, 3), runstate.NodeFailed},
		{"mark_complete continues planning", routeAfterComplete(runstate.State{Phase: runstate.PhaseExecute}, set), runstate.NodePlanner},
		{"mark_complete with a review due goes to the assessor", routeAfterComplete(runstate.State{Phase: runstate.PhaseExecute, ReviewReason: "interval"}, set), runstate.NodeAssessor},
		{"supervisors and review both due: supervisors first", routeAfterComplete(runstate.State{Phase: runstate.PhaseExecute, ReviewReason: "interval", SupervisorUrgency: 1}, withSup), runstate.NodeSupervisors},
		{"supervisors then the assessor when a review is due", routeAfterSupervisors(runstate.State{ReviewReason: "interval"}), runstate.NodeAssessor},
		{"supervisors then the planner otherwise", routeAfterSupervisors(runstate.State{}), runstate.NodePlanner},
		{"mark_failed goes to the assessor", routeAfterFailed(runstate.State{Phase: runstate.PhaseExecute}, set), runstate.NodeAssessor},
		{"assessor aligned goes to the planner", routeAfterAssessor(runstate.State{Assessment: &runstate.Assessment{Verdict: "aligned"}}, set), runstate.NodePlanner},
		{"assessor major divergence re-scopes", routeAfterAssessor(runstate.State{Assessment: &runstate.Assessment{Verdict: "major_divergence"}}, set), runstate.NodeScope},
		{"re-scoping is bounded", routeAfterAssessor(runstate.State{ScopeRounds: 2, Assessment: &runstate.Assessment{Verdict: "major_divergence"}}, set), runstate.NodePlanner},
		{"assessor all done goes to polish", routeAfterAssessor(runstate.State{Assessment: &runstate.Assessment{Verdict: "all_done"}}, set), runstate.NodePolish},
		{"polish with work goes to the planner", routeAfterPolish(runstate.State{Phase: runstate.PhasePolish}), runstate.NodePlanner},
		{"polish done goes to the report", routeAfterPolish(runstate.State{Phase: runstate.PhaseDone}), runstate.NodeReport},
		{"in polish, mark_complete never starts supervisors", routeAfterComplete(runstate.State{Phase: runstate.PhasePolish, SupervisorUrgency: 5}, withSup), runstate.NodePlanner},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, c.got, c.want)
		}
	}
}

func TestTheCompiledGraphHasEveryNodeAndNoDeadEnd(t *testing.T) {
	t.Parallel()
	app, err := Build(&Deps{Settings: DefaultSettings()}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, n := range app.Nodes() {
		nodes[n] = true
	}
	for _, want := range []string{runstate.NodeScope, runstate.NodePlanner, runstate.NodeImplementor, runstate.NodeQA, runstate.NodeComplete, runstate.NodeFailed, runstate.NodeSupervisors, runstate.NodeAssessor, runstate.NodePolish, runstate.NodeReport} {
		if !nodes[want] {
			t.Errorf("graph lacks %s", want)
		}
	}
}

func TestJudgeCriteriaNeedsEveryCriterionMet(t *testing.T) {
	t.Parallel()
	crit := []string{"adds TopWords", "tests it"}
	if _, ok := judgeCriteria(crit, []criterionVerdict{{Criterion: "adds TopWords", Met: true}, {Criterion: "tests it", Met: true}}); !ok {
		t.Error("all met should pass")
	}
	if _, ok := judgeCriteria(crit, []criterionVerdict{{Criterion: "adds TopWords", Met: true}}); ok {
		t.Error("a criterion the reviewer did not assess must not pass")
	}
	res, ok := judgeCriteria(crit, []criterionVerdict{{Criterion: "Adds  topwords", Met: true}, {Criterion: "tests it", Met: false, Evidence: "no test file"}})
	if ok || res[1].Evidence != "no test file" {
		t.Errorf("one unmet criterion must fail with its evidence: %v %v", ok, res)
	}
	if _, ok := judgeCriteria(nil, nil); ok {
		t.Error("a task without criteria cannot pass review")
	}
}
