package codingcli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/gitfixture"
	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// installedCLI returns the path of a CLI `make clis` installed into
// .tools/clis (or $LEMMINGS_CLIS_DIR). The real CLIs run only when asked,
// like the real server: LEMMINGS_REAL_OLLAMA=1 (make test-ollama, which
// runs make clis first), and then a missing CLI fails the test.
func installedCLI(t *testing.T, name string) string {
	t.Helper()
	realollama.SkipUnlessAsked(t)
	dir := os.Getenv("LEMMINGS_CLIS_DIR")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, ".tools", "clis")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		msg := name + " is not installed in " + dir + ": run `make clis`"
		if os.Getenv("LEMMINGS_REAL_OLLAMA") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: the npm-installed CLIs need Node.js 20 or later")
	}
	return bin
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// gitRepo makes an empty git repository to run a CLI in.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitfixture.Init(t, dir)
	return dir
}

// withBinary returns the preset running bin instead of the program on PATH.
func withBinary(p Preset, bin string) Preset {
	p.Args = append([]string{bin}, p.Args[1:]...)
	return p
}
