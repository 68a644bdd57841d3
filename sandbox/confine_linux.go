package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lemmings-dev/lemmings/internal/localtoken"
	"github.com/lemmings-dev/lemmings/sandbox/internal/helperplan"
)

// selfExe is the running binary, whatever became of its file since.
const selfExe = "/proc/self/exe"

// devices every confined command may read and write. Not /dev/tty: that is
// the terminal lemmings was started from, whose input a command could fake
// (TIOCSTI) where Landlock cannot restrict ioctl (below ABI 5).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// Probe says what confinement this machine offers. It runs the helper once
// per process, in the namespaces, to see each step work.
var Probe = sync.OnceValue(probe)

// helperNeeded: confining a command here starts the helper.
const helperNeeded = true

func probe() Level {
	var l Level
	if !helperplan.Linked() {
		return Level{LandlockErr: ErrNoHelper.Error(), NamespaceErr: ErrNoHelper.Error()}
	}
	l.Landlock, l.LandlockErr = landlockABI()
	l.UnixFilter = l.Landlock > 0 && l.Landlock < abiResolveUnix
	l.Seccomp = l.Landlock > 0
	defer func() {
		if l.Landlock == 0 {
			l.UnixFilter, l.Seccomp = false, false
		}
	}()
	rep, err := runProbe(true, l.Landlock)
	switch {
	case err != nil:
		l.NamespaceErr = "no user namespaces: " + err.Error()
		// Landlock alone must still be seen to work.
		if l.Landlock > 0 {
			rep, err := runProbe(false, l.Landlock)
			if err != nil || rep.LandlockErr != "" {
				l.Landlock, l.LandlockErr = 0, "Landlock failed: "+firstNonEmpty(rep.LandlockErr, errString(err))
			}
			l.seccompFailed(rep.SeccompErr)
		}
		return l
	case rep.LandlockErr != "":
		l.Landlock, l.LandlockErr = 0, "Landlock failed: "+rep.LandlockErr
	}
	l.seccompFailed(rep.SeccompErr)
	if !rep.Loopback {
		l.NamespaceErr = rep.Err
		return l
	}
	l.Namespaces, l.Mounts = true, rep.Mounts
	if rep.Err != "" {
		// Mounts refused (lemmings itself confined, or a container): the
		// network and pid namespaces still serve.
		l.NamespaceErr = rep.Err
	}
	return l
}

// runProbe starts the helper in probe mode, in the namespaces or not.
func runProbe(namespaces bool, abi int) (helperplan.ProbeReport, error) {
	var rep helperplan.ProbeReport
	dir, err := os.MkdirTemp("", "lemmings-sandbox-probe-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	p := helperplan.Plan{Writable: []string{dir}, Devices: devices, Landlock: abi, Namespaces: namespaces,
		NetNS: namespaces, PidNS: namespaces, Mounts: namespaces, DenyUnix: abi > 0 && abi < abiResolveUnix,
		NoSetID: abi > 0, NoFileCaps: abi > 0 && runsAsRoot(), Probe: true}
	data, _ := json.Marshal(p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, selfExe, string(data))
	cmd.Args[0] = helperplan.Arg0
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if namespaces {
		cmd.SysProcAttr = namespaceAttr(true, true)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return rep, fmt.Errorf("%v %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return rep, fmt.Errorf("the helper answered %q", out)
	}
	return rep, nil
}

// seccompFailed records that the seccomp filter could not be applied.
func (l *Level) seccompFailed(err string) {
	if err != "" {
		l.Seccomp, l.SeccompErr = false, err
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// namespaceAttr starts the helper in new user and mount namespaces (and
// network and pid ones), as the same user and group inside as outside.
// Outside root, the helper keeps the two capabilities it needs for its
// setup (loopback, mounts) as ambient ones and drops them before it execs.
func namespaceAttr(net, pid bool) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS)
	if net {
		flags |= syscall.CLONE_NEWNET
	}
	if pid {
		flags |= syscall.CLONE_NEWPID
	}
	a := &syscall.SysProcAttr{
		Setpgid:     true,
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	if uid != 0 {
		a.AmbientCaps = []uintptr{unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN}
	}
	return a
}

// confine turns cmd into a start of the helper that confines it.
func (b *Box) confine(cmd *exec.Cmd, s Spec, tmp string) (func(), error) {
	release := func() {}
	if b.cfg.Mode == ModeOff || b.level.Landlock == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return release, nil
	}
	if cmd.Err != nil { // the program was not found
		return release, cmd.Err
	}
	network := s.Network || b.cfg.Network
	p := helperplan.Plan{
		Path:     cmd.Path,
		Writable: b.writable(s, tmp),
		Devices:  devices,
		Landlock: b.level.Landlock,
		// seccomp: UNIX sockets where Landlock cannot close them, setuid
		// and setgid bits always, and file capabilities when the command
		// runs as root (helper/seccomp_linux.go).
		DenyUnix:   b.level.UnixFilter && b.level.Seccomp,
		NoSetID:    b.level.Seccomp,
		NoFileCaps: b.level.Seccomp && runsAsRoot(),
	}
	switch {
	case b.level.Namespaces:
		// Without the network, a network namespace takes it away; with it
		// (a coding CLI calling its model) the host's network stays. A pid
		// namespace always reaps what the command leaves and gives it a
		// /proc of its own: writable there, so a command may nest a sandbox
		// of its own (Codex's bubblewrap writes /proc/self/uid_map) while
		// no host process's /proc entry is in reach.
		p.Namespaces, p.NetNS, p.PidNS, p.Mounts = true, !network, true, b.level.Mounts
		if p.Mounts {
			p.Protect = gitEntries(s.Dir)
			p.Hide = hiddenDirs()
			p.Writable = append(p.Writable, "/dev/shm", "/proc")
			p.Layers, release = b.cacheLayers(tmp)
		} else {
			p.Unreadable = hiddenDirs()
		}
	default:
		p.DenyNet = !network
		p.Unreadable = hiddenDirs()
	}
	data, err := json.Marshal(p)
	if err != nil {
		release()
		return func() {}, fmt.Errorf("sandbox: %w", err)
	}
	args := append([]string{helperplan.Arg0, string(data)}, cmd.Args...)
	cmd.Path, cmd.Args = selfExe, args
	if p.Namespaces {
		cmd.SysProcAttr = namespaceAttr(p.NetNS, p.PidNS)
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	return release, nil
}

// hiddenDirs are the folders and files no confined command may read: the
// access tokens of lemmings' local servers (a coding CLI has the network
// and could act on every run through them), their folder and the token
// files kept elsewhere (mcp --http --token-file, localtoken.Hide). The
// folder is made now if missing, so a token written later is hidden too.
func hiddenDirs() []string {
	dir := localtoken.Dir()
	if dir == "" || os.MkdirAll(dir, 0o700) != nil {
		return nil
	}
	return append([]string{dir}, localtoken.Hidden()...)
}

// gitEntries lists dir's .git (a worktree's pointer file, or a
// repository) to be bound read-only: git metadata stays the user's and
// lemmings', never the model's.
func gitEntries(dir string) []string {
	p := filepath.Join(dir, ".git")
	if _, err := os.Lstat(p); err != nil {
		return nil
	}
	return []string{p}
}

// runsAsRoot: lemmings runs as root, and so does a confined command in its
// namespaces, with the capabilities of root there: it could give a file
// capabilities that work outside (a v3 security.capability of the host's
// root).
func runsAsRoot() bool { return os.Geteuid() == 0 }
