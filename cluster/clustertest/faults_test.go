package clustertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/pgtest"
)

func (e *env) waitDone(id string, d time.Duration) {
	e.t.Helper()
	e.waitFor(d, "the run to finish", func() bool {
		snap, err := e.state(id)
		return err == nil && snap.Status == graph.StatusDone
	})
}

// A remote that refuses pushes: no checkpoint is stored past the step
// whose commits could not be pushed; the job is retried with backoff, and
// once the remote takes pushes again the run finishes.
func TestRefusedPushStoresNoCheckpoint(t *testing.T) {
	e := newEnv(t)
	srv := demo.NewServer(&demo.Script{LocalLatency: 10 * time.Millisecond})
	defer srv.Close()
	flag := filepath.Join(e.dir, "refuse")
	hook := filepath.Join(e.remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nwhile read old new ref; do case $ref in refs/lemmings/*/base) ;; *) [ -e "+flag+" ] && { echo refused >&2; exit 1; } ;; esac; done\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a := e.newBox("box-a", srv.URL())
	id := e.submit(a)
	a.startWorker()
	// The first commit of the run (a work-in-progress commit) cannot be pushed.
	e.waitFor(60*time.Second, "a refused push", func() bool { return strings.Contains(a.logText(), "not checkpointed") })
	stuck, err := e.state(id)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	again, _ := e.state(id)
	if again.Step != stuck.Step {
		t.Errorf("a checkpoint was stored while the remote refused pushes: step %d then %d", stuck.Step, again.Step)
	}
	for _, h := range []string{stuck.Metadata["git_head"]} {
		if h != "" && gitRunOK(e.remote, "cat-file", "-e", h+"^{commit}") != nil {
			t.Errorf("the last checkpoint names %s, which is not on the remote", h)
		}
	}
	var attempts int
	_ = e.openDB().Pool().QueryRow(context.Background(), "SELECT max(attempt) FROM river_job WHERE args->>'run_id' = $1", id).Scan(&attempts)
	if attempts < 2 {
		t.Errorf("the job was tried %d times, want retries", attempts)
	}
	os.Remove(flag)
	e.waitDone(id, 3*time.Minute)
}

func gitRunOK(dir string, args ...string) error {
	_, err := runGit(dir, args...)
	return err
}

// A worker whose database session is terminated (what keepalives do to a
// box that vanished) appends nothing more and stops its model work; the run
// goes on under a new session.
func TestTerminatedSessionStopsTheWorker(t *testing.T) {
	e := newEnv(t)
	// Long implementor calls: the session ends while the model works.
	srv := demo.NewServer(&demo.Script{LocalLatency: 20 * time.Millisecond, ImplementorLatency: time.Second})
	defer srv.Close()
	a := e.newBox("box-a", srv.URL())
	id := e.submit(a)
	a.startWorker()
	db := e.openDB()
	var pid int
	e.waitFor(60*time.Second, "the run to reach step 5", func() bool {
		snap, err := e.state(id)
		if err != nil || snap.Step < 5 {
			return false
		}
		pid, _ = db.HolderPID(context.Background(), id)
		return pid != 0
	})
	time.Sleep(300 * time.Millisecond) // inside the step
	before, _ := e.state(id)
	if _, err := db.Pool().Exec(context.Background(), "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	// Either the watch on the session cancels the step (the model call is
	// cut), or the step ended first and its checkpoint failed to append.
	how := ""
	e.waitFor(5*time.Second, "the worker to stop the run", func() bool {
		switch log := a.logText(); {
		case strings.Contains(log, "hold on the run ended"):
			how = "its watch on the session cancelled the step"
		case strings.Contains(log, "SQLSTATE 57P01"):
			how = "the checkpoint's append failed"
		}
		return how != ""
	})
	t.Logf("stopped %v after its session was terminated: %s", time.Since(cut), how)
	if after, _ := e.state(id); after.Step > before.Step {
		if _, inc := e.holder(id); inc < 2 {
			t.Errorf("step %d stored after the session of incarnation 1 ended", after.Step)
		}
	}
	// Every checkpoint after the cut came from a later incarnation.
	e.waitDone(id, 3*time.Minute)
	refs := gitRun(t, e.remote, "for-each-ref", "--format=%(refname) %(creatordate:unix)", "refs/lemmings/"+id+"/1/")
	for _, line := range strings.Split(refs, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] > itoa(cut.Add(time.Second).Unix()) {
			t.Errorf("incarnation 1 pushed %s after its session ended", f[0])
		}
	}
	if _, inc := e.holder(id); inc < 2 {
		t.Errorf("incarnation %d: the run was not taken again", inc)
	}
}

// A box whose model server stops answering takes no more runs and hands
// its run back at a step boundary; the other box finishes it.
func TestModelServerDownHandsTheRunBack(t *testing.T) {
	e := newEnv(t)
	sc := &demo.Script{LocalLatency: 20 * time.Millisecond, ImplementorLatency: 200 * time.Millisecond}
	srvA, srvB := demo.NewServer(sc), demo.NewServer(sc)
	defer srvB.Close()
	a, b := e.newBox("box-a", srvA.URL()), e.newBox("box-b", srvB.URL())
	id := e.submit(a)
	a.startWorker()
	e.waitFor(60*time.Second, "box-a to reach step 5", func() bool {
		snap, err := e.state(id)
		return err == nil && snap.Step >= 5
	})
	b.startWorker()
	srvA.Close()
	e.waitFor(20*time.Second, "box-a to stop taking runs", func() bool { return strings.Contains(a.logText(), "model server does not answer") })
	e.waitDone(id, 3*time.Minute)
	if h, _ := e.holder(id); h != "box-b" {
		t.Errorf("the run ended held by %s, want box-b", h)
	}
}

// PostgreSQL restarted (immediate: crash recovery) in the middle of a run:
// the run resumes once the server is back and finishes.
func TestDatabaseRestartMidRun(t *testing.T) {
	e := newEnv(t)
	srv := demo.NewServer(&demo.Script{LocalLatency: 20 * time.Millisecond, ImplementorLatency: 200 * time.Millisecond})
	defer srv.Close()
	a := e.newBox("box-a", srv.URL())
	id := e.submit(a)
	a.startWorker()
	e.waitFor(60*time.Second, "the run to reach step 5", func() bool {
		snap, err := e.state(id)
		return err == nil && snap.Step >= 5
	})
	if err := pgtest.Shared(t).Restart(500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	e.openDB().Pool().Reset()
	e.waitDone(id, 3*time.Minute)
}
