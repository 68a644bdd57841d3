package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

type qaData struct{}

// qaGates runs the gates, or takes the results of the implementor's own run
// when they all passed on exactly the tree QA judges (same diff hash).
func (d *Deps) qaGates(ctx context.Context, impl *ImplResult) []workspace.GateResult {
	if impl != nil && impl.GatesDiffHash != "" && impl.GatesDiffHash == impl.DiffHash && len(impl.Gates) == len(d.Gates) {
		out := make([]workspace.GateResult, 0, len(impl.Gates))
		for i, g := range impl.Gates {
			if !g.Passed || g.Name != d.Gates[i].Name || g.Command != d.Gates[i].Command {
				return workspace.RunGates(ctx, d.Work.Dir(), d.Gates, d.Settings.GateOutputBytes)
			}
			out = append(out, workspace.GateResult{Name: g.Name, Command: g.Command, Passed: true, Duration: g.Duration, Output: g.Output})
		}
		graph.Emit(ctx, "gates_reused", map[string]any{"diff_hash": impl.DiffHash})
		return out
	}
	return workspace.RunGates(ctx, d.Work.Dir(), d.Gates, d.Settings.GateOutputBytes)
}

// QA judges one attempt. The orchestrator runs the gates itself; only when
// they pass does a model review the diff against each acceptance criterion.
// Workers never judge themselves.
func (d *Deps) QA(ctx context.Context, in WorkflowState) (WorkflowState, error) {
	s := in.Clone()
	t := s.CurrentTask
	if t == nil {
		return s, errors.New("qa: no current task")
	}
	qa := &QAResult{}
	s.QA = qa
	results := d.qaGates(ctx, s.Implementation)
	if err := ctx.Err(); err != nil {
		return s, err
	}
	for _, r := range results {
		qa.Gates = append(qa.Gates, GateOutcome{Name: r.Name, Command: r.Command, Passed: r.Passed, ExitCode: r.ExitCode, TimedOut: r.TimedOut, Duration: r.Duration, Output: r.Output})
		graph.Emit(ctx, "gate", map[string]any{"task": t.ID, "gate": r.Name, "passed": r.Passed, "exit_code": r.ExitCode, "ms": r.Duration.Milliseconds()})
		if !r.Passed {
			how := fmt.Sprintf("exit code %d", r.ExitCode)
			if r.TimedOut {
				how = "timed out"
			}
			return d.qaFailed(ctx, s, fmt.Sprintf("Gate %q (%s) failed, %s. Output (tail):\n%s", r.Name, r.Command, how, r.Output)), nil
		}
	}
	diff, err := d.Work.Diff(ctx, t.StartCommit)
	if err != nil {
		return s, fmt.Errorf("qa: diff: %w", err)
	}
	if strings.TrimSpace(diff) == "" {
		return d.qaFailed(ctx, s, "The attempt changed no file. Make the change the task asks for, or answer blocked if it cannot be done."), nil
	}

	var crit strings.Builder
	for i, c := range t.AcceptanceCriteria {
		fmt.Fprintf(&crit, "%d. %s\n", i+1, c)
	}
	instr, err := d.instructionsSection(NodeQA, qaData{})
	if err != nil {
		return s, err
	}
	sections := []llm.Section{
		{Title: "TASK", Body: t.ID + ": " + t.Title + "\n" + t.Instructions, Required: true},
		{Title: "ACCEPTANCE CRITERIA", Body: strings.TrimSpace(crit.String()), Required: true},
		{Title: "GATES", Body: gateSummary(qa.Gates), Priority: prioOverview},
		{Title: "DIFF", Body: diff, Priority: prioContext},
		instr,
	}
	reply, _, err := ask[qaReply](ctx, d, &s, call{Label: NodeQA, Data: qaData{}, Sections: sections})
	if err != nil {
		if !modelFault(err) {
			return s, err
		}
		return d.qaFailed(ctx, s, "The review could not be completed (the reviewer's answer was unusable): "+err.Error()), nil
	}
	qa.Criteria, qa.Passed = judgeCriteria(t.AcceptanceCriteria, reply.Criteria)
	if !qa.Passed {
		fb := strings.TrimSpace(reply.Feedback)
		var unmet []string
		for _, c := range qa.Criteria {
			if !c.Met {
				unmet = append(unmet, "- "+c.Criterion+": "+c.Evidence)
			}
		}
		return d.qaFailed(ctx, s, strings.TrimSpace("Acceptance criteria not met:\n"+strings.Join(unmet, "\n")+"\n"+fb)), nil
	}
	graph.Emit(ctx, "qa", map[string]any{"task": t.ID, "passed": true})
	return s, nil
}

// judgeCriteria matches the reviewer's verdicts to the task's criteria: a
// criterion the reviewer did not mention is not met.
func judgeCriteria(criteria []string, verdicts []criterionVerdict) ([]CriterionResult, bool) {
	out := make([]CriterionResult, len(criteria))
	pass := len(criteria) > 0
	for i, c := range criteria {
		out[i] = CriterionResult{Criterion: c, Evidence: "not assessed by the reviewer"}
		if v, ok := findVerdict(c, i, verdicts); ok {
			out[i].Met, out[i].Evidence = v.Met, v.Evidence
		}
		pass = pass && out[i].Met
	}
	return out, pass
}

func findVerdict(c string, i int, vs []criterionVerdict) (criterionVerdict, bool) {
	norm := func(x string) string { return strings.ToLower(strings.Join(strings.Fields(x), " ")) }
	for _, v := range vs {
		if norm(v.Criterion) == norm(c) {
			return v, true
		}
	}
	// Weak models paraphrase; fall back to position when the counts agree.
	if len(vs) > i && len(vs) >= 1 {
		return vs[i], true
	}
	return criterionVerdict{}, false
}

func (d *Deps) qaFailed(ctx context.Context, s WorkflowState, feedback string) WorkflowState {
	t := s.CurrentTask
	s.QA.Passed = false
	s.QA.Feedback = feedback
	t.Retries++
	t.Feedback = feedback
	addUrgency(&s, d.Settings.Supervisors.WeightQAFailure)
	graph.Emit(ctx, "qa", map[string]any{"task": t.ID, "passed": false, "attempt": t.Attempt, "feedback": clip(feedback, 300)})
	return s
}

func gateSummary(gs []GateOutcome) string {
	if len(gs) == 0 {
		return "(no gates)"
	}
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "- %s (%s): passed\n", g.Name, g.Command)
	}
	return strings.TrimSpace(b.String())
}
