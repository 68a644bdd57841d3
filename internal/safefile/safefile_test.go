//go:build unix

package safefile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn does not return in a few seconds: a read
// that blocks on a FIFO would hang the test otherwise.
func within(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the read blocked")
	}
}

func TestSpecialFilesAreRefusedWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.WriteFile(filepath.Join(dir, "ok.go"), []byte("package ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo.go", filepath.Join(dir, "tofifo")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"fifo.go": "fifo.go is a FIFO (named pipe), not a regular file",
		"sock":    "sock is a socket, not a regular file",
		"sub":     "sub is a directory, not a regular file",
		"tofifo":  "tofifo is a FIFO (named pipe), not a regular file",
	} {
		within(t, func() {
			_, err := ReadFileUnder(dir, name)
			if !errors.Is(err, ErrNotRegular) || err.Error() != want {
				t.Errorf("ReadFileUnder %s: %v, want %q", name, err, want)
			}
		})
	}
	within(t, func() {
		if _, err := ReadFileUnder(dir, "out"); err == nil {
			t.Error("a link out of the folder was followed")
		}
		if data, err := ReadFileUnder(dir, "link.go"); err != nil || string(data) != "package ok\n" {
			t.Errorf("a link inside the folder: %q %v", data, err)
		}
		if _, err := ReadFile(filepath.Join(dir, "link.go")); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("ReadFile followed a link: %v", err)
		}
		if _, err := ReadFile(filepath.Join(dir, "fifo.go")); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile of a FIFO: %v", err)
		}
		if _, err := Limited(filepath.Join(dir, "fifo.go"), 10); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Limited of a FIFO: %v", err)
		}
		if data, err := ReadFile(filepath.Join(dir, "ok.go")); err != nil || string(data) != "package ok\n" {
			t.Errorf("ReadFile: %q %v", data, err)
		}
		if _, err := Limited(filepath.Join(dir, "ok.go"), 4); err == nil {
			t.Error("Limited read past its limit")
		}
	})
}

func TestReadsWholeFilesOfEverySize(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4095, 4096, 100000} {
		want := strings.Repeat("x", n)
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%d bytes: got %d, %v", n, len(got), err)
		}
	}
}
