package run

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
)

// SandboxConfig maps sandbox.* onto the sandbox's configuration; a path
// under ~/ is made absolute in the user's home.
func SandboxConfig(c *config.Config, scope string) (sandbox.Config, error) {
	home, _ := os.UserHomeDir()
	expand := func(p string) (string, error) {
		if !strings.HasPrefix(p, "~/") {
			return p, nil
		}
		if home == "" {
			return "", fmt.Errorf("sandbox path %s: no home directory to expand ~ in", p)
		}
		return filepath.Join(home, p[2:]), nil
	}
	sc := sandbox.Config{Mode: sandbox.Mode(c.Sandbox.Mode), Env: c.Sandbox.Env, Network: c.Sandbox.Network, Scope: scope}
	if scope == sandbox.Ephemeral {
		sc.Scope, sc.Ephemeral = "", true
	}
	for _, p := range c.Sandbox.Writable {
		abs, err := expand(p)
		if err != nil {
			return sc, err
		}
		sc.Writable = append(sc.Writable, abs)
	}
	dir, err := expand(c.Sandbox.CacheDir)
	sc.CacheDir = dir
	return sc, err
}

// OpenSandbox makes the box that confines a run's gates, checks and coding
// CLI; scope (the repository's, workspace.Repo.CacheScope, for a run) has
// caches of its own (sandbox.Config.Scope), sandbox.Ephemeral caches that go
// with the box. It fails when sandbox.mode is required and the machine has no
// sandbox; otherwise what the box cannot do, and the gates that have the
// network, are written to warn.
func OpenSandbox(c *config.Config, scope string, gates []workspace.Gate, warn io.Writer) (*sandbox.Box, error) {
	sc, err := SandboxConfig(c, scope)
	if err != nil {
		return nil, err
	}
	box, err := sandbox.New(sc)
	if err != nil {
		return nil, err
	}
	if err := box.Check(); err != nil {
		box.Close()
		return nil, err
	}
	if w := box.Warning(); w != "" {
		fmt.Fprintf(warn, "warning: %s\n", w)
	}
	for _, g := range gates {
		if g.Network && box.Confined() {
			fmt.Fprintf(warn, "note: gate %s may reach the network from the sandbox (gates[].network)\n", g.Name)
		}
	}
	return box, nil
}
