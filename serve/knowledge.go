package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/workspace"
)

// needsReviewMark is what the Internaliser writes into the rationale of an
// item it flags needs_user_review.
const needsReviewMark = nodes.NeedsReviewMark

type knowledgePage struct {
	Sources  []sourceOption
	Source   string
	Dir      string
	Docs     []docRow
	Problems []string
	Queue    []queueItem
	Err      string
	Notice   string
}

type sourceOption struct {
	Value, Label string
	Selected     bool
}

type docRow struct {
	Path, Title, Category, Status, Owner, Task, LastChange, Rules string
	Changelog                                                     []knowledge.Change
	Problems                                                      []string
	NeedsReview                                                   bool
}

type queueItem struct {
	RunID, RunStatus, Path, Title, Status, Owner, Rules, Rationale string
	NeedsReview                                                    bool
	Requested                                                      string // a decision left for the running run
}

// knowledgeDir is the configured knowledge directory, relative to a tree.
func (s *Server) knowledgeDir() string {
	cfg, err := s.opts.LoadConfig("")
	if err != nil || cfg.Knowledge.Dir == "" {
		return "docs/knowledge"
	}
	return cfg.Knowledge.Dir
}

// worktreeOf is the run's worktree, where its supervisors write knowledge.
func (s *Server) worktreeOf(id string) string {
	return filepath.Join(s.opts.Root, filepath.FromSlash(workspace.WorktreesDir), id)
}

func (s *Server) handleKnowledge(w http.ResponseWriter, r *http.Request) {
	kdir := s.knowledgeDir()
	p := knowledgePage{Notice: r.URL.Query().Get("done")}
	var runs []inspect.Run
	if store, err := s.store(); err == nil {
		runs, _ = store.List(r.Context())
	}
	want := r.URL.Query().Get("source")
	p.Sources = append(p.Sources, sourceOption{Value: "checkout", Label: "your checkout (read only)"})
	for _, run := range runs {
		if _, err := os.Stat(s.worktreeOf(run.ID)); err != nil {
			continue
		}
		p.Sources = append(p.Sources, sourceOption{Value: run.ID, Label: "run " + run.ID + " (" + run.DisplayStatus() + ")"})
		s.queueOf(r.Context(), &p, run, kdir)
	}
	if want == "" {
		want = "checkout"
		if len(p.Sources) > 1 {
			want = p.Sources[1].Value // the latest run: where supervisors write
		}
	}
	dir := ""
	for i := range p.Sources {
		if p.Sources[i].Value == want {
			p.Sources[i].Selected = true
			p.Source = want
			dir = filepath.Join(s.opts.Root, kdir)
			if want != "checkout" {
				dir = filepath.Join(s.worktreeOf(want), kdir)
			}
		}
	}
	if dir == "" {
		p.Err = "no knowledge source " + want
	} else {
		p.Dir = dir
		s.docsOf(&p, dir)
	}
	s.render(w, http.StatusOK, "knowledge", pageData{Title: "Knowledge", Nav: "knowledge", CSRF: s.csrf, Body: p})
}

func (s *Server) docsOf(p *knowledgePage, dir string) {
	store, _, err := knowledge.Open(dir)
	if err != nil {
		p.Err = err.Error()
		return
	}
	byFile := map[string][]string{}
	if _, err := os.Stat(dir); err == nil {
		for _, pr := range knowledge.Lint(dir) {
			msg := pr.Message
			if pr.Line > 0 {
				msg = fmt.Sprintf("line %d: %s", pr.Line, pr.Message)
			}
			byFile[pr.File] = append(byFile[pr.File], msg)
		}
	}
	for _, d := range store.Docs() {
		row := docRow{Path: d.Path, Title: d.Title, Category: d.Category, Status: string(d.EffectiveStatus()), Owner: d.UpdatedBy,
			Task: d.SourceTask, LastChange: d.LastChange(), Rules: d.Core(), Changelog: d.Changelog, Problems: byFile[d.Path],
			NeedsReview: strings.Contains(d.Rationale, needsReviewMark)}
		delete(byFile, d.Path)
		p.Docs = append(p.Docs, row)
	}
	for f, msgs := range byFile {
		for _, m := range msgs {
			p.Problems = append(p.Problems, f+": "+m)
		}
	}
	slices.Sort(p.Problems)
}

