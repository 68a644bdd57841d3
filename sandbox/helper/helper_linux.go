package helper

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/lemmings-dev/lemmings/sandbox/internal/helperplan"

	"golang.org/x/sys/unix"
)

// The helper runs before main: lemmings' own init work (and a test
// binary's) never runs in it, and main never returns to it.
func init() {
	helperplan.MarkLinked()
	if len(os.Args) < 2 || os.Args[0] != helperplan.Arg0 {
		return
	}
	runtime.LockOSThread()
	os.Exit(runHelper(os.Args[1], os.Args[2:]))
}

func runHelper(planJSON string, argv []string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "lemmings sandbox: "+format+"\n", args...)
		return helperplan.ExitSetup
	}
	var p helperplan.Plan
	if err := json.Unmarshal([]byte(planJSON), &p); err != nil {
		return fail("bad plan: %v", err)
	}
	var rep helperplan.ProbeReport
	if p.Namespaces {
		rep = setupNamespaces(p)
		if rep.Err != "" && !p.Probe {
			return fail("%s", rep.Err)
		}
	}
	// Capabilities raised for the setup must not reach the program.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !p.Probe {
		return fail("clear ambient capabilities: %v", err)
	}
	if p.Landlock > 0 {
		rules := landlockRules{abi: p.Landlock, writable: p.Writable, devices: p.Devices, denyNet: p.DenyNet, unreadable: p.Unreadable}
		if p.Mounts {
			rules.terminals = []string{"/dev/ptmx", "/dev/pts"}
		}
		err := restrictThread(rules)
		if err != nil {
			if p.Probe {
				rep.LandlockErr = err.Error()
			} else {
				return fail("%v", err)
			}
		}
	}
	if p.DenyUnix || p.NoSetID || p.NoFileCaps {
		if err := installFilter(filterRules{unix: p.DenyUnix, setID: p.NoSetID, fileCaps: p.NoFileCaps}); err != nil {
			if !p.Probe {
				return fail("%v", err)
			}
			rep.SeccompErr = err.Error()
		}
	}
	if p.Probe {
		_ = json.NewEncoder(os.Stdout).Encode(rep)
		return 0
	}
	if len(argv) == 0 {
		return fail("no program")
	}
	err := syscall.Exec(p.Path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "lemmings sandbox: exec %s: %v\n", p.Path, err)
	if os.IsNotExist(err) {
		return helperplan.ExitNotFound
	}
	return helperplan.ExitSetup
}

// setupNamespaces prepares the new namespaces the helper was started in:
// loopback up, mounts private, a /proc of the new pid namespace, a private
// /dev/shm and /dev/pts (the user's terminals out of reach), the protected
// paths read-only. In a probe, the step that fails is reported.
func setupNamespaces(p helperplan.Plan) helperplan.ProbeReport {
	var rep helperplan.ProbeReport
	if p.NetNS {
		if err := loopbackUp(); err != nil {
			return helperplan.ProbeReport{Err: "bring loopback up: " + err.Error()}
		}
		rep.Loopback = true
	}
	if !p.Mounts {
		return rep
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"make mounts private", func() error { return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "") }},
		{"mount /proc", func() error {
			if !p.PidNS {
				return nil // the host's /proc matches the host's pids
			}
			return unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
		}},
		{"mount /dev/shm", func() error {
			return unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777")
		}},
		{"mount /dev/pts", mountPts},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			rep.Err = st.what + ": " + err.Error()
			return rep
		}
	}
	for _, path := range p.Protect {
		if err := bindReadOnly(path); err != nil {
			rep.Err = "protect " + path + ": " + err.Error()
			return rep
		}
	}
	for _, path := range p.Hide {
		if err := hide(path); err != nil {
			rep.Err = "hide " + path + ": " + err.Error()
			return rep
		}
	}
	rep.Mounts = true
	for _, l := range p.Layers {
		// A cache that cannot be layered stays a plain, colder one.
		if err := mountLayer(l); err != nil {
			fmt.Fprintf(os.Stderr, "lemmings sandbox: %s stays unlayered: %v\n", l.Target, err)
		}
	}
	return rep
}

// hide covers a folder with an empty, read-only tmpfs, and a file with
// /dev/null, bound read-only: reading it gives nothing.
func hide(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil // gone: nothing to hide
	}
	if fi.IsDir() {
		return unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=000")
	}
	if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, "")
}

// mountPts gives the sandbox a devpts instance of its own: commands get
// pseudo-terminals (tests of terminal programs need them) and cannot open
// the user's.
func mountPts() error {
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	if fi, err := os.Lstat("/dev/ptmx"); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil // already pts/ptmx
	}
	return unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, "")
}

// loopbackUp brings lo up in the new network namespace, so tests can serve
// and connect on 127.0.0.1 while the outside stays unreachable.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// bindReadOnly binds path onto itself read-only. A mount that came from a
// less privileged namespace keeps its flags locked, so they are carried.
func bindReadOnly(path string) error {
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range [][2]uintptr{{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME}} {
		if uintptr(st.Flags)&f[0] != 0 {
			flags |= f[1]
		}
	}
	return unix.Mount("", path, "", flags, "")
}

// mountLayer mounts one overlay of the plan.
func mountLayer(l helperplan.Layer) error {
	opts := "lowerdir=" + l.Lower + ",upperdir=" + l.Upper + ",workdir=" + l.Work
	err := unix.Mount("overlay", l.Target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts+",userxattr")
	if err == unix.EINVAL { // kernels before 5.11 take no userxattr
		err = unix.Mount("overlay", l.Target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts)
	}
	return err
}
