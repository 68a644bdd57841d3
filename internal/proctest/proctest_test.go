package proctest

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestRunningFindsTheProcessByItsCommandLineAndGoneWithinEndsIt(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep on PATH")
	}
	line := UniqueSleep(30)
	if other := UniqueSleep(30); other == line || !strings.HasPrefix(line, "sleep 30.") {
		t.Fatalf("UniqueSleep gave %q then %q", line, other)
	}
	if pids := Running(line); len(pids) != 0 || !GoneWithin(line, 0) {
		t.Fatalf("found %v before the process started", pids)
	}
	args := strings.Fields(line)
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // reaped, so it ends rather than lingers a zombie
	deadline := time.Now().Add(5 * time.Second)
	for len(Running(line)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pids := Running(line); len(pids) != 1 || pids[0] != cmd.Process.Pid {
		t.Fatalf("Running(%q) = %v, want [%d]", line, pids, cmd.Process.Pid)
	}
	// Still running after the wait: it is killed and reported.
	if GoneWithin(line, 50*time.Millisecond) {
		t.Fatal("GoneWithin said a running sleep was gone")
	}
	<-done
	if !GoneWithin(line, time.Second) {
		t.Fatal("the killed sleep still runs")
	}
}
