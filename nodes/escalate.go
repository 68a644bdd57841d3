package nodes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

// LabelCloudReview is the label the cloud review's calls are accounted under
// (the architect's are prompts.Architect).
const LabelCloudReview = "qa_cloud"

// cloudAvailable says whether a task may get cloud help now: supervisors on
// (which offline turns off) and budget left. Offline runs never escalate.
func cloudAvailable(sup supervisors.Settings, jobs *supervisors.Jobs, s *runstate.State) bool {
	return sup.Enabled && jobs != nil && budgetLeft(s, sup)
}

func budgetLeft(s *runstate.State, sup supervisors.Settings) bool {
	return sup.BudgetUSD > 0 && s.SupervisorSpendUSD < sup.BudgetUSD
}

// markDisputed flags an attempt whose diff the review already failed with the
// gates passing: QA then resolves the dispute instead of calling it a loop.
func (d *Deps) markDisputed(t *runstate.Task, diffHash string) {
	t.Disputed = d.Settings.QA.Disputed != DisputeRetry && diffHash != "" && slices.Contains(t.ReviewFailedHashes, diffHash)
}

// resolveDispute handles an attempt whose gates passed and whose diff the
// review already failed once: the cloud reviewer decides (qa.disputed:
// escalate, when available), or the work is committed flagged "review
// disputed". Passing work is never silently thrown away.
func (d *Deps) resolveDispute(ctx context.Context, s runstate.State, diff, code string) (runstate.State, error) {
	t, qa := s.CurrentTask, s.QA
	events.Emit(ctx, events.ReviewDisputed{Task: t.ID, Attempt: t.Attempt, Policy: d.Settings.QA.Disputed})
	if d.Settings.QA.Disputed == DisputeRetry {
		return qaFailed(ctx, s, "The attempt repeats a change the review already failed."), nil
	}
	note := ""
	if d.Settings.QA.Disputed == DisputeEscalate && !t.CloudReviewed {
		if !cloudAvailable(d.Settings.Supervisors, d.Supervisors, &s) {
			note = "no cloud review: supervisors off, offline, or the budget is spent"
		} else {
			t.CloudReviewed = true
			reply, resp, err := d.review(ctx, &s, filterDiff(diff, d.Settings.denied), changedCode(diff, tasksOf(d).readWorkFile, d.Settings.denied), supervisors.Role, LabelCloudReview)
			esc := escalation(runstate.EscCloudReview, t, resp, d.now())
			if err != nil {
				if ctx.Err() != nil {
					return s, ctx.Err()
				}
				esc.Outcome, esc.Note = runstate.EscCallFailed, textutil.ClipTrimmed(err.Error(), 300)
				s.Escalations = append(s.Escalations, esc)
				note = "the cloud review failed: " + textutil.ClipTrimmed(err.Error(), 200)
			} else {
				qa.Reviewer = "cloud"
				qa.Criteria, qa.Passed = judgeReview(t.AcceptanceCriteria, reply.Criteria, reviewEvidence{change: diff + "\n" + code, gates: qa.Gates, requireQuotes: d.Settings.QA.RequireQuotes})
				events.Emit(ctx, events.Escalation{EscKind: runstate.EscCloudReview, Task: t.ID, Passed: &qa.Passed, CostUSD: esc.CostUSD})
				if qa.Passed {
					esc.Outcome = runstate.EscPassed
					s.Escalations = append(s.Escalations, esc)
					events.Emit(ctx, events.QA{Task: t.ID, Passed: true, Reviewer: "cloud"})
					return s, nil
				}
				esc.Outcome = runstate.EscFailed
				s.Escalations = append(s.Escalations, esc)
				// The cloud agrees with the local review: the same diff again is a loop.
				if s.Implementation != nil {
					h := s.Implementation.DiffHash
					t.ReviewFailedHashes = slices.DeleteFunc(slices.Clone(t.ReviewFailedHashes), func(x string) bool { return x == h })
				}
				return qaFailed(ctx, s, strings.TrimSpace("The cloud reviewer confirmed the review: acceptance criteria not met:\n"+unmetFeedback(qa.Criteria)+"\n"+reply.Feedback)), nil
			}
		}
	}
	qa.Passed, qa.Disputed = true, true
	why := fmt.Sprintf("the gates passed and the review failed the same diff twice (attempt %d)", t.Attempt)
	if note != "" {
		why += "; " + note
	}
	qa.Feedback = "review disputed: " + why
	s.Escalations = append(s.Escalations, runstate.Escalation{Kind: runstate.EscReviewDisputed, TaskID: t.ID, Attempt: t.Attempt, Outcome: runstate.EscCommitted, Note: why, At: d.now()})
	s.Warnings = append(s.Warnings, fmt.Sprintf("task %s committed with its review disputed: %s", t.ID, why))
	events.Emit(ctx, events.QA{Task: t.ID, Passed: true, Disputed: true})
	return s, nil
}

func escalation(kind string, t *runstate.Task, resp llm.Response, at time.Time) runstate.Escalation {
	return runstate.Escalation{Kind: kind, TaskID: t.ID, Attempt: t.Attempt, PromptTokens: resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens, CostUSD: resp.Usage.CostUSD, At: at}
}

// filterDiff drops the files a cloud model must never see from a unified diff.
func filterDiff(diff string, denied func(string) bool) string {
	var b strings.Builder
	keep := true
	for _, l := range strings.SplitAfter(diff, "\n") {
		if rest, ok := strings.CutPrefix(l, "diff --git "); ok {
			keep = true
			for _, f := range strings.Fields(rest) {
				f = strings.TrimPrefix(strings.TrimPrefix(f, "a/"), "b/")
				if denied(f) {
					keep = false
				}
			}
			if !keep {
				fmt.Fprintf(&b, "(a change to %s is not shown: the file never leaves this machine)\n", strings.TrimPrefix(strings.Fields(rest)[0], "a/"))
			}
		}
		if keep {
			b.WriteString(l)
		}
	}
	return b.String()
}
