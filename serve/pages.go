package serve

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/run"
)

type runsPage struct {
	Root string
	Runs []runRow
	Err  string
	// Moving: some run is being worked on, so the list refreshes itself.
	Moving bool
}

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	p := runsPage{Root: s.opts.Root}
	if _, err := os.Stat(filepath.Join(s.opts.Root, run.DataDir, run.CheckpointsDir)); errors.Is(err, os.ErrNotExist) && s.opts.Source == nil {
		s.render(w, http.StatusOK, "runs", pageData{Title: "Runs", Nav: "runs", CSRF: s.csrf, Body: p}) // no runs yet
		return
	}
	store, err := s.store()
	if err == nil {
		var runs []inspect.Run
		runs, err = store.List(r.Context())
		for _, run := range runs {
			p.Runs = append(p.Runs, rowOf(s.opts.Root, run, run.View()))
			p.Moving = p.Moving || run.Active
		}
	}
	if err != nil {
		p.Err = err.Error()
	}
	s.render(w, http.StatusOK, "runs", pageData{Title: "Runs", Nav: "runs", CSRF: s.csrf, Body: p})
}

// runID reads and checks the {id} of a run path.
func (s *Server) runID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !graph.ValidRunID(id) {
		s.message(w, http.StatusNotFound, "No such run", "There is no run "+id+" (the runs page lists them).")
		return "", false
	}
	return id, true
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	v, err := s.buildRun(r.Context(), id, true)
	if err != nil {
		s.runMissing(w, id, err)
		return
	}
	s.render(w, http.StatusOK, "run", pageData{Title: "Run " + id, Nav: "runs", CSRF: s.csrf, Body: v})
}

// handleLive renders the parts of a run page that change while it runs.
func (s *Server) handleLive(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	v, err := s.buildRun(r.Context(), id, false)
	if err != nil {
		http.Error(w, s.opts.Redactor.String(err.Error()), http.StatusNotFound)
		return
	}
	s.render(w, http.StatusOK, "live", pageData{CSRF: s.csrf, Body: v})
}

func (s *Server) runMissing(w http.ResponseWriter, id string, err error) {
	if errors.Is(err, inspect.ErrNoSuchRun) || errors.Is(err, graph.ErrRunNotFound) || errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no lemmings runs") {
		s.message(w, http.StatusNotFound, "No such run", err.Error())
		return
	}
	s.message(w, http.StatusInternalServerError, "Run "+id+" cannot be read", err.Error())
}

type commitPage struct {
	RunID, SHA, Subject string
	Diff                []diffLine
	Cut                 bool
}

// handleCommit shows one commit of a run's branch.
func (s *Server) handleCommit(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	sha := r.PathValue("sha")
	store, err := s.store()
	if err != nil {
		s.runMissing(w, id, err)
		return
	}
	run := store.Get(r.Context(), id)
	if run.Err != nil {
		s.runMissing(w, id, run.Err)
		return
	}
	// Only commits of this run's branch: never an arbitrary object of the repository.
	if !shaPattern.MatchString(sha) || run.State.Branch == "" {
		s.message(w, http.StatusNotFound, "No such commit", "Commit "+sha+" is not on the run's branch.")
		return
	}
	gitDir, err := s.source().GitDir(r.Context(), id, run.State.Branch)
	if err != nil {
		s.message(w, http.StatusNotFound, "No such commit", err.Error())
		return
	}
	if _, err := gitOut(r.Context(), gitDir, "merge-base", "--is-ancestor", sha, run.State.Branch); err != nil {
		s.message(w, http.StatusNotFound, "No such commit", "Commit "+sha+" is not on "+run.State.Branch+".")
		return
	}
	subject, _ := gitOut(r.Context(), gitDir, "log", "-1", "--format=%s", sha, "--")
	diff, cut := diffOf(r.Context(), gitDir, sha)
	s.render(w, http.StatusOK, "commit", pageData{Title: "Commit " + sha, Nav: "runs", CSRF: s.csrf,
		Body: commitPage{RunID: id, SHA: sha, Subject: strings.TrimSpace(subject), Diff: diff, Cut: cut}})
}
