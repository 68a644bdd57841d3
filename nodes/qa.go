package nodes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/sandbox"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

// qaRun is what QA's gates use: the work tree, the gates, the sandbox that
// confines them and the settings that bound their output.
type qaRun struct {
	Work     *workspace.Worktree
	Gates    []workspace.Gate
	Sandbox  *sandbox.Box
	Settings Settings
}

func qaRunOf(d *Deps) qaRun {
	return qaRun{Work: d.Work, Gates: d.Gates, Sandbox: d.Sandbox, Settings: d.Settings}
}

// qaGates runs the gates, or takes the results of the implementor's own run
// when they all passed on exactly the tree QA judges (same diff hash).
func (d qaRun) qaGates(ctx context.Context, impl *runstate.ImplResult) []workspace.GateResult {
	if impl != nil && impl.GatesDiffHash != "" && impl.GatesDiffHash == impl.DiffHash && len(impl.Gates) == len(d.Gates) {
		out := make([]workspace.GateResult, 0, len(impl.Gates))
		for i, g := range impl.Gates {
			if !g.Passed || g.Name != d.Gates[i].Name || g.Command != d.Gates[i].Command {
				return workspace.RunGates(ctx, d.Sandbox, d.Work.Dir(), d.Gates, d.Settings.GateOutputBytes)
			}
			out = append(out, workspace.GateResult{Name: g.Name, Command: g.Command, Passed: true, Duration: g.Duration, Output: g.Output})
		}
		events.Emit(ctx, events.GatesReused{DiffHash: impl.DiffHash})
		return out
	}
	return workspace.RunGates(ctx, d.Sandbox, d.Work.Dir(), d.Gates, d.Settings.GateOutputBytes)
}

// QA judges one attempt. The orchestrator runs the gates itself; only when
// they pass does a model review the change against each acceptance
// criterion, quoting the change as evidence. Workers never judge themselves.
func (d *Deps) QA(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	t := s.CurrentTask
	if t == nil {
		return s, errors.New("qa: no current task")
	}
	qa := &runstate.QAResult{}
	s.QA = qa
	results := qaRunOf(d).qaGates(ctx, s.Implementation)
	if err := ctx.Err(); err != nil {
		return s, err
	}
	for _, r := range results {
		qa.Gates = append(qa.Gates, runstate.GateOutcome{Name: r.Name, Command: r.Command, Passed: r.Passed, ExitCode: r.ExitCode, TimedOut: r.TimedOut, Duration: r.Duration, Output: r.Output})
		events.Emit(ctx, events.Gate{Task: t.ID, Gate: r.Name, Passed: r.Passed, ExitCode: r.ExitCode, MS: r.Duration.Milliseconds()})
		if !r.Passed {
			return qaFailed(ctx, s, r.Failure()), nil
		}
	}
	diff, err := d.Work.Diff(ctx, t.StartCommit)
	if sf := (*workspace.SpecialFileError)(nil); errors.As(err, &sf) && ctx.Err() == nil {
		// A gate left a FIFO or a device where a file was: the attempt
		// fails, named; the next one starts from its base without it.
		return qaFailed(ctx, s, "The attempt failed because "+sf.Error()+"."), nil
	}
	if err != nil {
		return s, fmt.Errorf("qa: diff: %w", err)
	}
	if strings.TrimSpace(diff) == "" {
		return qaFailed(ctx, s, "The attempt changed no file. Make the change the task asks for, or answer blocked if it cannot be done."), nil
	}

	code := changedCode(diff, tasksOf(d).readWorkFile, nil)
	if t.Disputed {
		t.Disputed = false
		return d.resolveDispute(ctx, s, diff, code)
	}
	ev := reviewEvidence{change: diff + "\n" + code, added: addedText(diff), gates: qa.Gates, requireQuotes: d.Settings.QA.RequireQuotes}
	if checkedWithoutModel(t.AcceptanceCriteria, ev) {
		// The gates and lemmings' own checks cover every criterion: they
		// are the verdict, and no model is asked.
		qa.Reviewer = "checks"
		if qa.Criteria, qa.Passed = judgeReview(t.AcceptanceCriteria, nil, ev); !qa.Passed {
			return qaFailed(ctx, s, "Acceptance criteria not met:\n"+unmetFeedback(qa.Criteria)), nil
		}
		events.Emit(ctx, events.QA{Task: t.ID, Passed: true, By: "checks"})
		return s, nil
	}
	if impl := s.Implementation; impl != nil && impl.Evidence != "" {
		if crit, ok := evidenceDecides(t.AcceptanceCriteria, ev, impl.Evidence, diff); ok {
			// A test the attempt added fails without the change and passes
			// with it: the evidence a local reviewer's word would only
			// second-guess (Qwen2.5-Coder-1.5B rejected a right fix).
			qa.Reviewer, qa.Criteria, qa.Passed = "evidence", crit, allMet(crit)
			if !qa.Passed {
				return qaFailed(ctx, s, "Acceptance criteria not met:\n"+unmetFeedback(qa.Criteria)), nil
			}
			events.Emit(ctx, events.QA{Task: t.ID, Passed: true, By: "evidence"})
			return s, nil
		}
	}
	reply, _, err := d.review(ctx, &s, diff, code, RolePrimary, runstate.NodeQA)
	if err != nil {
		if !llm.ModelFault(err) {
			return s, err
		}
		return qaFailed(ctx, s, "The review could not be completed (the reviewer's answer was unusable): "+err.Error()), nil
	}
	qa.Reviewer = "local"
	qa.Criteria, qa.Passed = judgeReview(t.AcceptanceCriteria, reply.Criteria, ev)
	if !qa.Passed && startTestsDecide(t, qa.Criteria, diff) {
		qa.Passed = allMet(qa.Criteria)
	}
	if !qa.Passed {
		// The gates passed: if the next attempt brings this same diff back,
		// the review is disputed rather than the work thrown away as a loop.
		if s.Implementation != nil && s.Implementation.DiffHash != "" {
			t.ReviewFailedHashes = append(slices.Clone(t.ReviewFailedHashes), s.Implementation.DiffHash)
		}
		if s.Implementation != nil && s.Implementation.Commit != "" && t.Passing == "" {
			t.Passing, t.PassingAttempt = s.Implementation.Commit, t.Attempt
		}
		fb := strings.TrimSpace(reply.Feedback)
		return qaFailed(ctx, s, strings.TrimSpace("Acceptance criteria not met:\n"+unmetFeedback(qa.Criteria)+"\n"+fb)), nil
	}
	events.Emit(ctx, events.QA{Task: t.ID, Passed: true})
	return s, nil
}

