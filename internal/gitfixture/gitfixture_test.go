package gitfixture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestARepoHoldsItsFilesInOneCommitOnMain(t *testing.T) {
	t.Parallel()
	dir := Repo(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	if got := strings.TrimSpace(Git(t, dir, "branch", "--show-current")); got != "main" {
		t.Errorf("branch %q", got)
	}
	if got := strings.TrimSpace(Git(t, dir, "log", "--format=%s|%an|%ae")); got != "initial|"+Name+"|"+Email {
		t.Errorf("log %q", got)
	}
	if got := strings.Fields(Git(t, dir, "ls-files")); strings.Join(got, " ") != "a.txt sub/b.txt" {
		t.Errorf("files %v", got)
	}
	if st := Git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("not clean: %q", st)
	}
	if real, _ := filepath.EvalSymlinks(dir); real != dir {
		t.Errorf("path %s is not its real path %s", dir, real)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "b.txt")); string(b) != "b\n" {
		t.Errorf("content %q", b)
	}
}
