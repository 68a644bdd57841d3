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

// Binary builds the main package pkg (an import path) on first use and
// returns the binary's path. The binary is named as pkg's last element, in
// a folder of its own (which a test may put first on PATH).
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	mu.Lock()
	b := builds[pkg]
	if b == nil {
		b = &build{}
		builds[pkg] = b
	}
	mu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "lemmings-test-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, path.Base(pkg))
		if out, err := exec.Command("go", "build", "-o", b.bin, pkg).CombinedOutput(); err != nil {
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
	for pkg, b := range builds {
		if b.bin != "" {
			os.RemoveAll(filepath.Dir(b.bin))
		}
		delete(builds, pkg)
	}
}

// Main runs a package's tests and then removes the binaries they built: a
// TestMain's whole body where it has nothing else to do.
func Main(m *testing.M) {
	code := m.Run()
	RemoveAll()
	os.Exit(code)
}