// review asks a model (the local primary, or the cloud for a disputed
// review) to judge the change against each acceptance criterion, seeing the
// changed functions whole as well as the diff.
func (d *Deps) review(ctx context.Context, s *runstate.State, diff, code, role, label string) (qaReply, llm.Response, error) {
	t := s.CurrentTask
	var crit strings.Builder
	for i, c := range t.AcceptanceCriteria {
		fmt.Fprintf(&crit, "%d. %s\n", i+1, c)
	}
	sections := []llm.Section{
		{Title: prompts.SecTask, Body: t.ID + ": " + t.Title + "\n" + t.Instructions, Required: true},
		{Title: prompts.SecCriteria, Body: strings.TrimSpace(crit.String()), Required: true},
		{Title: prompts.SecGates, Body: gateSummary(s.QA.Gates), Priority: prompts.PrioOverview},
		{Title: prompts.SecDiff, Body: diff, Priority: prompts.PrioContext + 1},
	}
	if code != "" {
		sections = append(sections, llm.Section{Title: prompts.SecChangedCode, Body: code, Priority: prompts.PrioContext})
	}
	// The template is the QA one; the label keeps cloud reviews apart in the accounting.
	reply := min(256+200*len(t.AcceptanceCriteria), 2048) // a verdict per criterion, and feedback
	req, err := d.compose(ctx, call{Label: runstate.NodeQA, Role: role, Sections: sections, State: s, Reply: reply})
	if err != nil {
		return qaReply{}, llm.Response{}, err
	}
	req.Label = label
	out, resp, err := llm.Structured[qaReply](ctx, d.Model, req)
	account(ctx, s, d.Settings.Supervisors, label, role, resp)
	if err != nil {
		emitModelError(ctx, events.ModelError{Label: label, Error: err.Error()})
		return out, resp, fmt.Errorf("%s: %w", label, err)
	}
	emitCall(ctx, label, resp)
	return out, resp, nil
}

// readWorkFile reads a file of the work tree as text.
func (d taskWork) readWorkFile(p string) (string, error) {
	b, err := d.Work.FS().ReadFile(p)
	return string(b), err
}

func qaFailed(ctx context.Context, s runstate.State, feedback string) runstate.State {
	t := s.CurrentTask
	s.QA.Passed = false
	s.QA.Feedback = feedback
	t.Retries++
	t.Feedback = feedback
	happen(&s, runstate.HappenedQAFailed)
	events.Emit(ctx, events.QA{Task: t.ID, Passed: false, Attempt: t.Attempt, Feedback: textutil.ClipTrimmed(feedback, 300)})
	return s
}

func gateSummary(gs []runstate.GateOutcome) string {
	if len(gs) == 0 {
		return "(no gates)"
	}
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "- %s (%s): passed\n", g.Name, g.Command)
	}
	return strings.TrimSpace(b.String())
}
