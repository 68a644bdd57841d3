package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/localtoken"
)

// requireSandbox fails under CI and skips elsewhere when the machine
// cannot confine: the sandbox is a promise CI must check.
func requireSandbox(t testing.TB, namespaces bool) Level {
	t.Helper()
	l := Probe()
	missing := ""
	switch {
	case l.Landlock == 0:
		missing = l.why()
	case namespaces && (!l.Namespaces || !l.Mounts):
		missing = "namespaces: " + l.NamespaceErr
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("the sandbox is missing on this CI machine: %s", missing)
		}
		t.Skipf("no sandbox here: %s", missing)
	}
	return l
}

// newBox makes a box whose caches live in the test's temp dir; without
// namespaces it confines with Landlock alone, as on a kernel without them.
func newBox(t *testing.T, namespaces bool) *Box {
	t.Helper()
	requireSandbox(t, namespaces)
	b, err := New(Config{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if !namespaces {
		b.level.Namespaces, b.level.Mounts = false, false
		b.level.NamespaceErr = "turned off by the test"
	}
	return b
}

type ran struct {
	out  string
	code int
}

// sh runs a script confined in dir.
func sh(t *testing.T, b *Box, s Spec, script string) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, cleanup, err := b.Command(ctx, s, "sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ran{out.String(), code}
}

func bothModes(t *testing.T, f func(t *testing.T, b *Box)) {
	for _, ns := range []bool{true, false} {
		name := "landlock and namespaces"
		if !ns {
			name = "landlock alone"
		}
		t.Run(name, func(t *testing.T) { f(t, newBox(t, ns)) })
	}
}

func TestTheWorkDirAndTheTempDirAreWritableAndNothingElse(t *testing.T) {
	bothModes(t, func(t *testing.T, b *Box) {
		work, outside := t.TempDir(), t.TempDir()
		home, _ := os.UserHomeDir()
		marker := fmt.Sprintf(".lemmings-sandbox-test-%d", time.Now().UnixNano())
		r := sh(t, b, Spec{Dir: work}, `
echo in > inside.txt && echo wrote-work
mkdir -p sub/dir && mv inside.txt sub/dir/ && echo moved
echo tmp > "$TMPDIR/t" && echo wrote-tmp
echo home > "$HOME/h" && echo wrote-private-home
echo out > `+outside+`/escaped && echo WROTE-OUTSIDE
echo home > `+filepath.Join(home, marker)+` && echo WROTE-REAL-HOME
echo x > /tmp/`+marker+` && echo WROTE-SYSTEM-TMP
true`)
		defer os.Remove(filepath.Join(home, marker))
		defer os.Remove(filepath.Join("/tmp", marker))
		for _, want := range []string{"wrote-work", "moved", "wrote-tmp", "wrote-private-home"} {
			if !strings.Contains(r.out, want) {
				t.Errorf("%s missing:\n%s", want, r.out)
			}
		}
		for _, bad := range []string{"WROTE-OUTSIDE", "WROTE-REAL-HOME", "WROTE-SYSTEM-TMP"} {
			if strings.Contains(r.out, bad) {
				t.Errorf("%s:\n%s", bad, r.out)
			}
		}
		if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
			t.Error("a file was written outside the work dir")
		}
		if _, err := os.Stat(filepath.Join(work, "sub", "dir", "inside.txt")); err != nil {
			t.Errorf("the work dir's file is missing: %v", err)
		}
	})
}

// A worktree's .git is a file pointing into the user's repository: the
// hooks there must stay out of reach, and so must the pointer itself.
func TestAWorktreeCannotPlantAHookInTheRepository(t *testing.T) {
	bothModes(t, func(t *testing.T, b *Box) {
		repo := t.TempDir()
		wt := filepath.Join(t.TempDir(), "wt")
		for _, args := range [][]string{{"init", "-q", repo}, {"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"},
			{"-C", repo, "worktree", "add", "-q", wt}} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		r := sh(t, b, Spec{Dir: wt}, `
common=$(git rev-parse --path-format=absolute --git-common-dir) && echo "common $common"
git status --short >/dev/null && git log --oneline >/dev/null && echo git-reads
printf '#!/bin/sh\ntouch /tmp/pwned\n' > "$common/hooks/post-commit" && echo PLANTED
git config core.hooksPath /tmp && echo CONFIGURED
echo "gitdir: /tmp/evil" > .git && echo REDIRECTED`)
		if !strings.Contains(r.out, "common "+filepath.Join(repo, ".git")) || !strings.Contains(r.out, "git-reads") {
			t.Errorf("git could not read the repository from the worktree:\n%s", r.out)
		}
		for _, bad := range []string{"PLANTED", "CONFIGURED"} {
			if strings.Contains(r.out, bad) {
				t.Errorf("%s:\n%s", bad, r.out)
			}
		}
		if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "post-commit")); err == nil {
			t.Error("a hook was planted in the repository")
		}
		if b.level.Mounts && strings.Contains(r.out, "REDIRECTED") {
			t.Errorf("the worktree's .git pointer was rewritten:\n%s", r.out)
		}
	})
}

