//go:build linux

package tempdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Also seen in issue 43: runs killed with SIGKILL left their sandbox
// folders behind. A folder whose owner is gone is swept; one of a live
// process, of this one, or without a stamp stays.
func TestSweepRemovesTheFoldersOfProcessesGone(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const prefix = "lemmings-test-sweep-"
	old := time.Now().Add(-time.Hour)
	mk := func(name string) string {
		p := filepath.Join(os.TempDir(), name)
		if err := os.MkdirAll(filepath.Join(p, "ro", "deep"), 0o700); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(filepath.Join(p, "ro"), 0o500) // a module cache's read-only folder
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	gone := mk(prefix + strconv.Itoa(dead.Process.Pid) + ".12345" + sep + "a")
	reused := mk(prefix + strconv.Itoa(live.Process.Pid) + ".1" + sep + "b") // the pid is another process's now
	running := mk(prefix + stamp(live.Process.Pid) + sep + "c")
	legacy := mk(prefix + "d")
	mineNow, err := Make(prefix, "x-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(mineNow, old, old)
	removed := Sweep(prefix)
	for _, p := range []string{gone, reused} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s stayed: its owner is gone", filepath.Base(p))
		}
	}
	for _, p := range []string{running, legacy, mineNow} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
	if len(removed) != 2 {
		t.Errorf("removed %v", removed)
	}
}
