package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/lemmings-dev/lemmings/sandbox/internal/helperplan"

	"github.com/lemmings-dev/lemmings/internal/tempdir"
)

// Mode is how strictly confinement is asked for (sandbox.mode).
type Mode string

// Modes of sandbox.mode.
const (
	// ModeAuto confines with the strongest mechanism the machine offers and
	// warns when it is less than Landlock with namespaces.
	ModeAuto Mode = "auto"
	// ModeRequired refuses to run model-written code without Landlock.
	ModeRequired Mode = "required"
	// ModeOff runs commands unconfined; the environment stays minimal.
	ModeOff Mode = "off"
)

// Modes lists the accepted values of sandbox.mode.
func Modes() []string { return []string{string(ModeAuto), string(ModeRequired), string(ModeOff)} }

// Config is what the user chooses (the sandbox section of the configuration).
type Config struct {
	Mode Mode
	// Writable are absolute paths writable beyond the work directory, the
	// private temp dir and home, and the caches.
	Writable []string
	// Env names variables passed through beyond the built-in allow-list.
	Env []string
	// Network lets every confined command use the network.
	Network bool
	// CacheDir holds the language caches of confined commands (Go build
	// and module caches, npm, pip), one folder per repository below it.
	// Empty: DefaultCacheDir.
	CacheDir string
	// Scope names whose commands the box confines (a run's repository, by
	// its identity: workspace.Repo.CacheScope): each scope has caches of its
	// own, so what one repository's gate writes there (an init() appended
	// to a module's source, a forged build output) never reaches another's
	// build. Empty: the caches of every box without a scope (tests, library
	// callers).
	Scope string
	// Ephemeral keeps the box's caches in its private folder, removed with
	// it (an eval: its exercises are no repository of the user's, and no
	// later eval reads what its tests wrote).
	Ephemeral bool
}

// Ephemeral is the scope run.OpenSandbox takes for Config.Ephemeral.
const Ephemeral = "\x00ephemeral"

// ErrUnavailable is returned by Box.Check when sandbox.mode is required
// and the machine cannot confine.
var ErrUnavailable = errors.New("no sandbox available")

// ErrNoHelper is returned by New when the binary does not link the
// sandbox's helper (package sandbox/helper): a wiring error of the program,
// which would otherwise start a copy of itself that is not the helper.
var ErrNoHelper = errors.New(`sandbox: the helper is not linked into this binary: main (or the test's package) must import _ "github.com/lemmings-dev/lemmings/sandbox/helper"`)

// DefaultCacheDir is where the sandbox's caches live: lemmings' own, never
// the user's Go build or module cache, which every later build of theirs
// would trust.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "lemmings", "sandbox")
}

// ScopeCacheDir is the folder of a scope's caches below cacheDir: named
// for the scope's last path element and a hash of the whole, so two clones
// never share one.
func ScopeCacheDir(cacheDir, scope string) string {
	if scope == "" {
		return filepath.Join(cacheDir, "unscoped")
	}
	sum := sha256.Sum256([]byte(scope))
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, filepath.Base(scope))
	if len(name) > 40 {
		name = name[:40]
	}
	return filepath.Join(cacheDir, "scopes", name+"-"+hex.EncodeToString(sum[:6]))
}

// Box confines the commands of one run (or one eval, one check): it owns a
// private directory (home and per-command temp dirs) removed by Close.
type Box struct {
	cfg   Config
	level Level
	root  string // private: home/ and tmp-*/
	home  string
	cache string // the scope's caches

	goOnce sync.Once
	goEnv  goEnv
}

// New prepares a box. The machine's sandbox support is probed once per
// process (Probe).
func New(cfg Config) (*Box, error) {
	if cfg.Mode == "" {
		cfg.Mode = ModeAuto
	}
	switch cfg.Mode {
	case ModeAuto, ModeRequired, ModeOff:
	default:
		return nil, fmt.Errorf("sandbox mode %q: accepted %s", cfg.Mode, strings.Join(Modes(), ", "))
	}
	if cfg.Mode != ModeOff && helperNeeded && !helperplan.Linked() {
		return nil, ErrNoHelper
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = DefaultCacheDir()
	}
	for _, p := range append([]string{cfg.CacheDir}, cfg.Writable...) {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox path %q is not absolute", p)
		}
	}
	// What killed runs left (SIGKILL runs no cleanup) goes first.
	tempdir.Sweep(tempdir.All...)
	root, err := tempdir.Make(tempdir.Sandbox, "")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	b := &Box{cfg: cfg, root: root, home: filepath.Join(root, "home"), cache: ScopeCacheDir(cfg.CacheDir, cfg.Scope)}
	if cfg.Ephemeral {
		b.cache = filepath.Join(root, "cache")
	}
	if err := os.MkdirAll(b.cache, 0o700); err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("sandbox cache: %w", err)
	}
	if cfg.Mode != ModeOff {
		b.level = Probe()
	}
	if err := b.makeHome(); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	return b, nil
}