// queueOf adds a run's provisional and flagged documents to the review queue.
func (s *Server) queueOf(_ context.Context, p *knowledgePage, run inspect.Run, kdir string) {
	store, _, err := knowledge.Open(filepath.Join(s.worktreeOf(run.ID), kdir))
	if err != nil {
		return
	}
	pending, _ := nodes.PendingReviews(inspect.RunDir(s.opts.Root, run.ID))
	for _, d := range store.Docs() {
		st := d.EffectiveStatus()
		flagged := strings.Contains(d.Rationale, needsReviewMark)
		if st != knowledge.Provisional && !(flagged && st != knowledge.Deprecated && !confirmedByUser(d)) {
			continue
		}
		it := queueItem{RunID: run.ID, RunStatus: run.DisplayStatus(), Path: d.Path, Title: d.Title, Status: string(st),
			Owner: d.UpdatedBy, Rules: d.Core(), Rationale: d.Rationale, NeedsReview: flagged}
		for _, req := range pending {
			if req.Path == d.Path {
				it.Requested = req.Decision
			}
		}
		p.Queue = append(p.Queue, it)
	}
}

// confirmedByUser: a flagged doc the user already confirmed leaves the queue.
func confirmedByUser(d *knowledge.Doc) bool {
	for _, c := range d.Changelog {
		if c.Writer == knowledge.User && strings.Contains(c.Summary, "→ established") {
			return true
		}
	}
	return false
}

// handleReview records a user's decision on a run's knowledge document: a
// commit on the run's branch, made here when no process works on the run
// and it is between tasks, otherwise by the run itself at its next task
// boundary. The user's checkout is never touched.
func (s *Server) handleReview(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("run")
	docPath := r.PostFormValue("path")
	decision := r.PostFormValue("decision")
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if !graph.ValidRunID(id) || docPath == "" || (decision != nodes.ReviewConfirm && decision != nodes.ReviewReject) {
		s.message(w, http.StatusBadRequest, "Bad review request", "A review needs a run, a document and confirm or reject.")
		return
	}
	msg, err := s.review(r.Context(), id, docPath, decision, reason)
	if err != nil {
		s.message(w, http.StatusConflict, "Review not recorded", err.Error())
		return
	}
	s.logf("run %s: %s", id, msg)
	http.Redirect(w, r, "/knowledge?source="+url.QueryEscape(id)+"&done="+url.QueryEscape(msg), http.StatusSeeOther)
}

func (s *Server) review(ctx context.Context, id, docPath, decision, reason string) (string, error) {
	store, err := s.store()
	if err != nil {
		return "", err
	}
	run, err := store.Find(ctx, id)
	if err != nil {
		return "", err
	}
	if run.Err != nil {
		return "", fmt.Errorf("run %s cannot be read: %w", id, run.Err)
	}
	kdir := s.knowledgeDir()
	ks, _, err := knowledge.Open(filepath.Join(s.worktreeOf(id), kdir))
	if err != nil {
		return "", err
	}
	if _, ok := ks.Get(docPath); !ok {
		return "", fmt.Errorf("run %s has no knowledge document %s", id, docPath)
	}
	runDir := inspect.RunDir(s.opts.Root, id)
	verb := map[string]string{nodes.ReviewConfirm: "confirmed", nodes.ReviewReject: "rejected"}[decision]
	request := nodes.ReviewRequest{Path: docPath, Decision: decision, Reason: reason}
	rs := s.resumeStatus(id)
	if run.Active || (rs != nil && rs.Running) || run.View().Current != nil {
		if _, err := nodes.RequestReview(runDir, request); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s: the run commits it at its next task boundary", verb, docPath), nil
	}
	repo, err := workspace.OpenRepo(ctx, s.opts.Root)
	if err != nil {
		return "", err
	}
	wt, err := repo.OpenWorktree(ctx, id)
	if err != nil {
		return "", err
	}
	// The decision's commit must hold the decision only, not someone's edits.
	if clean, err := wt.IsClean(ctx); err != nil || !clean {
		return "", fmt.Errorf("the worktree of run %s (%s) has uncommitted changes: commit or discard them, then decide again", id, wt.Dir())
	}
	if _, err := nodes.RequestReview(runDir, request); err != nil {
		return "", err
	}
	done, err := nodes.ApplyReviews(ctx, wt, kdir, runDir, id)
	if err != nil {
		return "", err
	}
	if len(done) == 0 {
		return "", errors.New("the decision was not applied")
	}
	return fmt.Sprintf("%s %s: committed on %s", verb, docPath, run.State.Branch), nil
}
