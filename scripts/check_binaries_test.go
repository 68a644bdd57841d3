// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/gitfixture"
)

// repoWith makes a git repository holding files (path → content), all
// staged, and returns its directory.
func repoWith(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	gitfixture.Init(t, dir)
	text := make(map[string]string, len(files))
	for path, content := range files {
		text[path] = string(content)
	}
	gitfixture.Write(t, dir, text)
	gitfixture.Git(t, dir, "add", "-A")
	return dir
}

// binary returns n bytes that git calls binary (they hold NUL bytes).
func binary(n int) []byte {
	b := bytes.Repeat([]byte("\x7fELF\x00\x01"), n/6+1)
	return b[:n]
}

func runCheck(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	script, err := filepath.Abs("check-binaries.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestCheckBinariesFailsOnALargeTrackedBinary(t *testing.T) {
	t.Parallel()
	dir := repoWith(t, map[string][]byte{
		"main.go":      []byte("package main\n"),
		"warm":         binary(2 << 20),
		"sub dir/tool": binary(3 << 20), // a path with a space
	})
	out, err := runCheck(t, dir)
	if err == nil {
		t.Fatalf("want a failure, got success: %s", out)
	}
	for _, want := range []string{"warm is a tracked binary of 2097152 bytes", "sub dir/tool is a tracked binary of 3145728 bytes", ".gitignore"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "main.go") {
		t.Errorf("a source file was named:\n%s", out)
	}
}

func TestCheckBinariesAcceptsTestdataSmallBinariesAndLargeText(t *testing.T) {
	t.Parallel()
	dir := repoWith(t, map[string][]byte{
		"pkg/testdata/model.bin": binary(2 << 20),
		"icon.png":               binary(100 << 10),
		"corpus.txt":             bytes.Repeat([]byte("a line of text\n"), 200_000), // 3 MB, not binary
	})
	if err := os.WriteFile(filepath.Join(dir, "untracked"), binary(2<<20), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runCheck(t, dir); err != nil {
		t.Fatalf("want success: %v\n%s", err, out)
	}
}

func TestCheckBinariesLimitIsAnArgument(t *testing.T) {
	t.Parallel()
	dir := repoWith(t, map[string][]byte{"icon.png": binary(100 << 10)})
	if out, err := runCheck(t, dir, "50000"); err == nil || !strings.Contains(out, "icon.png") {
		t.Fatalf("a 100 KB binary over a 50 KB limit must fail: %v\n%s", err, out)
	}
}
