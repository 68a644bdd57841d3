//go:build unix

package safefile

import "syscall"

// openFlags never wait on a FIFO or a device; noFollow refuses a link as
// the last component.
const (
	openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
	noFollow  = syscall.O_NOFOLLOW
)
