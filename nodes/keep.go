package nodes

// A task whose attempts are spent is not thrown away when one of them passed
// its gates and only a local reviewer said no: that attempt's change is
// committed flagged "review disputed" (as a dispute with no cloud review is),
// with a warning in the report, so the branch keeps the best the model did
// rather than the start. A later attempt replaced it only by passing QA.

import (
	"context"
	"fmt"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
)

// keepPassing commits the task's passing attempt flagged, when it has one;
// kept says whether it did.
func (d *Deps) keepPassing(ctx context.Context, s runstate.State, reason string) (runstate.State, bool, error) {
	t := s.CurrentTask
	if t == nil || t.Passing == "" || d.Settings.QA.Disputed == DisputeRetry {
		return s, false, nil
	}
	if err := d.Work.ResetHard(ctx, t.Passing); err != nil {
		return s, false, fmt.Errorf("keep attempt %d of task %s: %w", t.PassingAttempt, t.ID, err)
	}
	why := fmt.Sprintf("attempt %d passed the gates and only the review failed it; no later attempt did better (%s)", t.PassingAttempt, textutil.ClipTrimmed(reason, 300))
	events.Emit(ctx, events.ReviewDisputed{Task: t.ID, Attempt: t.PassingAttempt, Policy: "keep"})
	s.QA = &runstate.QAResult{Passed: true, Disputed: true, Reviewer: "local", Feedback: "review disputed: " + why}
	s.Escalations = append(s.Escalations, runstate.Escalation{Kind: runstate.EscReviewDisputed, TaskID: t.ID, Attempt: t.PassingAttempt, Outcome: runstate.EscCommitted, Note: why, At: d.now()})
	s.Warnings = append(s.Warnings, fmt.Sprintf("task %s committed with its review disputed: %s", t.ID, why))
	events.Emit(ctx, events.QA{Task: t.ID, Passed: true, Disputed: true})
	s.PlannerDecision = DecisionImplement // not a skip: the change is committed
	out, err := d.MarkComplete(ctx, s)
	return out, err == nil, err
}
