package nodes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// The Implementor is package nodes/implementor; this is its node: the
// operator's approval, the attempt's base, the attempt with the deps it
// uses, and the attempt's record and work-in-progress commit.

// isTestFile says whether a path is a test file, and cleanFiles keeps the
// plausible repository paths of a model's list: the Implementor's, which the
// locator and the planner's targets use too.
var (
	isTestFile = implementor.IsTestFile
	cleanFiles = implementor.CleanFiles
)

// Implementor runs one attempt at the current task: a bounded tool loop in
// which every model reply is one schema-constrained action, executed by the
// orchestrator inside the work tree. The attempt starts from its base commit
// (so a resumed run repeats it exactly) and ends in a work-in-progress commit.
func (d *Deps) Implementor(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	t := s.CurrentTask
	if t == nil {
		return s, errors.New("implementor: no current task")
	}
	if a := s.Approval; a != nil && a.Kind == "task" {
		s.Approval = nil
		if !a.Approved {
			return d.endAttempt(ctx, s, &runstate.ImplResult{Status: runstate.ImplRejected, Summary: "operator rejected the task: " + a.Reason}), nil
		}
	}
	if err := d.Work.ResetHard(ctx, t.AttemptBase); err != nil {
		return s, fmt.Errorf("implementor: reset to attempt base: %w", err)
	}
	d.recordStartTests(ctx, t)
	res, err := implementor.Attempt(ctx, d.implementorDeps(), &s, t)
	if sf := (*workspace.SpecialFileError)(nil); err != nil && ctx.Err() == nil && errors.As(err, &sf) {
		// A FIFO, socket or device where a file of the repository was (a
		// gate or the model's code made it): the attempt's failure, named;
		// the next attempt starts from its base without it.
		res, err = &runstate.ImplResult{Status: runstate.ImplError, Summary: "the attempt failed because " + sf.Error()}, nil
	}
	if err != nil {
		return s, err
	}
	return d.endAttempt(ctx, s, res), nil
}

// implementorDeps is what the Implementor uses of the workflow's deps.
func (d *Deps) implementorDeps() *implementor.Deps {
	st := d.Settings
	return &implementor.Deps{
		Work: d.Work, Model: d.Model, Prompts: implPrompts{d}, Gates: d.Gates, Sandbox: d.Sandbox, Parser: implementor.ParserFor(),
		Search: d.Search, Clock: implClock{d},
		Settings: implementor.Settings{Knobs: st.Knobs, Budget: st.Budget(runstate.NodeImplementor)},
	}
}

// implPrompts composes the Implementor's prompts as the workflow composes
// every role's, and reports its calls.
type implPrompts struct{ d *Deps }

func (p implPrompts) Compose(ctx context.Context, s *runstate.State, data any, secs []llm.Section, budget int) ([]llm.Message, error) {
	req, err := p.d.compose(ctx, call{Label: runstate.NodeImplementor, Data: data, Sections: secs, Budget: budget, State: s})
	return req.Messages, err
}

func (p implPrompts) ComposeAlone(label string, data any, budget int, secs []llm.Section) (llm.Prompt, error) {
	if label != runstate.NodeImplementor {
		return p.d.Composer.Compose(label, data, budget, secs...)
	}
	return p.d.composePrompt(label, data, budget, secs)
}

func (p implPrompts) Knowledge(ctx context.Context, s *runstate.State) llm.Section {
	return p.d.knowledgeSection(ctx, s)
}

func (implPrompts) Milestone(s *runstate.State) llm.Section { return milestoneSection(s) }
func (implPrompts) Bound(schema map[string]any)             { boundLists(schema) }
func (implPrompts) Called(ctx context.Context, label string, resp llm.Response) {
	emitCall(ctx, label, resp)
}
func (implPrompts) Failed(ctx context.Context, ev events.ModelError) { emitModelError(ctx, ev) }

// implClock is the workflow's clock and wall time.
type implClock struct{ d *Deps }

func (c implClock) Now() time.Time { return c.d.now() }
func (c implClock) WallTimeLeft(s *runstate.State, now time.Time) (time.Duration, bool) {
	return c.d.wallTimeLeft(s, now)
}
func (c implClock) WallTimeReached() string { return c.d.wallTimeReached() }

// endAttempt records the attempt, commits its work in progress and catches a
// repeated diff (the model going round in circles across attempts).
func (d *Deps) endAttempt(ctx context.Context, s runstate.State, res *runstate.ImplResult) runstate.State {
	t := s.CurrentTask
	if res.Status == runstate.ImplFinished {
		if err := d.wipCommit(ctx, t, res); err != nil {
			res.Status, res.Error = runstate.ImplError, err.Error()
			if sf := (*workspace.SpecialFileError)(nil); errors.As(err, &sf) {
				res.Summary = "the attempt failed because " + sf.Error()
			}
		}
	}
	if res.Status == runstate.ImplFinished && res.DiffHash != "" {
		d.markDisputed(t, res.DiffHash) // a diff the review failed with the gates passing: QA resolves it
		if i := slices.Index(t.DiffHashes, res.DiffHash); i >= 0 && !t.Disputed {
			res.Status = runstate.ImplLoop
			res.Summary = fmt.Sprintf("attempt %d produced the same change as attempt %d", t.Attempt, i+1)
		}
		t.DiffHashes = append(slices.Clone(t.DiffHashes), res.DiffHash)
	}
	if res.Status != runstate.ImplFinished {
		t.Retries++
		t.Feedback = fmt.Sprintf("implementor %s: %s", res.Status, res.Summary)
		if res.Question != "" {
			t.Feedback += "\nQuestion: " + res.Question
		}
	}
	s.Implementation = res
	events.Emit(ctx, events.Implementation{Task: t.ID, Attempt: t.Attempt, Status: res.Status, Actions: res.Actions, Files: res.Files,
		FixRounds: res.FixRounds, Malformed: res.Malformed, Reason: failedReason(res)})
	return s
}

func (d *Deps) wipCommit(ctx context.Context, t *runstate.Task, res *runstate.ImplResult) error {
	diff, files, err := d.Work.Changes(ctx, t.StartCommit)
	if err != nil {
		return err
	}
	res.Files = files
	if strings.TrimSpace(diff) == "" {
		return nil
	}
	res.DiffHash = workspace.DiffHash(diff)
	sha, err := d.Work.Commit(ctx, fmt.Sprintf("lemmings wip: %s attempt %d", t.ID, t.Attempt), map[string]string{"Lemmings-Wip": t.ID})
	if errors.Is(err, workspace.ErrNothingToCommit) {
		return nil // the attempt changed nothing on top of its base
	}
	if err != nil {
		return err
	}
	res.Commit = sha
	return nil
}

// failedReason is why an attempt that did not finish ended ("" when it did).
func failedReason(res *runstate.ImplResult) string {
	if res.Status == runstate.ImplFinished {
		return ""
	}
	return res.Summary
}