// makeHome writes the private home: a git identity, so that tests which
// commit in a scratch repository work as they do on a developer's machine.
func (b *Box) makeHome() error {
	if err := os.MkdirAll(b.home, 0o700); err != nil {
		return fmt.Errorf("sandbox home: %w", err)
	}
	gitconfig := "[user]\n\tname = lemmings sandbox\n\temail = sandbox@lemmings.invalid\n"
	if err := os.WriteFile(filepath.Join(b.home, ".gitconfig"), []byte(gitconfig), 0o600); err != nil {
		return fmt.Errorf("sandbox home: %w", err)
	}
	return nil
}

// Close removes the private directory.
func (b *Box) Close() error {
	if b == nil || b.root == "" {
		return nil
	}
	return tempdir.RemoveAll(b.root)
}

// Mode is the box's configured mode.
func (b *Box) Mode() Mode { return b.cfg.Mode }

// Level is the confinement the box applies (zero when off).
func (b *Box) Level() Level { return b.level }

// Confined says whether commands get at least Landlock.
func (b *Box) Confined() bool { return b.cfg.Mode != ModeOff && b.level.Landlock > 0 }

// Check fails when sandbox.mode is required and nothing can confine.
func (b *Box) Check() error {
	if b.cfg.Mode == ModeRequired && b.level.Landlock == 0 {
		return fmt.Errorf("%w: sandbox.mode is required, but %s; fix: run on Linux 5.13 or later with landlock in the kernel's lsm= list, or set sandbox.mode: auto", ErrUnavailable, b.level.why())
	}
	return nil
}

// Describe says in one line how commands are confined, for the report and
// doctor.
func (b *Box) Describe() string {
	if b.cfg.Mode == ModeOff {
		return "off (sandbox.mode: off): model-written code runs unconfined, with a minimal environment"
	}
	net := "network off"
	if b.cfg.Network {
		net = "network on (sandbox.network)"
	}
	if b.level.Landlock == 0 {
		return "none available (" + b.level.why() + "): model-written code runs unconfined, with a minimal environment"
	}
	return b.level.mechanism() + "; writes only to the work tree, a private temp dir and the sandbox caches; " + net
}

// Warning says what the box cannot do on this machine; "" when it confines
// fully.
func (b *Box) Warning() string {
	var w string
	switch {
	case b.cfg.Mode == ModeOff:
		return "sandbox off (sandbox.mode: off): gates, checks and coding CLIs run model-written code with your user's rights"
	case b.level.Landlock == 0:
		return "no sandbox: " + b.level.why() + "; gates, checks and coding CLIs run model-written code with your user's rights (set sandbox.mode: required to refuse)"
	case !b.level.Namespaces:
		w = "sandbox without namespaces (" + b.level.NamespaceErr + "): network blocked by Landlock's TCP rules only (" + b.level.netGaps() + "), loopback included, a process a gate leaves behind with setsid survives it, no pseudo-terminals"
	case !b.level.Mounts:
		w = "sandbox without private mounts (" + b.level.NamespaceErr + "): no pseudo-terminals or private /dev/shm, and a work tree's .git file stays writable"
	}
	if b.level.UnixFilter && !b.level.Seccomp {
		gap := fmt.Sprintf("UNIX sockets stay open to sandboxed commands (Landlock ABI %d cannot close them and seccomp failed: %s): a database's, Docker's or the session bus's socket is in reach", b.level.Landlock, b.level.SeccompErr)
		if w == "" {
			w = "sandbox with " + gap
		} else {
			w += "; " + gap
		}
	}
	if !b.level.Seccomp {
		gap := "setuid and setgid bits are not refused (seccomp failed: " + b.level.SeccompErr + "): the work folders stay private to you"
		if w == "" {
			return "sandbox with " + gap
		}
		w += "; " + gap
	}
	return w
}

