//go:build linux

package helper

import "golang.org/x/sys/unix"

var (
	seccompNative = seccompArch{audit: unix.AUDIT_ARCH_X86_64, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, ioUring: unix.SYS_IO_URING_SETUP,
		openat2: unix.SYS_OPENAT2,
		modes: []modeCall{
			{nr: unix.SYS_OPEN, flags: 1, mode: 2}, {nr: unix.SYS_OPENAT, flags: 2, mode: 3}, {nr: unix.SYS_CREAT, flags: -1, mode: 1},
			{nr: unix.SYS_CHMOD, flags: -1, mode: 1}, {nr: unix.SYS_FCHMOD, flags: -1, mode: 1},
			{nr: unix.SYS_FCHMODAT, flags: -1, mode: 2}, {nr: unix.SYS_FCHMODAT2, flags: -1, mode: 2},
			{nr: unix.SYS_MKNOD, flags: -1, mode: 1}, {nr: unix.SYS_MKNODAT, flags: -1, mode: 2},
		},
		xattrs: []uint32{unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR}, setxattrat: unix.SYS_SETXATTRAT,
	}
	// i386 programs: socket 359, socketpair 360, socketcall 102; open 5,
	// creat 8, mknod 14, chmod 15, fchmod 94, openat 295, mknodat 297,
	// fchmodat 306, openat2 437, fchmodat2 452; setxattr 226, lsetxattr 227,
	// fsetxattr 228, setxattrat 463.
	seccompCompat = &seccompArch{audit: unix.AUDIT_ARCH_I386, socket: 359, socketpair: 360, ioUring: 425, sockcall: 102,
		openat2: 437,
		modes: []modeCall{
			{nr: 5, flags: 1, mode: 2}, {nr: 295, flags: 2, mode: 3}, {nr: 8, flags: -1, mode: 1},
			{nr: 15, flags: -1, mode: 1}, {nr: 94, flags: -1, mode: 1}, {nr: 306, flags: -1, mode: 2}, {nr: 452, flags: -1, mode: 2},
			{nr: 14, flags: -1, mode: 1}, {nr: 297, flags: -1, mode: 2},
		},
		xattrs: []uint32{226, 227, 228}, setxattrat: 463,
	}
)
