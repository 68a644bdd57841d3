package helper

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The filter is seccomp's, on the exec'ing thread; what it refuses, the
// command and everything it starts is refused.
//
// UNIX sockets (rules.unix): Landlock below ABI 9 cannot stop a connect to a
// pathname UNIX socket (PostgreSQL's, Docker's, the session bus, whose
// systemd runs any command asked of it): a network namespace does not
// isolate them. The filter takes UNIX sockets away instead:
//
//   - socket(AF_UNIX, …) fails with EPERM, abstract sockets included;
//   - socketpair(…, SOCK_DGRAM, …) fails too: a datagram socket can name
//     any socket's path in sendto; stream pairs stay (pipes between
//     processes: Node's child processes, Python's asyncio);
//   - on amd64 the 32-bit entry points are filtered the same, and their
//     socketcall multiplexer, whose arguments seccomp cannot read, fails.
//
// seccomp cannot read the address a connect names, so UNIX sockets go as
// a whole: a test that serves on one of its own fails with EPERM. Landlock
// ABI 9 checks the path itself, and these rules are then left out.
//
// Setuid and setgid files (rules.setID): a file the command makes setuid
// in the work tree would run as lemmings' user for any local user who can
// reach it (a copy of /bin/sh, chmod 4755: root's, in issue 43). Landlock
// cannot refuse a mode, and a nosuid mount only stops the bit from working
// through that mount, inside: on disk the bit stays and works everywhere
// else. So every call that sets a mode fails with EPERM when the mode has
// S_ISUID or S_ISGID: chmod, fchmod, fchmodat, fchmodat2, mknod, mknodat,
// and open, openat and creat creating a file (O_CREAT, O_TMPFILE); a mode
// without the bits works as before. openat2, whose mode is in a struct
// seccomp cannot read, fails with ENOSYS (callers fall back to openat).
// mkdir needs no rule: it never sets S_ISGID itself.
//
// File capabilities (rules.fileCaps, when lemmings runs as root): root in
// the namespaces, mapped to the host's, could give a file capabilities that
// work outside (security.capability, written as the host root's). seccomp
// cannot read an attribute's name, but the kernel takes a capability only
// of 20 or 24 bytes (its v2 and v3 forms), sizes no POSIX ACL has (4 + 8 per
// entry, 3 entries at least): setxattr, lsetxattr and fsetxattr of such a
// size fail with EPERM, and setxattrat, whose size is in a struct, with
// ENOSYS. cp -a and ACLs keep working; CAP_SETFCAP stays (without it, root
// cannot map itself in a nested user namespace: bubblewrap in a coding CLI).
//
// Either set of rules makes io_uring_setup fail with ENOSYS (callers fall
// back to plain system calls): its requests make sockets and open files past
// seccomp.

// seccompArch is one system call table the filter knows.
type seccompArch struct {
	audit                                 uint32
	socket, socketpair, ioUring, sockcall uint32 // sockcall 0: none
	openat2                               uint32
	modes                                 []modeCall // the calls that set a file's mode
	xattrs                                []uint32   // setxattr, lsetxattr, fsetxattr (the size is argument 3)
	setxattrat                            uint32
}

// modeCall is a system call that sets a file's mode from an argument.
type modeCall struct {
	nr    uint32
	mode  uint32 // the argument holding the mode
	flags int    // the argument holding open's flags (the mode counts only when they create a file); -1: none
}

// filterRules say what the filter refuses.
type filterRules struct {
	unix     bool // UNIX sockets
	setID    bool // setuid and setgid bits
	fileCaps bool // extended attributes of a capability's size
}

// Offsets in struct seccomp_data (little-endian: an argument's low half first).
const (
	seccompNR    = 0
	seccompAudit = 4
	seccompArg0  = 16
	seccompArg1  = 24
)

// seccompArg is the offset of argument n's low half.
func seccompArg(n uint32) uint32 { return seccompArg0 + 8*n }

const (
	x32Bit       = 0x40000000 // amd64's x32 calls: the same numbers with this bit
	sockTypeMask = 0xf        // SOCK_NONBLOCK and SOCK_CLOEXEC above it
	setIDBits    = 0o6000     // S_ISUID | S_ISGID
	xattrCapsV2  = 20         // the sizes of security.capability the kernel takes
	xattrCapsV3  = 24
	createFlags  = 0x400040 // O_CREAT | __O_TMPFILE (the generic values, amd64's and arm's too)
)

// bpfProg assembles jumps by label: each instruction may name where its
// true and false branches go ("" = the next one).
type bpfIns struct {
	ins    unix.SockFilter
	label  string
	jt, jf string
}

func stmt(code uint16, k uint32) bpfIns { return bpfIns{ins: unix.SockFilter{Code: code, K: k}} }

func jeq(k uint32, jt, jf string) bpfIns {
	return bpfIns{ins: unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k}, jt: jt, jf: jf}
}

