package serve

// Steering from the run page (docs/time-travel.md): tell the run something,
// its history, and a fork from a step.

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/run"
)

// local says whether the runs are the repository's own (.lemmings/): tell
// and fork write there; a shared store's runs are steered with the CLI.
func (s *Server) local(w http.ResponseWriter) bool {
	if s.opts.Source == nil {
		return true
	}
	s.message(w, http.StatusNotImplemented, "Not from this page",
		"This server shows the runs of a shared store: tell and fork them with lemmings tell and lemmings fork on the machine that runs them.")
	return false
}

// handleTell leaves the user's message for the run, as lemmings tell.
func (s *Server) handleTell(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok || !s.local(w) {
		return
	}
	msg := strings.TrimSpace(r.PostFormValue("message"))
	if msg == "" {
		s.message(w, http.StatusBadRequest, "Say something", "The message is empty. Go back and write what the run should do.")
		return
	}
	cfg, _ := s.opts.LoadConfig(id) // nil: the secrets of the environment and repository are still redacted
	req, err := run.Tell(r.Context(), s.opts.Root, id, msg, r.PostFormValue("priority"), cfg, s.opts.Redactor)
	if err != nil {
		s.message(w, http.StatusConflict, "Run "+id+" not told", err.Error())
		return
	}
	s.logf("run %s: told %s", id, req.ID)
	http.Redirect(w, r, "/runs/"+id+"#tell", http.StatusSeeOther)
}

// handleHistory lists the steps a fork can start from.
func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	if s.opts.Source != nil {
		s.message(w, http.StatusNotImplemented, "Not from this page", "The history of a shared store's run: lemmings history "+id+" on a machine that holds it.")
		return
	}
	h, err := run.History(r.Context(), s.opts.Root, id)
	if err != nil {
		s.message(w, http.StatusNotFound, "No history for "+id, err.Error())
		return
	}
	s.render(w, http.StatusOK, "history", pageData{Title: "History of " + id, Nav: "runs", CSRF: s.csrf, Body: h})
}

// handleFork makes a fork of the run at a step, as lemmings fork does, and
// runs it in this process.
func (s *Server) handleFork(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok || !s.local(w) {
		return
	}
	step, err := strconv.Atoi(r.PostFormValue("step"))
	f := run.ForkOptions{Parent: id, Step: step, RejectTask: strings.TrimSpace(r.PostFormValue("reject_task")),
		Reason: strings.TrimSpace(r.PostFormValue("reason")), Remit: strings.TrimSpace(r.PostFormValue("remit"))}
	switch {
	case err != nil:
		s.message(w, http.StatusBadRequest, "Which step?", "Fork from a step of the history page.")
		return
	case f.RejectTask != "" && f.Reason == "":
		s.message(w, http.StatusBadRequest, "Say why", "Rejecting "+f.RejectTask+" needs a reason: the planner and the Implementor read it. Go back and fill it in.")
		return
	}
	cfg, err := s.opts.LoadConfig(id)
	if err != nil {
		s.message(w, http.StatusInternalServerError, "Configuration", err.Error())
		return
	}
	if f.Remit != "" {
		if err := run.CheckRemit(f.Remit, cfg.Limits.RemitBytes); err != nil {
			s.message(w, http.StatusBadRequest, "Remit", err.Error())
			return
		}
	}
	job := &resumeJob{started: time.Now(), decision: "forked from " + id + "@" + strconv.Itoa(step)}
	forkID, err := run.MakeFork(r.Context(), s.opts.Root, run.NewRunID(), f, cfg, s.opts.Redactor, lockedWriter{job})
	if err != nil {
		s.message(w, http.StatusConflict, "Run "+id+" not forked", err.Error())
		return
	}
	s.mu.Lock()
	s.resuming[forkID] = job
	s.mu.Unlock()
	s.logf("run %s: %s; running", forkID, job.decision)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res, err := run.Resume(s.ctx, run.Options{RepoDir: s.opts.Root, RunID: forkID, Config: cfg, Choices: run.ChoicesOf(cfg),
			Warn: lockedWriter{job}, HTTPClient: s.opts.HTTPClient, Redactor: s.opts.Redactor})
		job.mu.Lock()
		job.ended, job.status, job.err = time.Now(), res.Standing.Status, err
		job.mu.Unlock()
		s.logf("run %s: fork ended: %s %v", forkID, res.Standing.Status, errOrNil(err))
	}()
	http.Redirect(w, r, "/runs/"+forkID, http.StatusSeeOther)
}
