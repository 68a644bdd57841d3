package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// Rescue keeps HEAD and every uncommitted change (a changed file, a new
// untracked one) as one commit on a new branch, leaves the work tree, the
// index and HEAD as they were, and never moves a branch that exists.
func TestRescueKeepsUncommittedChangesOnANewBranch(t *testing.T) {
	t.Parallel()
	repo, wt := newWorktree(t, map[string]string{"a.go": "package a\n"})
	head, _ := wt.Head(bg())
	if err := os.WriteFile(filepath.Join(wt.Dir(), "a.go"), []byte("package a // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt.Dir(), "new.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	name, sha, err := wt.Rescue(bg(), "lemmings/run-rescue", "rescue")
	if err != nil || name != "lemmings/run-rescue" {
		t.Fatalf("Rescue: %q %v", name, err)
	}
	if got := git(t, repo.Root(), "rev-parse", name); got != sha {
		t.Errorf("branch at %s, want %s", got, sha)
	}
	if got := git(t, repo.Root(), "rev-parse", name+"^"); got != head {
		t.Errorf("rescue parent %s, want HEAD %s", got, head)
	}
	if got := git(t, repo.Root(), "diff", "--name-only", head, name); got != "a.go\nnew.go" {
		t.Errorf("rescue changes %q, want a.go and new.go", got)
	}
	if now, _ := wt.Head(bg()); now != head {
		t.Errorf("HEAD moved to %s", now)
	}
	if st := git(t, wt.Dir(), "status", "--porcelain"); st != "M a.go\n?? new.go" {
		t.Errorf("work tree or index changed: %q", st)
	}
	// A second rescue takes the next name; a clean tree is rescued as HEAD.
	if err := wt.ResetHard(bg(), head); err != nil {
		t.Fatal(err)
	}
	name2, sha2, err := wt.Rescue(bg(), "lemmings/run-rescue", "rescue")
	if err != nil || name2 != "lemmings/run-rescue-2" || sha2 != head {
		t.Errorf("second rescue: %q %s %v, want lemmings/run-rescue-2 at HEAD", name2, sha2, err)
	}
	if got := git(t, repo.Root(), "rev-parse", name); got != sha {
		t.Errorf("the first rescue branch moved to %s", got)
	}
	// Deleting the run's branch deletes its rescue branches too.
	if err := repo.RemoveWorktree(bg(), "run"); err != nil {
		t.Fatal(err)
	}
	if err := repo.DeleteBranch(bg(), "run"); err != nil {
		t.Fatal(err)
	}
	if left := git(t, repo.Root(), "branch", "--list", "lemmings/*"); left != "" {
		t.Errorf("branches left after DeleteBranch: %q", left)
	}
}
