package sandbox

import (
	"golang.org/x/sys/unix"
)

// landlockABI returns the kernel's Landlock ABI version (0: none) and why
// there is none.
func landlockABI() (int, string) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		return 0, "this kernel has no Landlock (Linux 5.13 or later)"
	case errno == unix.EOPNOTSUPP:
		return 0, "Landlock is not enabled (add landlock to the kernel's lsm= boot parameter)"
	case errno != 0:
		return 0, "Landlock: " + errno.Error()
	}
	return int(v), ""
}
