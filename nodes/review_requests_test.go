package nodes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/workspace"
)

func reviewWorktree(t *testing.T) *workspace.Worktree {
	t.Helper()
	wt := testWorktree(t, t.TempDir())
	ctx := context.Background()
	store, _, _ := knowledge.Open(filepath.Join(wt.Dir(), "docs/knowledge"))
	for _, p := range []string{"conventions/a.md", "lessons/b.md"} {
		if err := store.Write(knowledge.Internaliser, &knowledge.Doc{Path: p, Title: "Doc " + p, Rules: "1. A rule."}, "t1", "m1"); err != nil && !strings.Contains(err.Error(), "may not write") {
			t.Fatal(err)
		}
	}
	if err := store.Write(knowledge.CodeStyle, &knowledge.Doc{Path: "conventions/a.md", Title: "Doc a", Rules: "1. A rule."}, "t1", "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit(ctx, "knowledge", nil); err != nil {
		t.Fatal(err)
	}
	return wt
}

func TestApplyReviewsCommitsTheDecisionsAndClearsThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wt := reviewWorktree(t)
	runDir := t.TempDir()
	if _, err := RequestReview(runDir, ReviewRequest{Path: "conventions/a.md", Decision: "maybe"}); err == nil {
		t.Fatal("an unknown decision was accepted")
	}
	for _, r := range []ReviewRequest{
		{Path: "conventions/a.md", Decision: ReviewConfirm},
		{Path: "lessons/b.md", Decision: ReviewReject, Reason: "only true for ints"},
		{Path: "lessons/gone.md", Decision: ReviewConfirm},
	} {
		if _, err := RequestReview(runDir, r); err != nil {
			t.Fatal(err)
		}
	}
	// A damaged request is named, not applied, not fatal.
	os.WriteFile(filepath.Join(runDir, ReviewDir, "0-bad.json"), []byte("{half"), 0o644)
	// A request still being written (dot name) is not read.
	os.WriteFile(filepath.Join(runDir, ReviewDir, ".1-writing.json"), []byte(`{"path":"conventions/a.md","decision":"reject"}`), 0o644)

	done, err := ApplyReviews(ctx, wt, "docs/knowledge", runDir, "r1")
	if len(done) != 2 {
		t.Fatalf("applied %d decisions, want 2 (err %v)", len(done), err)
	}
	if err == nil || !strings.Contains(err.Error(), "0-bad.json") || !strings.Contains(err.Error(), "lessons/gone.md") {
		t.Fatalf("errors should name the damaged request and the missing doc: %v", err)
	}
	store, _, _ := knowledge.Open(filepath.Join(wt.Dir(), "docs/knowledge"))
	a, _ := store.Get("conventions/a.md")
	b, _ := store.Get("lessons/b.md")
	if a.Status != knowledge.Established || b.Status != knowledge.Deprecated {
		t.Fatalf("statuses: %s, %s", a.Status, b.Status)
	}
	if last := b.Changelog[len(b.Changelog)-1]; last.Writer != knowledge.User || !strings.Contains(last.Summary, "only true for ints") {
		t.Fatalf("changelog: %+v", last)
	}
	log, _ := wt.Log(ctx, "main")
	top := log[len(log)-1]
	if top.Subject != "knowledge: user confirmed conventions/a.md, rejected lessons/b.md" || top.Trailers[TrailerRun] != "r1" {
		t.Fatalf("commit: %q %v", top.Subject, top.Trailers)
	}
	if clean, _ := wt.IsClean(ctx); !clean {
		t.Fatal("worktree not clean after the review commit")
	}
	left, _ := PendingReviews(runDir)
	if len(left) != 0 {
		t.Fatalf("requests left: %+v", left)
	}
	// Nothing pending: nothing happens.
	if done, err := ApplyReviews(ctx, wt, "docs/knowledge", runDir, "r1"); len(done) != 0 || err != nil {
		t.Fatalf("second apply: %v %v", done, err)
	}
}

func TestConfirmingAFlaggedDocClearsTheFlagEvenWhenAlreadyEstablished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wt := reviewWorktree(t)
	dir := filepath.Join(wt.Dir(), "docs/knowledge")
	store, _, _ := knowledge.Open(dir)
	doc := &knowledge.Doc{Path: "lessons/c.md", Title: "Doc c", Rules: "1. Keep it.",
		Rationale: "Captured from task t2 (confidence: low). Needs user review: an implicit decision worth confirming."}
	if err := store.Write(knowledge.Internaliser, doc, "t2", "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Promote("lessons/c.md", "t5", "m1", 3); err != nil {
		t.Fatal(err)
	}
	wt.Commit(ctx, "knowledge c", nil)
	runDir := t.TempDir()
	RequestReview(runDir, ReviewRequest{Path: "lessons/c.md", Decision: ReviewConfirm})
	if done, err := ApplyReviews(ctx, wt, "docs/knowledge", runDir, "r1"); len(done) != 1 || err != nil {
		t.Fatalf("apply: %v %v", done, err)
	}
	store, _, _ = knowledge.Open(dir)
	c, _ := store.Get("lessons/c.md")
	if strings.Contains(c.Rationale, NeedsReviewMark) || c.Status != knowledge.Established || !strings.Contains(c.Rationale, "confidence: low") {
		t.Fatalf("after confirm: status %s, rationale %q", c.Status, c.Rationale)
	}
	if clean, _ := wt.IsClean(ctx); !clean {
		t.Fatal("not committed")
	}
}