func labeled(l string, i bpfIns) bpfIns { i.label = l; return i }

func ret(k uint32) bpfIns { return stmt(unix.BPF_RET|unix.BPF_K, k) }

// buildFilter is the filter of rules for the native table and, where the
// kernel runs them, the 32-bit one.
func buildFilter(r filterRules, native seccompArch, compat *seccompArch) ([]unix.SockFilter, error) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosy = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill  = unix.SECCOMP_RET_KILL_PROCESS
	)
	ld := func(off uint32) bpfIns { return stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
	and := func(k uint32) bpfIns { return stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, k) }
	// Each table ends with returns of its own, so that no jump is longer
	// than a table.
	table := func(prefix string, a seccompArch, mask bool) []bpfIns {
		l := func(name string) string { return prefix + "-" + name }
		p := []bpfIns{labeled(prefix, ld(seccompNR))}
		if mask {
			p = append(p, and(^uint32(x32Bit)))
		}
		var blocks []bpfIns
		if r.unix {
			if a.sockcall != 0 {
				p = append(p, jeq(a.sockcall, l("deny"), ""))
			}
			p = append(p, jeq(a.socket, l("domain"), ""), jeq(a.socketpair, l("pair"), ""))
			blocks = append(blocks,
				labeled(l("domain"), ld(seccompArg0)), jeq(unix.AF_UNIX, l("deny"), l("allow")),
				labeled(l("pair"), ld(seccompArg1)), and(sockTypeMask),
				jeq(unix.SOCK_DGRAM, l("deny"), l("allow")))
		}
		if r.unix || r.setID || r.fileCaps {
			p = append(p, jeq(a.ioUring, l("nosys"), ""))
		}
		if r.setID {
			p = append(p, jeq(a.openat2, l("nosys"), ""))
			for i, m := range a.modes {
				block := l(fmt.Sprintf("mode%d", i))
				p = append(p, jeq(m.nr, block, ""))
				first := true
				if m.flags >= 0 {
					blocks = append(blocks, labeled(block, ld(seccompArg(uint32(m.flags)))), and(createFlags), jeq(0, l("allow"), ""))
					first = false
				}
				load := ld(seccompArg(m.mode))
				if first {
					load = labeled(block, load)
				}
				blocks = append(blocks, load, and(setIDBits), jeq(0, l("allow"), l("deny")))
			}
		}
		if r.fileCaps {
			p = append(p, jeq(a.setxattrat, l("nosys"), ""))
			for _, nr := range a.xattrs {
				p = append(p, jeq(nr, l("xattr"), ""))
			}
			blocks = append(blocks, labeled(l("xattr"), ld(seccompArg(3))),
				jeq(xattrCapsV2, l("deny"), ""), jeq(xattrCapsV3, l("deny"), l("allow")))
		}
		p = append(p, stmt(unix.BPF_JMP|unix.BPF_JA, 0)) // to allow, below
		p[len(p)-1].jt = l("allow")
		p = append(p, blocks...)
		return append(p,
			labeled(l("allow"), ret(allow)),
			labeled(l("deny"), ret(eperm)),
			labeled(l("nosys"), ret(enosy)))
	}
	var p []bpfIns
	p = append(p, ld(seccompAudit), jeq(native.audit, "native", ""))
	if compat != nil {
		p = append(p, jeq(compat.audit, "compat", ""))
	}
	p = append(p, ret(kill)) // no other table reaches this kernel
	p = append(p, table("native", native, true)...)
	if compat != nil {
		p = append(p, table("compat", *compat, false)...)
	}
	at := map[string]int{}
	for i, in := range p {
		if in.label != "" {
			at[in.label] = i
		}
	}
	out := make([]unix.SockFilter, len(p))
	for i, in := range p {
		ja := in.ins.Code == unix.BPF_JMP|unix.BPF_JA
		for _, br := range []struct {
			label string
			off   *uint8
		}{{in.jt, &in.ins.Jt}, {in.jf, &in.ins.Jf}} {
			if br.label == "" {
				continue
			}
			to, ok := at[br.label]
			if !ok || to <= i || to-i-1 > 255 && !ja {
				return nil, fmt.Errorf("seccomp filter: bad jump to %q at %d", br.label, i)
			}
			if ja { // an unconditional jump carries its offset in K
				in.ins.K = uint32(to - i - 1)
				continue
			}
			*br.off = uint8(to - i - 1)
		}
		out[i] = in.ins
	}
	return out, nil
}

// installFilter installs the filter of rules on the calling thread, which
// then execs (no_new_privs is already set by Landlock's setup).
func installFilter(r filterRules) error {
	if seccompNative.audit == 0 {
		return fmt.Errorf("seccomp: no filter for this architecture")
	}
	prog, err := buildFilter(r, seccompNative, seccompCompat)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(no_new_privs): %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp(set_mode_filter): %w", errno)
	}
	return nil
}