// Spec is one confined command.
type Spec struct {
	// Dir is the command's working directory, writable.
	Dir string
	// Writable are more writable paths (a coding CLI's own state).
	Writable []string
	// Network lets this command use the network (a gate with network: true,
	// a coding CLI calling its model).
	Network bool
	// Env, when not nil, is the command's whole environment, already
	// minimal (a coding CLI's own); TMPDIR is pointed at the private temp
	// dir. Nil: the box's minimal environment plus Extra.
	Env []string
	// Extra variables ("K=V") set on top of the minimal environment.
	Extra []string
}

// Command returns name with args ready to run confined by s, and a cleanup
// that removes its private temp dir once it has ended. The command is in a
// process group of its own (SysProcAttr.Setpgid); callers may add to
// SysProcAttr but not replace it.
func (b *Box) Command(ctx context.Context, s Spec, name string, args ...string) (*exec.Cmd, func(), error) {
	if b == nil {
		return nil, nil, errors.New("sandbox: no box")
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	s.Dir = dir
	// The box's folder lives under TMPDIR, which a parent may remove while a
	// long run goes on (a detached run outliving the agent that started it):
	// make it again rather than fail every later gate.
	for _, d := range []string{b.home, b.cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, nil, fmt.Errorf("sandbox temp dir: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(b.root, "tmp-")
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox temp dir: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	env := s.Env
	if env == nil {
		env = append(b.environ(tmp, s.Network), s.Extra...)
	} else {
		env = append(append([]string(nil), env...), "TMPDIR="+tmp)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.Dir
	cmd.Env = env
	release, err := b.confine(cmd, s, tmp)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return cmd, func() { release(); cleanup() }, nil
}

// writable lists what a command of s may write, absolute and existing.
func (b *Box) writable(s Spec, tmp string) []string {
	all := append([]string{s.Dir, tmp, b.home, b.cache}, s.Writable...)
	all = append(all, b.cfg.Writable...)
	var out []string
	seen := map[string]bool{}
	for _, p := range all {
		if p == "" || !filepath.IsAbs(p) || seen[p] {
			continue
		}
		seen[p] = true
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Level is what confinement this machine offers.
type Level struct {
	// Landlock is the kernel's Landlock ABI version; 0: none.
	Landlock int
	// Namespaces: user, network, pid and mount namespaces can be made, and
	// loopback comes up in the network one.
	Namespaces bool
	// Mounts: inside them, a private /proc, /dev/shm and /dev/pts can be
	// mounted and the .git of a work tree bound read-only.
	Mounts bool
	// LandlockErr and NamespaceErr say why either is missing.
	LandlockErr, NamespaceErr string
	// UnixFilter: Landlock cannot close pathname UNIX sockets (below ABI
	// 9), so the seccomp filter must. Seccomp: the filter applies (with
	// Landlock): it refuses setuid and setgid bits, and UNIX sockets with
	// UnixFilter (SeccompErr: why not).
	UnixFilter, Seccomp bool
	SeccompErr          string
}

// abiResolveUnix is the Landlock ABI that controls connecting to pathname
// UNIX sockets.
const abiResolveUnix = 9

func (l Level) why() string {
	if l.LandlockErr != "" {
		return l.LandlockErr
	}
	return "no Landlock"
}

// mechanism names what confines, for Describe and doctor.
func (l Level) mechanism() string {
	m := fmt.Sprintf("Landlock ABI %d", l.Landlock)
	switch {
	case l.Namespaces && l.Mounts:
		m += " + user, network, pid and mount namespaces"
	case l.Namespaces:
		m += " + user, network and pid namespaces (no private mounts: " + l.NamespaceErr + ")"
	default:
		m += " (no namespaces: " + l.NamespaceErr + ")"
	}
	switch {
	case l.Seccomp && l.UnixFilter:
		m += " + seccomp (no UNIX sockets, no setuid files)"
	case l.Seccomp:
		m += " + seccomp (no setuid files)"
	}
	return m
}

// netGaps says what Landlock alone leaves open when the network is off.
func (l Level) netGaps() string {
	switch {
	case l.Landlock < 4:
		return "not at all below Landlock ABI 4"
	case l.Landlock < 10:
		return "UDP and Multipath TCP stay open below ABI 10"
	}
	return "Multipath TCP stays open"
}
