//go:build unix

package mcpserver

import (
	"os/exec"
	"syscall"
)

// detach starts the process in a session of its own: a signal to this
// server's process group, or the MCP client's terminal closing, does not
// reach it, and it goes on after this server exits.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
