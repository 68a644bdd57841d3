package rag

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The index holds the repository's code: readable by you only (issue 33
// found .lemmings/index 0755 with 0644 files), an older, looser index
// tightened when it is opened.
func TestTheIndexIsReadableByItsOwnerOnly(t *testing.T) {
	root, dir := t.TempDir(), filepath.Join(t.TempDir(), "index")
	writeFiles(t, root, repoFiles())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, dir, newFake("fake-a"))
	if _, err := ix.Update(context.Background(), root, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) < 2 {
		t.Fatalf("the index folder holds %d files", len(entries))
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("%s is %v, want 0700", dir, fi.Mode().Perm())
	}
	for _, e := range entries {
		if fi, _ := e.Info(); fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v, want readable by its owner only", e.Name(), fi.Mode().Perm())
		}
	}
}
