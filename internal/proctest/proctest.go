// Package proctest finds a test's processes among the host's by a command
// line no other process has. A process started in lemmings' sandbox has a
// pid of its sandbox's pid namespace, which means nothing outside it, so
// tests that check what a gate or a coding CLI left running look for it in
// the host's /proc instead.
package proctest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// UniqueSleep is a sleep command line of about seconds that no other
// process runs (its fraction is the clock's nanoseconds).
func UniqueSleep(seconds int) string {
	return fmt.Sprintf("sleep %d.%09d", seconds, time.Now().UnixNano()%1e9)
}

// Running lists the live host processes (not zombies) whose command line is
// cmdline, its arguments separated by single spaces.
func Running(cmdline string) []int {
	want := strings.ReplaceAll(cmdline, " ", "\x00") + "\x00"
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == want && !Zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// GoneWithin waits for every process running cmdline to end; the ones left
// after the wait are killed, and it reports false.
func GoneWithin(cmdline string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for len(Running(cmdline)) > 0 {
		if !time.Now().Before(deadline) {
			for _, pid := range Running(cmdline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// Zombie reports whether pid has died and waits for a parent to reap it (an
// orphan's new parent may be slow to).
func Zombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 0 && f[0] == "Z"
}
