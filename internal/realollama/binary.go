package realollama

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Environment variables the harness reads.
const (
	// EnvRequire set to "1" makes the real server required: a missing binary fails the test
	// instead of skipping it (CI sets it through `make test-ollama`). "0" skips the real-server
	// tests even when the binary is there.
	EnvRequire = "LEMMINGS_REAL_OLLAMA"
	// EnvBin overrides the server binary's path (default <module root>/.tools/ollama/ollama).
	EnvBin = "LEMMINGS_OLLAMA_BIN"
)

// Version is the Ollama release `make ollama` builds: the newest that builds from the Go
// module proxy alone.
const Version = "0.11.4"

// modulePath identifies lemmings' go.mod when looking for the module root.
const modulePath = "github.com/lemmings-dev/lemmings"

// binRelPath is where scripts/ollama.sh installs the server, relative to the module root.
const binRelPath = ".tools/ollama/ollama"

// ErrNoBinary is wrapped by FindBinary's error when no server binary is there to run.
var ErrNoBinary = errors.New("real ollama binary not found")

// FindBinary returns the server binary to run: $LEMMINGS_OLLAMA_BIN when set, else
// <module root>/.tools/ollama/ollama. The error wraps ErrNoBinary when the file is missing
// or not executable.
func FindBinary() (string, error) {
	return findBinary(os.Getenv, os.Getwd)
}

func findBinary(getenv func(string) string, getwd func() (string, error)) (string, error) {
	path := getenv(EnvBin)
	if path == "" {
		wd, err := getwd()
		if err != nil {
			return "", fmt.Errorf("find ollama binary: %w", err)
		}
		root, err := moduleRoot(wd)
		if err != nil {
			return "", fmt.Errorf("find ollama binary: %w", err)
		}
		path = filepath.Join(root, filepath.FromSlash(binRelPath))
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w at %s", ErrNoBinary, path)
	case info.IsDir() || info.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%w: %s is not an executable file", ErrNoBinary, path)
	}
	return path, nil
}

// moduleRoot walks up from dir to the folder whose go.mod declares lemmings' module.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+modulePath+"\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of %s above %s", modulePath, dir)
		}
	}
}

// mode is what the environment asks of the real-server tests.
type mode int

const (
	modeOptional mode = iota // run when the binary is there, else skip
	modeRequired             // fail when the binary is missing
	modeDisabled             // always skip
)

func modeFrom(getenv func(string) string) mode {
	switch getenv(EnvRequire) {
	case "1", "true", "yes":
		return modeRequired
	case "0", "false", "no":
		return modeDisabled
	}
	return modeOptional
}

// binaryOrSkip finds the binary or ends the test: Skip when the real server is optional,
// Fatal when LEMMINGS_REAL_OLLAMA=1 requires it.
func binaryOrSkip(t testing.TB) string {
	t.Helper()
	m := modeFrom(os.Getenv)
	if m == modeDisabled {
		t.Skipf("real Ollama tests disabled by %s=%s", EnvRequire, os.Getenv(EnvRequire))
	}
	bin, err := FindBinary()
	if err == nil {
		if m == modeOptional && testing.Short() {
			t.Skipf("real Ollama tests skipped in -short mode (set %s=1 to run them)", EnvRequire)
		}
		return bin
	}
	if m == modeRequired {
		t.Fatalf("%s=1 requires the real Ollama server, but: %v\nbuild it with `make ollama` (or point %s at an ollama v%s binary)",
			EnvRequire, err, EnvBin, Version)
	}
	t.Skipf("skipping real Ollama test: %v; build it with `make ollama` (and set %s=1 to require it)", err, EnvRequire)
	return ""
}