func TestTheEnvironmentHoldsNoKeyAndAPrivateHome(t *testing.T) {
	t.Setenv("OPENROUTER_API_KEY", "sk-or-v1-secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("MY_SETTING", "passed-on-purpose")
	b := newBox(t, true)
	b.cfg.Env = []string{"MY_SETTING"}
	r := sh(t, b, Spec{Dir: t.TempDir(), Extra: []string{"CI=true"}}, "env")
	for _, bad := range []string{"OPENROUTER", "sk-or-v1", "AWS_", "aws-secret"} {
		if strings.Contains(r.out, bad) {
			t.Errorf("%s reached the command:\n%s", bad, r.out)
		}
	}
	home, _ := os.UserHomeDir()
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "MY_SETTING=passed-on-purpose", "CI=true", "HOME=" + b.home, "GOCACHE=" + filepath.Join(b.cache, "go-build")} {
		if !strings.Contains(r.out, want+"\n") {
			t.Errorf("%s missing:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, "HOME="+home+"\n") {
		t.Errorf("the real home was passed:\n%s", r.out)
	}
}

func TestNetworkOffKeepsLoopbackInsideAndTheHostOutside(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	// connect tries a TCP connection to the host's listener with bash's
	// /dev/tcp, through python when bash is missing.
	connect := fmt.Sprintf(`python3 -c 'import socket; socket.create_connection(("127.0.0.1", %d), timeout=5); print("REACHED-HOST")' 2>&1 | tail -1`, port)
	serve := `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); socket.create_connection(s.getsockname(), timeout=5); print("loopback-inside")' 2>&1 | tail -1`
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed for the socket checks")
	}
	t.Run("landlock and namespaces", func(t *testing.T) {
		b := newBox(t, true)
		r := sh(t, b, Spec{Dir: t.TempDir()}, connect+"\n"+serve)
		if strings.Contains(r.out, "REACHED-HOST") || !strings.Contains(r.out, "loopback-inside") {
			t.Errorf("want the host unreachable and loopback working:\n%s", r.out)
		}
		r = sh(t, b, Spec{Dir: t.TempDir(), Network: true}, connect)
		if !strings.Contains(r.out, "REACHED-HOST") {
			t.Errorf("a command with network could not reach the host:\n%s", r.out)
		}
	})
	t.Run("landlock alone", func(t *testing.T) {
		b := newBox(t, false)
		r := sh(t, b, Spec{Dir: t.TempDir()}, connect)
		if strings.Contains(r.out, "REACHED-HOST") || !strings.Contains(r.out, "Permission denied") {
			t.Errorf("want the connection denied:\n%s", r.out)
		}
	})
}

func TestWhatTheCommandLeftRunningDiesWithIt(t *testing.T) {
	b := newBox(t, true)
	dir := t.TempDir()
	marker := filepath.Join(dir, "late.txt")
	r := sh(t, b, Spec{Dir: dir}, `setsid sh -c 'sleep 30; echo late > `+marker+`' >/dev/null 2>&1 < /dev/null & echo started`)
	if !strings.Contains(r.out, "started") {
		t.Fatalf("%s", r.out)
	}
	// The orphan lived in the command's pid namespace: it is gone, so
	// nothing is left to write into the work dir later.
	out, _ := exec.Command("pgrep", "-f", "echo late > "+marker).Output()
	if pids := strings.TrimSpace(string(out)); pids != "" {
		t.Errorf("the orphan survives: %s", pids)
	}
}

func TestSignalsCannotReachOutsideTheSandbox(t *testing.T) {
	l := requireSandbox(t, false)
	if l.Landlock < 6 {
		t.Skip("signal scoping needs Landlock ABI 6")
	}
	b := newBox(t, false)
	victim := exec.Command("sleep", "30")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer victim.Process.Kill()
	r := sh(t, b, Spec{Dir: t.TempDir()}, "kill -TERM "+strconv.Itoa(victim.Process.Pid)+" && echo KILLED")
	if strings.Contains(r.out, "KILLED") {
		t.Errorf("the sandbox signalled a process outside:\n%s", r.out)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the victim is gone: %v", err)
	}
}

func TestModeOffRunsUnconfinedButKeepsTheEnvironmentMinimal(t *testing.T) {
	t.Setenv("OPENROUTER_API_KEY", "sk-or-v1-secret")
	b, err := New(Config{Mode: ModeOff, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	outside := t.TempDir()
	r := sh(t, b, Spec{Dir: t.TempDir()}, "echo x > "+outside+"/f && echo wrote; env")
	if !strings.Contains(r.out, "wrote") || strings.Contains(r.out, "sk-or-v1") {
		t.Errorf("%s", r.out)
	}
	if !strings.Contains(b.Warning(), "sandbox.mode: off") || !strings.Contains(b.Describe(), "off") {
		t.Errorf("warning %q, describe %q", b.Warning(), b.Describe())
	}
}

func TestRequiredRefusesWithoutLandlock(t *testing.T) {
	b := &Box{cfg: Config{Mode: ModeRequired}, level: Level{LandlockErr: "this kernel has no Landlock (Linux 5.13 or later)"}}
	err := b.Check()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "5.13") || !strings.Contains(err.Error(), "sandbox.mode: auto") {
		t.Errorf("%v", err)
	}
	b.cfg.Mode = ModeAuto
	if b.Check() != nil || !strings.Contains(b.Warning(), "no sandbox") {
		t.Errorf("auto: %v, %q", b.Check(), b.Warning())
	}
}

// A command gets pseudo-terminals of its own (tests of terminal programs
// need them), never the user's: the sandbox mounts its own devpts.
func TestPseudoTerminalsAreTheSandboxsOwn(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is needed")
	}
	for _, network := range []bool{false, true} {
		b := newBox(t, true)
		r := sh(t, b, Spec{Dir: t.TempDir(), Network: network}, `script -qc "echo pty-works" /dev/null; ls /dev/pts`)
		if !strings.Contains(r.out, "pty-works") {
			t.Errorf("network %v: no pseudo-terminal:\n%s", network, r.out)
		}
		host, _ := os.ReadDir("/dev/pts")
		for _, e := range host {
			if e.Name() != "ptmx" && strings.Contains(r.out, "\n"+e.Name()+"\n") {
				t.Errorf("network %v: the host's terminal %s is visible:\n%s", network, e.Name(), r.out)
			}
		}
	}
}

// A command may nest a sandbox of its own (Codex runs its commands under
// bubblewrap, which writes /proc/self/uid_map) with or without the network,
// and the /proc it may write is its own: no host process is listed there.
func TestACommandMayNestASandboxAndSeesOnlyItsOwnProcesses(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare(1) is needed")
	}
	for _, network := range []bool{false, true} {
		b := newBox(t, true)
		r := sh(t, b, Spec{Dir: t.TempDir(), Network: network}, `unshare -Ur true && echo nested-ok; ls /proc | grep -c '^[0-9]'`)
		if !strings.Contains(r.out, "nested-ok") {
			t.Errorf("network %v: a nested user namespace was refused:\n%s", network, r.out)
		}
		lines := strings.Fields(r.out)
		if n, err := strconv.Atoi(lines[len(lines)-1]); err != nil || n > 5 {
			t.Errorf("network %v: the sandbox's /proc lists %s processes, want only its own few:\n%s", network, lines[len(lines)-1], r.out)
		}
	}
}

