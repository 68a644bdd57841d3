//go:build !linux

package realollama

import "syscall"

// sysProcAttr puts the child in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
