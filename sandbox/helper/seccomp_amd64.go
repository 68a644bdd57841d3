//go:build linux

package helper

import "golang.org/x/sys/unix"

var (
	seccompNative = seccompArch{audit: unix.AUDIT_ARCH_X86_64, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, ioUring: unix.SYS_IO_URING_SETUP}
	// i386 programs: socket 359, socketpair 360, socketcall 102.
	seccompCompat = &seccompArch{audit: unix.AUDIT_ARCH_I386, socket: 359, socketpair: 360, ioUring: 425, sockcall: 102}
)