// The attack of issue 33: a test the model wrote connected to a database's
// pathname socket under /tmp. No kind of UNIX socket outside reaches the
// sandbox, with or without the network, whatever Landlock's ABI: a stream
// listener on a path, an abstract one, and a datagram socket sent to by
// path from a socketpair. Stream socketpairs (pipes between processes)
// still work.
func TestUnixSocketsOutsideAreOutOfReach(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed for the socket checks")
	}
	sock := filepath.Join(os.TempDir(), fmt.Sprintf("lemmings-pg-%d.sock", time.Now().UnixNano()))
	dgram := sock + ".dgram"
	abstract := fmt.Sprintf("@lemmings-test-%d", time.Now().UnixNano())
	accepted := make(chan string, 10)
	for _, addr := range []string{sock, abstract} {
		ln, err := net.Listen("unix", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- addr
				c.Close()
			}
		}()
	}
	pc, err := net.ListenPacket("unixgram", dgram)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 64)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			accepted <- "datagram " + string(buf[:n])
		}
	}()
	script := fmt.Sprintf(`python3 - <<'PY' 2>&1
import socket
for name, addr in (("pathname", %q), ("abstract", "\0" + %q[1:])):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(addr); print("REACHED", name)
    except OSError as e:
        print("refused", name, e)
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); a.sendto(b"x", %q); print("REACHED datagram")
except OSError as e:
    print("refused datagram", e)
a, b = socket.socketpair(); a.sendall(b"p"); print("pair-works" if b.recv(1) == b"p" else "pair-broken")
PY`, sock, abstract, dgram)
	modes := []struct {
		name       string
		namespaces bool
		network    bool
	}{{"namespaces, network off", true, false}, {"namespaces, network on", true, true}, {"landlock alone, network off", false, false}, {"landlock alone, network on", false, true}}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			b := newBox(t, m.namespaces)
			r := sh(t, b, Spec{Dir: t.TempDir(), Network: m.network}, script)
			if strings.Contains(r.out, "REACHED") || strings.Count(r.out, "refused") != 3 || !strings.Contains(r.out, "pair-works") {
				t.Errorf("want every UNIX socket outside refused and a stream pair working:\n%s", r.out)
			}
			select {
			case a := <-accepted:
				t.Errorf("the listener outside got a connection on %s", a)
			default:
			}
		})
	}
}

