package mcpserver

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/run"
)

// syncBuffer is a log the server and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An approval answers with the run starting again, not with the pause it
// ended (the store says "paused" until the resumed process takes the run),
// and a wait right after it follows the run to its end. An approval or a
// halt of a run that ended is refused before any process is started, in
// the status words of lemmings status.
func TestAnApprovalIsNotAnsweredWithTheOldPause(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &demo.Script{})
	var log syncBuffer
	// No start wait: the approval answers before the resume takes the run.
	s, err := New(Options{Root: f.repo, Exe: lemmingsBin(t), Env: f.env, Version: "test", Poll: 50 * time.Millisecond,
		StartWait: time.Millisecond, LoadConfig: f.config, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.waitChildren(t, 2*time.Minute) })
	cs := client(t, s, nil)
	var st RunStatus
	mustCall(t, cs, "run", map[string]any{"remit": demo.Remit, "approve": "milestones", "no_supervisors": true}, &st)
	id := st.RunID
	var w WaitOutput
	mustCall(t, cs, "wait", map[string]any{"run_id": id, "timeout_seconds": 120}, &w)
	if w.Run.Status != "paused" {
		t.Fatalf("wait: %+v", w)
	}
	mustCall(t, cs, "approve", map[string]any{"run_id": id}, &st)
	if st.Status == "paused" || st.PausedFor != "" || !st.Active || strings.Contains(st.Reason, "waiting for a decision") {
		t.Errorf("approve answered with the old pause: %+v", st)
	}
	mustCall(t, cs, "wait", map[string]any{"run_id": id, "timeout_seconds": 180}, &w)
	if w.Run.Status != "done" {
		t.Fatalf("the wait after approve ended with %+v", w.Run)
	}
	started := strings.Count(log.String(), "started lemmings resume")
	if err := call(t, cs, "approve", map[string]any{"run_id": id}, nil); err == nil || !strings.Contains(err.Error(), "run "+id+" is done, not paused for an approval") {
		t.Errorf("approve of a done run: %v", err)
	}
	if err := call(t, cs, "halt", map[string]any{"run_id": id}, nil); err == nil || !strings.Contains(err.Error(), "run "+id+" is done, not running: nothing to halt") {
		t.Errorf("halt of a done run: %v", err)
	}
	if n := strings.Count(log.String(), "started lemmings resume"); n != started || strings.Contains(log.String(), "halt requested") {
		t.Errorf("a refused approve or halt still started or requested something:\n%s", log.String())
	}
}

// The run tool's mode is lemmings run's --quick or --full; anything else is
// refused by its schema.
func TestTheRunToolsModeIsTheCLIsFlag(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &demo.Script{})
	s := f.server(t)
	cs := client(t, s, nil)
	if err := call(t, cs, "run", map[string]any{"remit": demo.Remit, "mode": "fast"}, nil); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("mode fast: %v", err)
	}
	var st RunStatus
	mustCall(t, cs, "run", map[string]any{"remit": demo.Remit, "mode": "full", "approve": "milestones", "no_supervisors": true}, &st)
	var w WaitOutput
	mustCall(t, cs, "wait", map[string]any{"run_id": st.RunID, "timeout_seconds": 120}, &w)
	if w.Run.Status != "paused" {
		t.Fatalf("wait: %+v", w)
	}
	log, err := os.ReadFile(filepath.Join(f.repo, run.DataDir, MCPDir, st.RunID+".log"))
	if err != nil {
		t.Fatal(err)
	}
	if head, _, _ := strings.Cut(string(log), "\n"); !strings.Contains(head, " run ") || !strings.Contains(head, " --full") {
		t.Errorf("the run's command line has no --full: %s", head)
	}
}
