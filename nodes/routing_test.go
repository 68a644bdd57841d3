package nodes

import (
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/supervisors"
)

func TestRoutingFollowsTheDesignTopology(t *testing.T) {
	t.Parallel()
	set := DefaultSettings()
	set.Supervisors.Enabled = false
	withSup := DefaultSettings()
	task := func(retries int) *Task { return &Task{ID: "t1", Retries: retries} }

	cases := []struct {
		name string
		got  string
		want string
	}{
		{"scope with milestones goes to the planner", routeAfterScope(WorkflowState{Milestones: []Milestone{{ID: "m1"}}}, set), NodePlanner},
		{"scope without milestones ends with a report", routeAfterScope(WorkflowState{}, set), NodeReport},
		{"a re-plan is a design trigger: supervisors first", routeAfterScope(WorkflowState{Phase: PhaseExecute, Milestones: []Milestone{{ID: "m1"}}, PendingTriggers: []string{supervisors.TriggerScopeReplan}}, withSup), NodeSupervisors},
		{"planner implement goes to the implementor", routeAfterPlanner(WorkflowState{PlannerDecision: DecisionImplement}, set), NodeImplementor},
		{"planner skip goes to mark_complete", routeAfterPlanner(WorkflowState{PlannerDecision: DecisionSkip}, set), NodeComplete},
		{"planner abort goes to mark_failed", routeAfterPlanner(WorkflowState{PlannerDecision: DecisionAbort}, set), NodeFailed},
		{"milestone done goes to the assessor", routeAfterPlanner(WorkflowState{PlannerDecision: DecisionMilestoneDone}, set), NodeAssessor},
		{"milestone done with supervisors due goes through them first", routeAfterPlanner(WorkflowState{Phase: PhaseExecute, PlannerDecision: DecisionMilestoneDone, PendingTriggers: []string{supervisors.TriggerMilestoneComplete}}, withSup), NodeSupervisors},
		{"a stop ends with the report", routeAfterPlanner(WorkflowState{PlannerDecision: DecisionStop}, set), NodeReport},
		{"an unknown decision never crashes: report", routeAfterPlanner(WorkflowState{PlannerDecision: "weird"}, set), NodeReport},
		{"a finished attempt goes to QA", routeAfterImplementor(WorkflowState{Implementation: &ImplResult{Status: ImplFinished}, CurrentTask: task(0)}, 3), NodeQA},
		{"a blocked attempt goes back to the planner", routeAfterImplementor(WorkflowState{Implementation: &ImplResult{Status: ImplBlocked}, CurrentTask: task(1)}, 3), NodePlanner},
		{"a looping attempt past the retries fails the task", routeAfterImplementor(WorkflowState{Implementation: &ImplResult{Status: ImplLoop}, CurrentTask: task(4)}, 3), NodeFailed},
		{"QA pass goes to mark_complete", routeAfterQA(WorkflowState{QA: &QAResult{Passed: true}, CurrentTask: task(0)}, 3), NodeComplete},
		{"QA fail goes back to the planner with feedback", routeAfterQA(WorkflowState{QA: &QAResult{}, CurrentTask: task(1)}, 3), NodePlanner},
		{"QA fail at max retries fails the task", routeAfterQA(WorkflowState{QA: &QAResult{}, CurrentTask: task(4)}, 3), NodeFailed},
		{"mark_complete continues planning", routeAfterComplete(WorkflowState{Phase: PhaseExecute}, set), NodePlanner},
		{"mark_complete with a review due goes to the assessor", routeAfterComplete(WorkflowState{Phase: PhaseExecute, ReviewReason: "interval"}, set), NodeAssessor},
		{"supervisors and review both due: supervisors first", routeAfterComplete(WorkflowState{Phase: PhaseExecute, ReviewReason: "interval", SupervisorUrgency: 1}, withSup), NodeSupervisors},
		{"supervisors then the assessor when a review is due", routeAfterSupervisors(WorkflowState{ReviewReason: "interval"}), NodeAssessor},
		{"supervisors then the planner otherwise", routeAfterSupervisors(WorkflowState{}), NodePlanner},
		{"mark_failed goes to the assessor", routeAfterFailed(WorkflowState{Phase: PhaseExecute}, set), NodeAssessor},
		{"assessor aligned goes to the planner", routeAfterAssessor(WorkflowState{Assessment: &Assessment{Verdict: "aligned"}}, set), NodePlanner},
		{"assessor major divergence re-scopes", routeAfterAssessor(WorkflowState{Assessment: &Assessment{Verdict: "major_divergence"}}, set), NodeScope},
		{"re-scoping is bounded", routeAfterAssessor(WorkflowState{ScopeRounds: 2, Assessment: &Assessment{Verdict: "major_divergence"}}, set), NodePlanner},
		{"assessor all done goes to polish", routeAfterAssessor(WorkflowState{Assessment: &Assessment{Verdict: "all_done"}}, set), NodePolish},
		{"polish with work goes to the planner", routeAfterPolish(WorkflowState{Phase: PhasePolish}), NodePlanner},
		{"polish done goes to the report", routeAfterPolish(WorkflowState{Phase: PhaseDone}), NodeReport},
		{"in polish, mark_complete never starts supervisors", routeAfterComplete(WorkflowState{Phase: PhasePolish, SupervisorUrgency: 5}, withSup), NodePlanner},
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
	for _, want := range []string{NodeScope, NodePlanner, NodeImplementor, NodeQA, NodeComplete, NodeFailed, NodeSupervisors, NodeAssessor, NodePolish, NodeReport} {
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
