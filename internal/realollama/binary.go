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
	// EnvRequire set to "1" runs the real-server tests and requires what they need: a
	// missing binary fails the test instead of skipping it (`make test-ollama` and CI set
	// it). Unset or anything else, the real-server tests are skipped even when the binary
	// is there: they run only when asked.
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
	modeDisabled mode = iota // skip: not asked for
	modeRequired             // run, and fail when what they need is missing
)

func modeFrom(getenv func(string) string) mode {
	switch getenv(EnvRequire) {
	case "1", "true", "yes":
		return modeRequired
	}
	return modeDisabled
}

// Asked reports whether the real-model tests were asked for
// (LEMMINGS_REAL_OLLAMA=1): they need a real server, models or CLIs, and
// run only then.
func Asked() bool { return modeFrom(os.Getenv) == modeRequired }

// SkipUnlessAsked skips t unless the real-model tests were asked for.
func SkipUnlessAsked(t testing.TB) {
	t.Helper()
	if !Asked() {
		t.Skipf("a real-model test: it runs only when asked (%s=1, as make test-ollama and CI set it)", EnvRequire)
	}
}

// binaryOrSkip finds the binary or ends the test: Skip when the real server
// was not asked for, Fatal when LEMMINGS_REAL_OLLAMA=1 asks for it and it
// is missing.
func binaryOrSkip(t testing.TB) string {
	t.Helper()
	SkipUnlessAsked(t)
	bin, err := FindBinary()
	if err != nil {
		t.Fatalf("%s=1 requires the real Ollama server, but: %v\nbuild it with `make ollama` (or point %s at an ollama v%s binary)",
			EnvRequire, err, EnvBin, Version)
	}
	return bin
}
