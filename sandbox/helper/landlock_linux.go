package helper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock rights newer than golang.org/x/sys names.
const (
	accessFSResolveUnix = 1 << 16 // ABI 9: connect to pathname UNIX sockets outside the domain
	accessNetBindUDP    = 1 << 2  // ABI 10
	accessNetSendUDP    = 1 << 3  // ABI 10
)

// handledFS are the file system rights ABI abi can restrict.
func handledFS(abi int) uint64 {
	h := uint64(1<<13 - 1) // ABI 1: execute … make_sym
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 9 {
		h |= accessFSResolveUnix
	}
	return h
}

// File-applicable rights: a rule on a file may grant only these.
const fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

const readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR

// landlockRules is what the helper enforces.
type landlockRules struct {
	abi      int
	writable []string // full rights below each
	devices  []string // read and write (/dev/null…)
	// terminals also allow ioctl: the sandbox's own devpts instance only.
	terminals []string
	denyNet   bool // TCP (and UDP from ABI 10) bind and connect denied
	// unreadable folders stay out of the read rule (where no mount can
	// hide them): the rest of the file system is granted around them.
	unreadable []string
}

// restrictThread enforces r on the calling thread, which must be locked
// (runtime.LockOSThread) and then exec: the new program inherits the
// domain; the helper's other threads never run model code.
func restrictThread(r landlockRules) error {
	handled := handledFS(r.abi)
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	if r.denyNet && r.abi >= 4 {
		attr.Access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		if r.abi >= 10 {
			attr.Access_net |= accessNetBindUDP | accessNetSendUDP
		}
	}
	if r.abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)

	// No rule grants resolving a UNIX socket (ABI 9): a connect to any
	// pathname socket is denied, with or without the network.
	if err := addReadable(ruleset, r.unreadable); err != nil {
		return err
	}
	write := handled &^ (unix.LANDLOCK_ACCESS_FS_IOCTL_DEV | accessFSResolveUnix)
	for _, p := range r.writable {
		if err := addPath(ruleset, p, write); err != nil {
			return err
		}
	}
	dev := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE) | handled&unix.LANDLOCK_ACCESS_FS_TRUNCATE
	for _, p := range r.devices {
		if err := addPath(ruleset, p, dev); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for _, p := range r.terminals {
		if err := addPath(ruleset, p, dev|handled&unix.LANDLOCK_ACCESS_FS_IOCTL_DEV); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(no_new_privs): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// addReadable grants reading the whole file system but the unreadable
// folders. Landlock has no rule that takes a right away, so for each
// folder on the way down to one, its other entries are granted one by
// one (an entry made later is not readable); the folders on the way get
// listing only, which Landlock extends to everything below them: a hidden
// folder's names can be listed, its files not read. A link that leads to
// or above a hidden folder is left out.
func addReadable(ruleset int, unreadable []string) error {
	var hidden []string
	for _, u := range unreadable {
		if real, err := filepath.EvalSymlinks(u); err == nil && filepath.IsAbs(real) && real != "/" {
			hidden = append(hidden, real)
		}
	}
	if len(hidden) == 0 {
		return addPath(ruleset, "/", readRights)
	}
	if err := addPath(ruleset, "/", unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
		return err
	}
	// above reports whether p is a hidden folder, inside one, or above one.
	above := func(p string) (inOrAt, over bool) {
		for _, h := range hidden {
			if p == h || strings.HasPrefix(p, h+"/") {
				return true, false
			}
			if p == "/" || strings.HasPrefix(h, p+"/") {
				over = true
			}
		}
		return false, over
	}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil // unreadable to you: nothing to grant
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			in, over := above(p)
			switch {
			case in:
				continue
			case over && e.IsDir():
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			if e.Type()&os.ModeSymlink != 0 {
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					continue
				}
				if in, over := above(real); in || over {
					continue
				}
			}
			if err := addPath(ruleset, p, readRights); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
				return err
			}
		}
		return nil
	}
	return walk("/")
}

// addPath grants access below path (only the file rights when it is a file).
func addPath(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("landlock rule for %s: %w", path, os.NewSyscallError("open", err))
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock rule for %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock rule for %s: %w", path, errno)
	}
	return nil
}
