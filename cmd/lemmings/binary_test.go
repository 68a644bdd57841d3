package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/buildtest"
)

// The end-to-end tests run the built binary, as a user would.

// lemmingsBin builds the lemmings binary once per test process. Under -race
// the tests that run it skip (buildtest.EndToEnd): the plain run covers them,
// and LEMMINGS_E2E_RACE=1 runs them on a binary built with -race.
func lemmingsBin(t testing.TB) string {
	t.Helper()
	return buildtest.EndToEnd(t, "github.com/lemmings-dev/lemmings/cmd/lemmings")
}

// result is one finished invocation of the binary.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the binary with an environment of the test's own: none of the
// user's lemmings, Ollama or OpenRouter settings, its own config home.
type cli struct {
	t          testing.TB
	bin        string
	configHome string
	stateHome  string // XDG_STATE_HOME: the local servers' tokens
	env        []string
}

func newCLI(t testing.TB, extraEnv ...string) *cli {
	// The binary is had here, so that under -race the test that makes the
	// cli is the one skipped, before it does any work.
	c := &cli{t: t, bin: lemmingsBin(t), configHome: t.TempDir(), stateHome: t.TempDir()}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LEMMINGS_") || strings.HasPrefix(kv, "OLLAMA_") ||
			strings.HasPrefix(kv, "OPENROUTER_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			continue
		}
		c.env = append(c.env, kv)
	}
	c.env = append(c.env, "XDG_CONFIG_HOME="+c.configHome, "XDG_STATE_HOME="+c.stateHome)
	c.env = append(c.env, extraEnv...)
	return c
}

// config writes the user configuration file (lowest file in precedence).
func (c *cli) config(yaml string) {
	c.t.Helper()
	dir := filepath.Join(c.configHome, "lemmings")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(yaml), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// command prepares an invocation in dir without starting it.
func (c *cli) command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = dir
	cmd.Env = c.env
	return cmd
}

// run runs the binary in dir and waits for it.
func (c *cli) run(dir string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := c.command(ctx, dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("lemmings %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}
