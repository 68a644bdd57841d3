package nodes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// ReviewDir holds a run's pending knowledge review decisions (lemmings serve
// writes them; the run applies them at its next task boundary).
const ReviewDir = "knowledge-review"

// Review decisions a user can make on a knowledge document.
const (
	ReviewConfirm = "confirm" // → established
	ReviewReject  = "reject"  // → deprecated
)

// ReviewRequest is a user's decision on one document of a run's knowledge store.
type ReviewRequest struct {
	Path     string    `json:"path"` // relative to the knowledge dir
	Decision string    `json:"decision"`
	Reason   string    `json:"reason,omitempty"`
	At       time.Time `json:"at"`
	file     string
}

// RequestReview leaves a decision for the run in runDir; it returns the
// request file's path.
func RequestReview(runDir string, r ReviewRequest) (string, error) {
	if r.Decision != ReviewConfirm && r.Decision != ReviewReject {
		return "", fmt.Errorf("review decision %q: want %s or %s", r.Decision, ReviewConfirm, ReviewReject)
	}
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	dir, id := filepath.Join(runDir, ReviewDir), runstate.RequestID(r.At)
	return filepath.Join(dir, id+".json"), runstate.WriteRequest(dir, id, r)
}

// PendingReviews lists the decisions waiting in runDir, oldest first. A
// request file that does not parse is set aside and returned as an error
// naming it.
func PendingReviews(runDir string) ([]ReviewRequest, error) {
	return runstate.ReadRequests(filepath.Join(runDir, ReviewDir),
		func(r *ReviewRequest) bool { return r.Path != "" },
		func(r *ReviewRequest, p string) { r.file = p })
}

// ApplyReviews applies the pending decisions of runDir to the knowledge store
// of the worktree and commits them on the run's branch, one commit for all.
// The worktree must have no work in progress (a task boundary). Applied
// requests are removed only after the commit, so a crash in between applies
// them again, which changes nothing.
func ApplyReviews(ctx context.Context, wt *workspace.Worktree, knowledgeDir, runDir, runID string) ([]ReviewRequest, error) {
	reqs, rerr := PendingReviews(runDir)
	if len(reqs) == 0 {
		return nil, rerr
	}
	store, _, err := knowledge.Open(filepath.Join(wt.Dir(), knowledgeDir))
	if err != nil {
		return nil, err
	}
	var done []ReviewRequest
	var lines []string
	var errs []error
	for _, r := range reqs {
		status, verb := knowledge.Established, "confirmed"
		if r.Decision == ReviewReject {
			status, verb = knowledge.Deprecated, "rejected"
		}
		reason := "confirmed by the user"
		if r.Decision == ReviewReject {
			reason = "rejected by the user"
		}
		if strings.TrimSpace(r.Reason) != "" {
			reason += ": " + r.Reason
		}
		if err := clearReviewFlag(store, r); err != nil {
			errs = append(errs, fmt.Errorf("review of %s: %w", r.Path, err))
			continue
		}
		if err := store.SetStatus(r.Path, status, knowledge.User, reason); err != nil {
			errs = append(errs, fmt.Errorf("review of %s: %w", r.Path, err))
			_ = os.Remove(r.file) // a decision that can never apply is dropped, and said so
			continue
		}
		done = append(done, r)
		lines = append(lines, verb+" "+r.Path)
	}
	if len(done) > 0 {
		_, err := wt.Commit(ctx, "knowledge: user "+strings.Join(lines, ", "), map[string]string{TrailerRun: runID})
		if err != nil && !errors.Is(err, workspace.ErrNothingToCommit) {
			return nil, errors.Join(append(errs, fmt.Errorf("commit knowledge review: %w", err))...)
		}
		for _, r := range done {
			_ = os.Remove(r.file)
		}
	}
	return done, errors.Join(append(errs, rerr)...)
}

// NeedsReviewMark starts the sentence the Internaliser adds to the rationale
// of an item it flags needs_user_review.
const NeedsReviewMark = "Needs user review"

// clearReviewFlag takes the needs-review sentence out of a confirmed doc's
// rationale (the user has reviewed it), so it leaves the review queue even
// when its status does not change.
func clearReviewFlag(store *knowledge.Store, r ReviewRequest) error {
	doc, ok := store.Get(r.Path)
	if !ok || r.Decision != ReviewConfirm {
		return nil
	}
	i := strings.Index(doc.Rationale, NeedsReviewMark)
	if i < 0 {
		return nil
	}
	rest := doc.Rationale[i:]
	end := strings.Index(rest, ". ")
	if end < 0 {
		end = len(rest)
	} else {
		end += 2
	}
	doc.Rationale = strings.TrimSpace(doc.Rationale[:i] + rest[end:])
	if doc.Rationale == "" {
		doc.Rationale = "Confirmed by the user."
	}
	return store.Write(knowledge.User, doc, "", "")
}

// applyReviews runs ApplyReviews at a task boundary of the workflow.
func (d steering) applyReviews(ctx context.Context, s *runstate.State) {
	if d.RunDir == "" || d.Work == nil || s.CurrentTask != nil {
		return
	}
	done, err := ApplyReviews(ctx, d.Work, d.Settings.KnowledgeDir, d.RunDir, s.RunID)
	for _, r := range done {
		events.Emit(ctx, events.KnowledgeReviewed{Doc: r.Path, Decision: r.Decision, Reason: r.Reason})
	}
	if err != nil {
		events.Emit(ctx, events.Warning{Message: err.Error()})
	}
}
