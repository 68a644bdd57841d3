// Package buildtest builds a command of this module once per test process,
// for tests that run it as a real process (lemmings itself, the fake coding
// CLI).
package buildtest

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type build struct {
	once sync.Once
	bin  string
	err  error
}

var (
	mu     sync.Mutex
	builds = map[string]*build{}
)

// EnvRaceE2E set to 1 makes EndToEnd run its tests under -race too, on a
// binary built with -race.
const EnvRaceE2E = "LEMMINGS_E2E_RACE"

// EndToEnd is Binary for a test that runs the command as a user would. In a
// test process built with -race it skips the test: the binary is built
// without -race, so the detector would watch only the test waiting on it,
// and make test runs these tests in its plain pass. With EnvRaceE2E=1 it
// builds the binary with -race instead, and the test runs.
func EndToEnd(t testing.TB, pkg string) string {
	t.Helper()
	if !raceEnabled {
		return Binary(t, pkg)
	}
	if os.Getenv(EnvRaceE2E) != "1" {
		t.Skipf("runs %s, built without -race, as a process: the plain run covers it (%s=1 runs it here on a -race build)", path.Base(pkg), EnvRaceE2E)
	}
	return Binary(t, pkg, "-race")
}

// Binary builds the main package pkg (an import path) with go build's flags
// on first use and returns the binary's path. The binary is named as pkg's
// last element, in a folder of its own (which a test may put first on PATH).
func Binary(t testing.TB, pkg string, flags ...string) string {
	t.Helper()
	key := strings.Join(append([]string{pkg}, flags...), " ")
	mu.Lock()
	b := builds[key]
	if b == nil {
		b = &build{}
		builds[key] = b
	}
	mu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "lemmings-test-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, path.Base(pkg))
		if out, err := exec.Command("go", append(append([]string{"build"}, flags...), "-o", b.bin, pkg)...).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// RemoveAll removes the binaries built so far (a TestMain's cleanup).
func RemoveAll() {
	mu.Lock()
	defer mu.Unlock()
	for key, b := range builds {
		if b.bin != "" {
			os.RemoveAll(filepath.Dir(b.bin))
		}
		delete(builds, key)
	}
}

// Main runs a package's tests and then removes the binaries they built: a
// TestMain's whole body where it has nothing else to do.
func Main(m *testing.M) {
	code := m.Run()
	RemoveAll()
	os.Exit(code)
}
