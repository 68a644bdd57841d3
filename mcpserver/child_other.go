//go:build !unix

package mcpserver

import "os/exec"

// detach does nothing here: the process is started as is.
func detach(*exec.Cmd) {}
