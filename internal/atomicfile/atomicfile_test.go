package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWriteFileReplacesTheWholeFileAndLeavesNoTemporary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "deeper", "report.md")
	if err := WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new content"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new content" {
		t.Fatalf("read %q, %v", got, err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the file: %v", len(ents), ents)
	}
	if runtime.GOOS != "windows" {
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", fi.Mode().Perm())
		}
	}
}

func TestWriteFileFailsCleanlyWhereTheTargetIsADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "taken")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(target, []byte("data"), 0o644)
	if err == nil || !strings.Contains(err.Error(), target) {
		t.Fatalf("err = %v, want one naming %s", err, target)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".taken.tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestWriteKeepsTheOldFileWhenTheWriterFails(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := WriteFile(path, []byte("complete"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(path, 0o644, func(f *os.File) error {
		_, _ = f.Write([]byte("half"))
		return errors.New("encoder failed")
	})
	if err == nil || !strings.Contains(err.Error(), "encoder failed") {
		t.Fatalf("err = %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "complete" {
		t.Errorf("the failed write left %q", got)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("entries %v, want the file alone", ents)
	}
}
