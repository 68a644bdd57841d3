//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// A gate replaced a tracked file with a FIFO: reading it blocked lemmings
// forever, and git's "can only add regular files" ended the run. Every read,
// diff and commit now names the file in lemmings' words, at once.
func TestAFIFOWhereAFileWasIsNamedNeverWaitedOn(t *testing.T) {
	_, wt := newWorktree(t, map[string]string{"a.go": "package a\n", "b.go": "package a\n"})
	fifo := filepath.Join(wt.Dir(), "a.go")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var sf *SpecialFileError
		if _, err := wt.FS().ReadFile("a.go"); !errors.As(err, &sf) || sf.Path != "a.go" || !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ReadFile: %v", err)
		}
		if _, err := wt.FS().Apply([]Edit{{Path: "a.go", Search: "package a", Replace: "package b"}}); !errors.As(err, &sf) {
			t.Errorf("Apply: %v", err)
		}
		if _, err := wt.Diff(bg(), ""); !errors.As(err, &sf) || !strings.Contains(err.Error(), "a.go is a FIFO (named pipe), not a regular file") {
			t.Errorf("Diff: %v", err)
		}
		if _, err := wt.Commit(bg(), "msg", nil); !errors.As(err, &sf) || strings.Contains(err.Error(), "can only add") {
			t.Errorf("Commit: %v", err)
		}
		if got, err := wt.FS().Grep(bg(), "package", "", 10); err != nil || len(got) != 1 {
			t.Errorf("Grep: %v %v", got, err)
		}
		removed, err := wt.RemoveSpecialFiles(bg())
		if err != nil || len(removed) != 1 || removed[0] != "a.go" {
			t.Errorf("RemoveSpecialFiles: %v %v", removed, err)
		}
		if _, err := os.Lstat(fifo); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the FIFO is still there: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a read blocked on the FIFO")
	}
}

// A model named a file with an escape or a bidirectional override: every
// listing and git status of the run would show it otherwise than it is.
func TestAPathWithAControlOrBidiCharacterIsRefused(t *testing.T) {
	_, wt := newWorktree(t, map[string]string{"a.go": "package a\n"})
	for _, p := range []string{"evil\x1b]52;c;eA==\a.go", "gnp.\u202eexe", "a\tb.go", "new\nline.go", "\u0085.go"} {
		var pe *PathError
		if err := wt.FS().WriteFile(p, []byte("x")); !errors.As(err, &pe) || !strings.Contains(err.Error(), "control or bidirectional") {
			t.Errorf("WriteFile(%q): %v", p, err)
		}
	}
	if err := wt.FS().WriteFile("ünïcode-ok.go", []byte("package a\n")); err != nil {
		t.Errorf("a plain non-ASCII name: %v", err)
	}
}
