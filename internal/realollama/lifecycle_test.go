package realollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// The lifecycle tests run this test binary again as a helper process that starts a server
// and then ends badly (fails, panics, exits); the parent checks what was left behind.
const (
	envHelper = "LEMMINGS_REALOLLAMA_HELPER" // what the helper does
	envPidDir = "LEMMINGS_REALOLLAMA_PIDDIR" // where the helper and fake servers write pids
)

// TestOllamaHarnessHelperProcess is not a test: it is the helper process. Without
// LEMMINGS_REALOLLAMA_HELPER it does nothing.
func TestOllamaHarnessHelperProcess(t *testing.T) {
	what := os.Getenv(envHelper)
	if what == "" {
		t.Skip("helper process for the lifecycle tests")
	}
	opts := []Option{}
	if what == "hang" {
		opts = append(opts, WithStartTimeout(time.Second))
	}
	s := Start(t, opts...)
	// Load a model so a runner process exists beside the server.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client().Embed(ctx, &api.EmbedRequest{Model: s.Models.Embed, Input: "x"}); err != nil {
		t.Fatalf("embed: %v", err)
	}
	dir := os.Getenv(envPidDir)
	if dir == "" {
		t.Fatalf("%s is not set", envPidDir)
	}
	members := len(groupMembers(s.PID()))
	writeFile(t, filepath.Join(dir, "server"), strconv.Itoa(s.PID())+" "+s.Host+" "+strconv.Itoa(members))
	switch what {
	case "fail":
		t.Fatal("helper fails on purpose")
	case "panic":
		panic("helper panics on purpose")
	case "exit":
		os.Exit(3) // no cleanups run: only Pdeathsig stands between us and a stray server
	}
}

// runHelper runs the helper process with extra environment and returns its output.
func runHelper(t *testing.T, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOllamaHarnessHelperProcess$", "-test.v", "-test.count=1")
	// The helper's temporary folders land in ours, so even an os.Exit leaves nothing behind.
	cmd.Env = append(append(os.Environ(), "TMPDIR="+t.TempDir()), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != 'Z' && state != 'X'
}

// waitGroupGone waits a little for the group to empty (a killed process takes a moment).
func waitGroupGone(t *testing.T, pgid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for len(groupMembers(pgid)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes of group %d left behind: %v", pgid, groupMembers(pgid))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOllamaHarnessStopLeavesNothingBehind(t *testing.T) {
	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client().Embed(ctx, &api.EmbedRequest{Model: s.Models.Embed, Input: "x"}); err != nil {
		t.Fatalf("embed: %v", err)
	}
	if n := len(groupMembers(s.PID())); n < 2 {
		t.Fatalf("want the server and a runner in group %d, found %d processes", s.PID(), n)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if left := groupMembers(s.PID()); len(left) > 0 {
		t.Fatalf("after Stop, group %d still has %v", s.PID(), left)
	}
	if c, err := net.DialTimeout("tcp", s.Host, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Stop", s.Host)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

func TestOllamaHarnessStopsTheServerWhenTheTestEndsBadly(t *testing.T) {
	binaryOrSkip(t)
	for _, how := range []string{"fail", "panic", "exit"} {
		t.Run(how, func(t *testing.T) {
			if how == "exit" && runtime.GOOS != "linux" {
				t.Skip("without cleanups only Linux's parent-death signal stops the server")
			}
			dir := t.TempDir()
			out, err := runHelper(t, envHelper+"="+how, envPidDir+"="+dir)
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("helper should have failed, got %v:\n%s", err, out)
			}
			data, rerr := os.ReadFile(filepath.Join(dir, "server"))
			if rerr != nil {
				t.Fatalf("helper wrote no pid (%v):\n%s", rerr, out)
			}
			var pid, members int
			var host string
			if _, err := fmt.Sscan(string(data), &pid, &host, &members); err != nil {
				t.Fatalf("helper wrote %q: %v", data, err)
			}
			if members < 2 {
				t.Fatalf("helper saw %d processes in the server's group, want the server and a runner", members)
			}
			// After a clean failure or panic the cleanup has already waited for the group;
			// after os.Exit the kernel's parent-death signal needs a moment.
			waitGroupGone(t, pid, 10*time.Second)
			if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
				c.Close()
				t.Fatalf("%s still accepts connections", host)
			}
		})
	}
}

func TestOllamaHarnessFailsClearlyWithoutARealServer(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-ollama")

	t.Run("required and missing fails with how to build it", func(t *testing.T) {
		out, err := runHelper(t, envHelper+"=start", EnvBin+"="+missing, EnvRequire+"=1")
		if err == nil || !strings.Contains(out, "--- FAIL") || !strings.Contains(out, "make ollama") {
			t.Fatalf("want a failure naming `make ollama`, got %v:\n%s", err, out)
		}
	})
	// Not asked for, the real-server tests skip even when the binary is
	// there: a machine that once ran make ollama stays fast.
	for _, value := range []string{"", "0", "maybe"} {
		t.Run("not asked for ("+value+") skips even when the binary is there", func(t *testing.T) {
			out, err := runHelper(t, envHelper+"=start", EnvBin+"=/bin/sh", EnvRequire+"="+value)
			if err != nil || !strings.Contains(out, "--- SKIP") || !strings.Contains(out, EnvRequire+"=1") {
				t.Fatalf("want a skip saying how to ask, got %v:\n%s", err, out)
			}
		})
	}
	t.Run("a server that exits at once is reported with its log", func(t *testing.T) {
		fake := filepath.Join(dir, "exits")
		writeFile(t, fake, "#!/bin/sh\necho 'fake server: cannot start' >&2\nexit 7\n")
		if err := os.Chmod(fake, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := runHelper(t, envHelper+"=start", EnvBin+"="+fake, EnvRequire+"=1")
		if err == nil || !strings.Contains(out, "exited before answering") || !strings.Contains(out, "fake server: cannot start") {
			t.Fatalf("want a failure quoting the server log, got %v:\n%s", err, out)
		}
	})
	t.Run("a server that never answers is stopped with its children", func(t *testing.T) {
		pids := t.TempDir()
		fake := filepath.Join(dir, "hangs")
		writeFile(t, fake, "#!/bin/sh\nsleep 300 &\necho $! > \"$"+envPidDir+"/child\"\necho $$ > \"$"+envPidDir+"/leader\"\nexec sleep 300\n")
		if err := os.Chmod(fake, 0o755); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		out, err := runHelper(t, envHelper+"=hang", EnvBin+"="+fake, EnvRequire+"=1", envPidDir+"="+pids)
		if err == nil || !strings.Contains(out, "not answering") {
			t.Fatalf("want a failure saying the server is not answering, got %v:\n%s", err, out)
		}
		if d := time.Since(t0); d > 30*time.Second {
			t.Fatalf("took %v to give up on a 1s start timeout", d)
		}
		for _, name := range []string{"leader", "child"} {
			data, err := os.ReadFile(filepath.Join(pids, name))
			if err != nil {
				t.Fatalf("fake server wrote no %s pid: %v", name, err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			if alive(pid) {
				t.Errorf("%s %d of the fake server is still alive", name, pid)
			}
		}
	})
}
