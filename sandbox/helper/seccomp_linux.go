package helper

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock below ABI 9 cannot stop a connect to a pathname UNIX socket
// (PostgreSQL's, Docker's, the session bus, whose systemd runs any command
// asked of it): a network namespace does not isolate them. A seccomp
// filter on the exec'ing thread takes UNIX sockets away instead:
//
//   - socket(AF_UNIX, …) fails with EPERM, abstract sockets included;
//   - socketpair(…, SOCK_DGRAM, …) fails too: a datagram socket can name
//     any socket's path in sendto; stream pairs stay (pipes between
//     processes: Node's child processes, Python's asyncio);
//   - io_uring_setup fails with ENOSYS (callers fall back to plain system
//     calls): its requests make sockets and connect past seccomp;
//   - on amd64 the 32-bit entry points are filtered the same, and their
//     socketcall multiplexer, whose arguments seccomp cannot read, fails.
//
// seccomp cannot read the address a connect names, so UNIX sockets go as
// a whole: a test that serves on one of its own fails with EPERM. Landlock
// ABI 9 checks the path itself, and the filter is then left out.

// seccompArch is one system call table the filter knows.
type seccompArch struct {
	audit                                 uint32
	socket, socketpair, ioUring, sockcall uint32 // sockcall 0: none
}

// Offsets in struct seccomp_data (little-endian: an argument's low half first).
const (
	seccompNR    = 0
	seccompAudit = 4
	seccompArg0  = 16
	seccompArg1  = 24
)

const (
	x32Bit       = 0x40000000 // amd64's x32 calls: the same numbers with this bit
	sockTypeMask = 0xf        // SOCK_NONBLOCK and SOCK_CLOEXEC above it
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

// unixSocketFilter is the filter for the native table and, where the
// kernel runs them, the 32-bit one.
func unixSocketFilter(native seccompArch, compat *seccompArch) ([]unix.SockFilter, error) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosy = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill  = unix.SECCOMP_RET_KILL_PROCESS
	)
	ld := func(off uint32) bpfIns { return stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
	table := func(prefix string, a seccompArch, mask bool) []bpfIns {
		p := []bpfIns{labeled(prefix, ld(seccompNR))}
		if mask {
			p = append(p, stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, ^uint32(x32Bit)))
		}
		if a.sockcall != 0 {
			p = append(p, jeq(a.sockcall, "deny", ""))
		}
		return append(p,
			jeq(a.socket, "domain", ""),
			jeq(a.socketpair, "pair", ""),
			jeq(a.ioUring, "nosys", "allow"))
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
	p = append(p,
		labeled("domain", ld(seccompArg0)), jeq(unix.AF_UNIX, "deny", "allow"),
		labeled("pair", ld(seccompArg1)), stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, sockTypeMask),
		jeq(unix.SOCK_DGRAM, "deny", "allow"),
		labeled("allow", ret(allow)),
		labeled("deny", ret(eperm)),
		labeled("nosys", ret(enosy)))
	at := map[string]int{}
	for i, in := range p {
		if in.label != "" {
			at[in.label] = i
		}
	}
	out := make([]unix.SockFilter, len(p))
	for i, in := range p {
		for _, br := range []struct {
			label string
			off   *uint8
		}{{in.jt, &in.ins.Jt}, {in.jf, &in.ins.Jf}} {
			if br.label == "" {
				continue
			}
			to, ok := at[br.label]
			if !ok || to <= i || to-i-1 > 255 {
				return nil, fmt.Errorf("seccomp filter: bad jump to %q at %d", br.label, i)
			}
			*br.off = uint8(to - i - 1)
		}
		out[i] = in.ins
	}
	return out, nil
}

// denyUnixSockets installs the filter on the calling thread, which then
// execs (no_new_privs is already set by Landlock's setup).
func denyUnixSockets() error {
	if seccompNative.audit == 0 {
		return fmt.Errorf("seccomp: no filter for this architecture")
	}
	prog, err := unixSocketFilter(seccompNative, seccompCompat)
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
