package realollama

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// process is a child started in a process group of its own, so that it and everything it
// spawns (Ollama's runner processes) can be signalled together.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the child has exited and been reaped
	err  error         // cmd.Wait's result, valid after done
}

// startProcess starts cmd as the leader of a new process group (see sysProcAttr).
func startProcess(cmd *exec.Cmd) (*process, error) {
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid is the child's process id, which is also its process group id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the child has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the child and its group: SIGTERM to the leader first (Ollama then stops its
// runners and waits for them), SIGKILL to the whole group after grace, and then waits until
// no live process of the group remains. It returns an error naming any survivors.
func (p *process) stop(grace time.Duration) error {
	pgid := p.pid()
	if !p.exited() {
		_ = syscall.Kill(pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	// Whatever is left of the group (a stuck leader, an orphaned runner) is killed outright.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := groupMembers(pgid)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of group %d still alive after SIGKILL: %v", pgid, left)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

// groupMembers lists the live (not zombie) processes in process group pgid. Zombies are left
// out: an orphan reparented to an init that does not reap holds no resources but its pid.
// Without /proc it falls back to kill(-pgid, 0), which counts zombies too.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		if err := syscall.Kill(-pgid, 0); err == nil || !errors.Is(err, syscall.ESRCH) {
			return []int{-pgid}
		}
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, group, ok := procStat(pid)
		if ok && group == pgid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat reads a process's state letter and process group from /proc/PID/stat.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// The command name is in parentheses and may hold spaces: fields start after the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	// fields: state ppid pgrp ...
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], g, true
}
