package doctor

import (
	"runtime"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/sandbox"
)

// sandboxCheck says which sandbox confines model-written code on this
// machine, and how to get a stronger one.
func sandboxCheck(cfg *config.Config) Check {
	c := Check{Name: "sandbox"}
	box, err := run.OpenSandbox(cfg, "", nil, nopWriter{})
	if err != nil {
		c.Status, c.Detail = "fail", err.Error()
		c.Fix = "run on Linux 5.13 or later with landlock in the kernel's lsm= list, or set sandbox.mode: auto"
		return c
	}
	defer box.Close()
	c.Detail = box.Describe()
	l := box.Level()
	switch {
	case box.Mode() == sandbox.ModeOff:
		c.Status, c.Fix = "warn", "remove sandbox.mode: off from your configuration"
	case l.Landlock == 0 && runtime.GOOS == "linux":
		c.Status, c.Fix = "warn", "run on Linux 5.13 or later with landlock in the kernel's lsm= boot parameter"
	case l.Landlock == 0:
		c.Status, c.Fix = "warn", "run lemmings in a Linux VM or container to confine the gates"
	case !l.Namespaces || !l.Mounts:
		c.Status, c.Detail = "warn", box.Warning()
		c.Fix = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0)"
	case !l.Seccomp:
		c.Status, c.Detail = "warn", box.Warning()
		c.Fix = "run on a kernel with seccomp filters (CONFIG_SECCOMP_FILTER) and outside a seccomp profile that forbids them"
	default:
		c.Status = "ok"
	}
	return c
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
