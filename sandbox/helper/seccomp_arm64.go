//go:build linux

package helper

import "golang.org/x/sys/unix"

var (
	seccompNative = seccompArch{audit: unix.AUDIT_ARCH_AARCH64, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, ioUring: unix.SYS_IO_URING_SETUP}
	// 32-bit ARM programs: socket 281, socketpair 288, socketcall 102.
	seccompCompat = &seccompArch{audit: unix.AUDIT_ARCH_ARM, socket: 281, socketpair: 288, ioUring: 425, sockcall: 102}
)
