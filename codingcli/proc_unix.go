//go:build unix

package codingcli

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup puts the CLI in a group of its own so a timeout kills the
// tools it started too (node CLIs spawn shells), and asks the kernel to kill
// the CLI if lemmings itself dies without cleaning up (kill -9, a crash).
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}

// killGroup ends what is left of the CLI's process group once the CLI has
// exited (a server or watcher its tools started in the background).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
