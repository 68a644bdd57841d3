//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// helperNeeded: nothing starts the helper off Linux.
const helperNeeded = false

// Probe says what confinement this machine offers: none off Linux yet
// (macOS's sandbox-exec is the candidate; see docs/security.md).
var Probe = sync.OnceValue(func() Level {
	return Level{LandlockErr: "no sandbox on " + runtime.GOOS + " yet (Linux only)", NamespaceErr: "not Linux"}
})

// confine only puts the command in a process group of its own.
func (b *Box) confine(cmd *exec.Cmd, s Spec, tmp string) (func(), error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return func() {}, nil
}