// The access tokens of lemmings serve and mcp --http are out of a confined
// command's reach (a coding CLI has the network and could act on every run
// with them), even a token written after the command started; with mounts
// an empty tmpfs covers their folder, with Landlock alone the read rule
// leaves it out. Files beside it stay readable.
func TestTheLocalServersTokensAreHidden(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	tok, path, err := localtoken.Load("serve")
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(state, "lemmings", "beside.txt")
	if err := os.WriteFile(beside, []byte("readable-beside"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name                string
		namespaces, network bool
	}{{"mounts, network off", true, false}, {"mounts, network on", true, true}, {"landlock alone", false, false}} {
		t.Run(m.name, func(t *testing.T) {
			b := newBox(t, m.namespaces)
			later := filepath.Join(filepath.Dir(path), "later.token")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd, cleanup, err := b.Command(ctx, Spec{Dir: t.TempDir(), Network: m.network}, "sh", "-c",
				`cat "`+path+`"; sleep 1; cat "`+later+`"; cat "`+beside+`"; echo; head -c 20 /etc/passwd && echo; ls "`+filepath.Dir(filepath.Dir(path))+`"`)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(later, []byte("later-secret"), 0o600); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(later)
			_ = cmd.Wait()
			if strings.Contains(out.String(), tok) || strings.Contains(out.String(), "later-secret") {
				t.Errorf("a token was read:\n%s", out.String())
			}
			if !strings.Contains(out.String(), "readable-beside") || !strings.Contains(out.String(), "root:") || !strings.Contains(out.String(), "beside.txt") {
				t.Errorf("what is beside the tokens must stay readable:\n%s", out.String())
			}
		})
	}
}

// Reproduction 14 of issue 43: lemmings mcp --http --token-file kept its
// token in a file of the user's choosing, outside the tokens' folder, and a
// confined command read it. A token file named to localtoken.Hide is
// hidden as the folder is (with mounts: /dev/null bound over it); the
// files beside it stay readable.
func TestATokenFileKeptElsewhereIsHidden(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	elsewhere := t.TempDir()
	path := filepath.Join(elsewhere, "mcp.token")
	if err := os.WriteFile(path, []byte("token-kept-elsewhere"), 0o600); err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(elsewhere, "beside.txt")
	if err := os.WriteFile(beside, []byte("readable-beside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := localtoken.Hide(path); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name       string
		namespaces bool
	}{{"mounts", true}, {"landlock alone", false}} {
		t.Run(m.name, func(t *testing.T) {
			b := newBox(t, m.namespaces)
			r := sh(t, b, Spec{Dir: t.TempDir()}, `cat "`+path+`"; echo; cat "`+beside+`"`)
			if strings.Contains(r.out, "token-kept-elsewhere") {
				t.Errorf("the token was read:\n%s", r.out)
			}
			if !strings.Contains(r.out, "readable-beside") {
				t.Errorf("the file beside it must stay readable:\n%s", r.out)
			}
		})
	}
	if err := localtoken.Unhide(path); err != nil || len(localtoken.Hidden()) != 0 {
		t.Errorf("Unhide: %v, still hidden: %v", err, localtoken.Hidden())
	}
}

// setidScript tries every way a command has to leave a setuid or setgid
// file (or, as root, a file with capabilities) in its work folder and its
// temp folder: issue 43's setuid shell, which any local user could run as
// lemmings' user.
const setidScript = `
for d in . "$TMPDIR"; do
  cp /bin/sh "$d/suidsh" && chmod 4755 "$d/suidsh" && echo SETUID-CHMOD
  cp /bin/sh "$d/sgidsh" && chmod g+s "$d/sgidsh" && echo SETGID-CHMOD
  cp /bin/sh "$d/plain" && chmod 0755 "$d/plain" && echo chmod-works
done
mkdir setgid-dir && chmod 2755 setgid-dir && echo SETGID-DIR
cp -a plain plain-copy && echo cp-a-works
python3 - <<'PY' 2>&1
import os, shutil
def attempt(what, f):
    try:
        f()
        print(what)
    except OSError as e:
        print("refused", what, e.errno)
attempt("SETUID-OPEN", lambda: os.close(os.open("created", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("SETUID-OPENAT", lambda: os.close(os.open("created-at", os.O_CREAT | os.O_WRONLY, 0o6755, dir_fd=os.open(".", os.O_RDONLY))))
attempt("SETUID-MKNOD", lambda: os.mknod("made", 0o104755))
attempt("SETUID-FCHMOD", lambda: os.chmod(os.open("plain", os.O_RDONLY), 0o4755))
attempt("open-works", lambda: os.close(os.open("made-plain", os.O_CREAT | os.O_WRONLY, 0o755)))
# A file capability (cap_setuid, v2): root in the namespace could set one.
cap = bytes.fromhex("0000000280000000000000000000000000000000")
shutil.copy("/bin/sh", "capsh")
attempt("FILE-CAPABILITY", lambda: os.setxattr("capsh", "security.capability", cap))
PY
true`

// No setuid or setgid file survives a confined command: the bit is refused
// (seccomp), whatever the call that asks for it, and a mode without it
// still works.
func TestNoSetuidOrSetgidFileSurvivesACommand(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	check := func(t *testing.T, b *Box) {
		if !b.level.Seccomp {
			t.Skipf("no seccomp here: %s", b.level.SeccompErr)
		}
		work := t.TempDir()
		var tmp string
		s := Spec{Dir: work}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd, cleanup, err := b.Command(ctx, s, "sh", "-c", setidScript)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range cmd.Env {
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
				tmp = v
			}
		}
		out, _ := cmd.CombinedOutput()
		for _, want := range []string{"chmod-works", "open-works", "cp-a-works"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s missing: a mode without the bits must work:\n%s", want, out)
			}
		}
		for _, bad := range []string{"SETUID-CHMOD", "SETGID-CHMOD", "SETGID-DIR", "SETUID-OPEN", "SETUID-OPENAT", "SETUID-MKNOD", "SETUID-FCHMOD", "FILE-CAPABILITY"} {
			if strings.Contains(string(out), bad+"\n") {
				t.Errorf("%s was allowed:\n%s", bad, out)
			}
		}
		for _, dir := range []string{work, tmp} {
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
					t.Errorf("%s is %v", p, fi.Mode())
				}
				return nil
			})
		}
		cleanup()
	}
	bothModes(t, check)
	// Landlock ABI 9 closes UNIX sockets itself: the filter then holds the
	// setuid rules alone.
	t.Run("the setuid rules alone", func(t *testing.T) {
		b := newBox(t, true)
		b.level.UnixFilter = false
		check(t, b)
	})
}
