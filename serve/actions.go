package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
)

// resumeJob is a run this server resumed in-process (approve / reject).
type resumeJob struct {
	mu       sync.Mutex
	decision string
	started  time.Time
	ended    time.Time
	status   runstate.RunStatus
	err      error
	warn     bytes.Buffer
}

// resumeStatus is what the run page shows of a resume started here.
type resumeStatus struct {
	Decision string
	Started  time.Time
	Running  bool
	Status   string
	Err      string
	Warnings string
}

func (s *Server) resumeStatus(id string) *resumeStatus {
	s.mu.Lock()
	job := s.resuming[id]
	s.mu.Unlock()
	if job == nil {
		return nil
	}
	job.mu.Lock()
	defer job.mu.Unlock()
	st := &resumeStatus{Decision: job.decision, Started: job.started, Running: job.ended.IsZero(), Status: string(job.status), Warnings: strings.TrimSpace(job.warn.String())}
	if job.err != nil && !errors.Is(job.err, graph.ErrPaused) && !errors.Is(job.err, graph.ErrHalted) {
		st.Err = job.err.Error()
	}
	return st
}

// lockedWriter lets the resume's warnings be read while they are written.
type lockedWriter struct{ job *resumeJob }

func (l lockedWriter) Write(p []byte) (int, error) {
	l.job.mu.Lock()
	defer l.job.mu.Unlock()
	return l.job.warn.Write(p)
}

func (s *Server) handleApprove(w http.ResponseWriter, r *http.Request) {
	s.decide(w, r, true, "")
}

func (s *Server) handleReject(w http.ResponseWriter, r *http.Request) {
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" {
		s.message(w, http.StatusBadRequest, "Say why", "A rejection needs a reason: the planner reads it. Go back and fill it in.")
		return
	}
	s.decide(w, r, false, reason)
}

// decide answers a paused run's question, as lemmings resume --approve or
// --reject "why" does, and continues the run in this process.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, approve bool, reason string) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	if err := s.resume(r.Context(), id, approve, reason); err != nil {
		s.message(w, http.StatusConflict, "Run "+id+" not resumed", err.Error())
		return
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

func (s *Server) resume(ctx context.Context, id string, approve bool, reason string) error {
	store, err := s.store()
	if err != nil {
		return err
	}
	found, err := store.Find(ctx, id)
	if err != nil {
		return err
	}
	if found.Active {
		return fmt.Errorf("run %s is running in another process", id)
	}
	snap, err := store.Snapshot(ctx, id)
	if err != nil {
		return err
	}
	kind, err := inspect.PausedFor(snap)
	if err != nil {
		return err
	}
	if ok, err := s.source().Decide(ctx, id, runstate.Approval{Kind: kind, Approved: approve, Reason: reason}); ok || err != nil {
		if err == nil {
			s.logf("run %s: decision (%s) handed to the workers", id, kind)
		}
		return err
	}
	cfg, err := s.opts.LoadConfig(id)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	job := &resumeJob{started: time.Now(), decision: "approved " + kind}
	if !approve {
		job.decision = "rejected " + kind + ": " + reason
	}
	s.mu.Lock()
	if prev := s.resuming[id]; prev != nil {
		prev.mu.Lock()
		busy := prev.ended.IsZero()
		prev.mu.Unlock()
		if busy {
			s.mu.Unlock()
			return fmt.Errorf("run %s is already being resumed here", id)
		}
	}
	s.resuming[id] = job
	s.mu.Unlock()
	s.logf("run %s: %s; resuming", id, job.decision)

	decision := &runstate.Approval{Kind: kind, Approved: approve, Reason: reason}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res, err := run.Resume(s.ctx, run.Options{RepoDir: s.opts.Root, RunID: id, Config: cfg, Decision: decision, Choices: run.ChoicesOf(cfg),
			Warn: lockedWriter{job}, HTTPClient: s.opts.HTTPClient, Redactor: s.opts.Redactor})
		job.mu.Lock()
		job.ended, job.status, job.err = time.Now(), res.Standing.Status, err
		job.mu.Unlock()
		s.logf("run %s: resume ended: %s %v", id, res.Standing.Status, errOrNil(err))
	}()
	return nil
}

func errOrNil(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// handleHalt asks a running run to stop now (the step it cuts off runs
// again on resume), as lemmings halt does.
func (s *Server) handleHalt(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runID(w, r)
	if !ok {
		return
	}
	store, err := s.store()
	if err == nil {
		var run inspect.Run
		run, err = store.Find(r.Context(), id)
		if rs := s.resumeStatus(id); err == nil && !run.Active && (rs == nil || !rs.Running) {
			err = fmt.Errorf("run %s is %s: only a running run can be halted", id, run.DisplayStatus())
		}
	}
	if err == nil {
		err = s.source().RequestHalt(r.Context(), id)
	}
	if err != nil {
		s.message(w, http.StatusConflict, "Run "+id+" not halted", err.Error())
		return
	}
	s.logf("run %s: halt requested", id)
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}
