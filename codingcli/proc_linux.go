package codingcli

import "syscall"

// setParentDeathSignal: the CLI gets SIGKILL when lemmings dies. Only the
// CLI itself: tools it started and left running outlive it (another
// platform's kernel offers nothing like it; there the CLI outlives a killed
// lemmings).
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
