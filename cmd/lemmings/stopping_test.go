package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/run"
)

func TestStuckProcessHelper(t *testing.T) {
	if how := os.Getenv("LEMMINGS_TEST_STUCK"); how != "" {
		go func() {
			time.Sleep(30 * time.Second)
			os.Exit(99)
		}()
		stuckProcessOrPrint(how)
	}
}

// stuckProcessOrPrint runs stuckProcess and prints what its app said when
// the watchdog exits the process (the app's stderr is a buffer).
func stuckProcessOrPrint(how string) {
	stopGrace = time.Second
	a := &app{stderr: os.Stderr}
	ctx, stopping, done := a.stoppable(context.Background())
	defer done()
	if how == "halt" {
		stopping(run.ErrHaltRequested)
	}
	os.Stdout.WriteString("ready\n")
	if how == "signal" {
		<-ctx.Done()
	}
	select {} // stuck where nothing reaches
}

// Issue 43: a run stuck in a system call ignored SIGTERM, two SIGINTs and
// lemmings halt; only SIGKILL ended it. Once asked to stop, the process
// exits stopGrace later whatever it waits on, saying so, with the stop's
// exit code; a second signal ends it at once.
func TestAStoppedProcessExitsWhateverItWaitsOn(t *testing.T) {
	for _, c := range []struct {
		how     string
		signals []syscall.Signal
		code    int
		says    string
	}{
		{"halt", nil, exitPaused, "still not stopped"},
		{"signal", []syscall.Signal{syscall.SIGTERM}, exitInterrupted, "still not stopped"},
		{"signal", []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, -1, ""},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStuckProcessHelper$")
		cmd.Env = append(os.Environ(), "LEMMINGS_TEST_STUCK="+c.how)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.StdoutPipe()
		must(t, err)
		must(t, cmd.Start())
		buf := make([]byte, 6)
		if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
			t.Fatalf("%s: the helper did not start: %q %v", c.how, buf, err)
		}
		for _, s := range c.signals {
			must(t, cmd.Process.Signal(s))
			time.Sleep(100 * time.Millisecond)
		}
		start := time.Now()
		err = cmd.Wait()
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s %v: the process took %s to end", c.how, c.signals, took)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s %v: %v", c.how, c.signals, err)
		}
		if ee.ExitCode() != c.code || !strings.Contains(errb.String(), c.says) {
			t.Errorf("%s %v: exit %d (want %d), stderr:\n%s", c.how, c.signals, ee.ExitCode(), c.code, errb.String())
		}
	}
}
