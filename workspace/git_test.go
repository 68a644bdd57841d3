package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/gitfixture"
)

func TestOpenRepoErrors(t *testing.T) {
	t.Parallel()
	plain := t.TempDir()
	_, err := OpenRepo(bg(), plain)
	if !errors.Is(err, ErrNotGitRepo) {
		t.Fatalf("plain dir: %v, want ErrNotGitRepo", err)
	}
	for _, want := range []string{"git init", "--dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	empty := t.TempDir()
	git(t, empty, "init", "-q", "-b", "main")
	_, err = OpenRepo(bg(), empty)
	if !errors.Is(err, ErrNoCommits) || !strings.Contains(err.Error(), "first commit") {
		t.Fatalf("repo without commits: %v, want ErrNoCommits", err)
	}
	if _, err := OpenRepo(bg(), filepath.Join(plain, "missing")); err == nil {
		t.Error("missing dir accepted")
	}
	// A bare repository is not "not a git repository": it has its own advice.
	bare := t.TempDir()
	git(t, bare, "init", "-q", "--bare")
	_, err = OpenRepo(bg(), bare)
	if !errors.Is(err, ErrBareRepo) || strings.Contains(err.Error(), "git init") || !strings.Contains(err.Error(), "git clone") {
		t.Fatalf("bare repository: %v, want ErrBareRepo with a clone", err)
	}
}

func TestOpenRepoFromSubdirectory(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"sub/a.txt": "a"})
	r, err := OpenRepo(bg(), filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Root() != dir {
		t.Errorf("root %q, want %q", r.Root(), dir)
	}
	head, err := r.HeadCommit(bg())
	if err != nil || head != git(t, dir, "rev-parse", "HEAD") {
		t.Errorf("head %q, %v", head, err)
	}
}

func TestDirty(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"a.txt": "a", "b.txt": "b", "c.txt": "c"})
	r, err := OpenRepo(bg(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := r.Dirty(bg()); err != nil || len(d) != 0 {
		t.Fatalf("clean repo dirty: %v, %v", d, err)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "changed", "new dir/n.txt": "n"})
	os.Remove(filepath.Join(dir, "b.txt"))
	git(t, dir, "mv", "c.txt", "renamed.txt")
	d, err := r.Dirty(bg())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(d)
	want := []string{"a.txt", "b.txt", "new dir/n.txt", "renamed.txt"}
	if !slices.Equal(d, want) {
		t.Errorf("dirty %q, want %q", d, want)
	}
}

func TestCreateWorktreeLeavesTheUserCheckoutAlone(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"main.go": "package main\n", ".gitignore": "*.tmp\n"})
	// Uncommitted work of the user, staged and unstaged.
	writeFiles(t, dir, map[string]string{"main.go": "package main // user edit\n", "wip.txt": "wip"})
	git(t, dir, "add", "wip.txt")
	statusBefore := git(t, dir, "status", "--porcelain")
	headBefore := git(t, dir, "rev-parse", "HEAD")

	r, err := OpenRepo(bg(), dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.CreateWorktree(bg(), "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if wt.Dir() != filepath.Join(dir, ".lemmings", "worktrees", "run-1") || wt.Branch() != "lemmings/run-1" || wt.RunID() != "run-1" {
		t.Errorf("dir %q branch %q", wt.Dir(), wt.Branch())
	}
	if s := readFile(t, filepath.Join(wt.Dir(), "main.go")); s != "package main\n" {
		t.Errorf("worktree has the user's uncommitted edit: %q", s)
	}
	if _, err := os.Stat(filepath.Join(wt.Dir(), "wip.txt")); err == nil {
		t.Error("worktree has the user's staged file")
	}
	if h, _ := wt.Head(bg()); h != headBefore {
		t.Errorf("worktree head %s, want %s", h, headBefore)
	}
	if got := git(t, dir, "status", "--porcelain"); got != statusBefore {
		t.Errorf("user's status changed:\n%s\nwas\n%s", got, statusBefore)
	}
	if got := git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Errorf("user's branch is now %q", got)
	}
	if s := readFile(t, filepath.Join(dir, "main.go")); s != "package main // user edit\n" {
		t.Errorf("user's file changed: %q", s)
	}
	if s := readFile(t, filepath.Join(dir, ".gitignore")); s != "*.tmp\n" {
		t.Errorf(".gitignore edited: %q", s)
	}
	exclude := readFile(t, filepath.Join(dir, ".git", "info", "exclude"))
	if strings.Count(exclude, "\n.lemmings/\n") != 1 {
		t.Errorf("exclude:\n%s", exclude)
	}
	// A second run does not add the line again, and a repeated id is refused.
	if _, err := r.CreateWorktree(bg(), "run-2"); err != nil {
		t.Fatal(err)
	}
	if strings.Count(readFile(t, filepath.Join(dir, ".git", "info", "exclude")), "\n.lemmings/\n") != 1 {
		t.Error("exclude line duplicated")
	}
	if _, err := r.CreateWorktree(bg(), "run-1"); !errors.Is(err, ErrWorktreeExists) {
		t.Errorf("second create: %v", err)
	}
	for _, bad := range []string{"", "../x", "a/b", "-x", "a..b", "x.lock", "a b"} {
		if _, err := r.CreateWorktree(bg(), bad); err == nil {
			t.Errorf("run id %q accepted", bad)
		}
	}
}

func TestOpenWorktreeResumesAndRecreates(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	r, _ := OpenRepo(bg(), dir)
	if _, err := r.OpenWorktree(bg(), "ghost"); !errors.Is(err, ErrNoWorktree) {
		t.Fatalf("unknown run: %v", err)
	}
	wt, err := r.CreateWorktree(bg(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "a\nb\n"})
	sha, err := wt.Commit(bg(), "task 1", nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.OpenWorktree(bg(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := again.Head(bg()); h != sha {
		t.Errorf("resumed head %s, want %s", h, sha)
	}
	// The directory vanishes (deleted by hand): resume re-creates it on the branch.
	if err := os.RemoveAll(wt.Dir()); err != nil {
		t.Fatal(err)
	}
	back, err := r.OpenWorktree(bg(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := back.Head(bg()); h != sha {
		t.Errorf("re-created head %s, want %s", h, sha)
	}
	if s := readFile(t, filepath.Join(back.Dir(), "a.txt")); s != "a\nb\n" {
		t.Errorf("re-created content %q", s)
	}
	// Removing keeps the branch; then deleting the branch ends the run.
	if err := r.RemoveWorktree(bg(), "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(back.Dir()); !os.IsNotExist(err) {
		t.Error("worktree dir still there")
	}
	if got := git(t, dir, "rev-parse", "lemmings/r1"); got != sha {
		t.Errorf("branch after remove: %s", got)
	}
	if err := r.RemoveWorktree(bg(), "r1"); err != nil {
		t.Errorf("removing twice: %v", err)
	}
	if err := r.DeleteBranch(bg(), "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.OpenWorktree(bg(), "r1"); !errors.Is(err, ErrNoWorktree) {
		t.Errorf("after branch delete: %v", err)
	}
}

func newWorktree(t *testing.T, files map[string]string) (*Repo, *Worktree) {
	t.Helper()
	dir := newRepo(t, files)
	r, err := OpenRepo(bg(), dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.CreateWorktree(bg(), "run")
	if err != nil {
		t.Fatal(err)
	}
	return r, wt
}

func TestCommitWithTrailersAndNoIdentity(t *testing.T) {
	t.Parallel()
	_, wt := newWorktree(t, map[string]string{"a.txt": "a\n", "gone.txt": "bye\n"})
	base, _ := wt.Head(bg())
	if _, err := wt.Commit(bg(), "nothing", nil); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("empty commit: %v", err)
	}
	fsys := wt.FS()
	if err := fsys.WriteFile("a.txt", []byte("a\nb\n")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("new/n.txt", []byte("n\n")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remove("gone.txt"); err != nil {
		t.Fatal(err)
	}
	sha, err := wt.Commit(bg(), "Add b to a\n\nLonger body.", map[string]string{TrailerTask: "t-7", TrailerRun: "run"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sha) != 40 {
		t.Errorf("sha %q", sha)
	}
	author := git(t, wt.Dir(), "log", "-1", "--format=%an <%ae>|%cn <%ce>")
	if author != "lemmings <lemmings@localhost>|lemmings <lemmings@localhost>" {
		t.Errorf("identity %q", author)
	}
	body := git(t, wt.Dir(), "log", "-1", "--format=%B")
	if body != "Add b to a\n\nLonger body.\n\nLemmings-Run: run\nLemmings-Task: t-7" {
		t.Errorf("message:\n%s", body)
	}
	files := git(t, wt.Dir(), "show", "--name-status", "--format=", "HEAD")
	for _, want := range []string{"M\ta.txt", "D\tgone.txt", "A\tnew/n.txt"} {
		if !strings.Contains(files, want) {
			t.Errorf("commit lacks %q:\n%s", want, files)
		}
	}
	log, err := wt.Log(bg(), base)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].SHA != sha || log[0].Subject != "Add b to a" ||
		log[0].Trailers["Lemmings-Task"] != "t-7" || log[0].Trailers["Lemmings-Run"] != "run" {
		t.Errorf("log %+v", log)
	}
	if _, err := wt.Commit(bg(), "  ", nil); err == nil {
		t.Error("empty message accepted")
	}
	if _, err := wt.Commit(bg(), "x", map[string]string{"bad key": "v"}); err == nil {
		t.Error("bad trailer key accepted")
	}
}

func TestCommitUsesTheRepositoryIdentity(t *testing.T) {
	t.Parallel()
	r, wt := newWorktree(t, map[string]string{"a.txt": "a"})
	git(t, r.Root(), "config", "user.name", "Ada Lovelace")
	git(t, r.Root(), "config", "user.email", "ada@example.com")
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "b"})
	if _, err := wt.Commit(bg(), "change", nil); err != nil {
		t.Fatal(err)
	}
	if got := git(t, wt.Dir(), "log", "-1", "--format=%an <%ae>"); got != "Ada Lovelace <ada@example.com>" {
		t.Errorf("author %q", got)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("HOME"), ".gitconfig")); err == nil {
		t.Error("a global config was written")
	}
}

func TestResetHardCleansUntrackedButKeepsIgnored(t *testing.T) {
	t.Parallel()
	_, wt := newWorktree(t, map[string]string{"a.txt": "a\n", ".gitignore": "cache/\n"})
	start, _ := wt.Head(bg())
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "b\n", "x.txt": "x"})
	sha, err := wt.Commit(bg(), "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = sha
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "dirty\n", "untracked/u.txt": "u", "cache/keep": "k", "fixture/f.txt": "f"})
	git(t, filepath.Join(wt.Dir(), "fixture"), "init", "-q") // a repository a test made: never committed, gone with the reset
	if err := wt.ResetHard(bg(), start); err != nil {
		t.Fatal(err)
	}
	if h, _ := wt.Head(bg()); h != start {
		t.Errorf("head %s, want %s", h, start)
	}
	if s := readFile(t, filepath.Join(wt.Dir(), "a.txt")); s != "a\n" {
		t.Errorf("a.txt %q", s)
	}
	for _, gone := range []string{"x.txt", "untracked", "fixture"} {
		if _, err := os.Stat(filepath.Join(wt.Dir(), gone)); !os.IsNotExist(err) {
			t.Errorf("%s survived the reset", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(wt.Dir(), "cache/keep")); err != nil {
		t.Error("ignored file removed")
	}
	if ok, err := wt.IsClean(bg()); !ok || err != nil {
		t.Errorf("IsClean = %v, %v", ok, err)
	}
	if err := wt.ResetHard(bg(), "--hard"); err == nil {
		t.Error("option-looking sha accepted")
	}
}

func TestResetHardInTheWorktreeDoesNotTouchTheUserRunData(t *testing.T) {
	t.Parallel()
	r, wt := newWorktree(t, map[string]string{"a.txt": "a"})
	// Run data beside the worktree under the user's .lemmings/.
	writeFiles(t, r.Root(), map[string]string{".lemmings/runs/run/events.jsonl": "{}\n"})
	head, _ := wt.Head(bg())
	if err := wt.ResetHard(bg(), head); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.Root(), ".lemmings/runs/run/events.jsonl")); err != nil {
		t.Error("run data removed")
	}
	if s := git(t, r.Root(), "status", "--porcelain"); s != "" {
		t.Errorf("user's status shows run data:\n%s", s)
	}
}

func TestDiffIncludesNewFilesAndLeavesTheIndexAlone(t *testing.T) {
	t.Parallel()
	_, wt := newWorktree(t, map[string]string{"a.txt": "one\n", ".gitignore": "*.log\n"})
	base, _ := wt.Head(bg())
	if d, err := wt.Diff(bg(), ""); err != nil || d != "" {
		t.Fatalf("clean diff %q, %v", d, err)
	}
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "two\n", "brand/new.txt": "fresh\n", "x.log": "ignored\n"})
	indexBefore := git(t, wt.Dir(), "diff", "--cached", "--name-only")
	diff, err := wt.Diff(bg(), base)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"diff --git a/a.txt b/a.txt", "-one", "+two", "diff --git a/brand/new.txt b/brand/new.txt", "new file mode", "+fresh"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "x.log") {
		t.Error("ignored file in diff")
	}
	if got := git(t, wt.Dir(), "diff", "--cached", "--name-only"); got != indexBefore {
		t.Errorf("real index changed: %q", got)
	}
	if st := git(t, wt.Dir(), "status", "--porcelain"); !strings.Contains(st, "?? brand/") {
		t.Errorf("new file no longer untracked in the real index:\n%s", st)
	}
	files, err := wt.ChangedFiles(bg(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"a.txt", "brand/new.txt"}) {
		t.Errorf("changed files %q", files)
	}
	if ok, _ := wt.IsClean(bg()); ok {
		t.Error("IsClean with changes")
	}
	// Same work, same hash; different work, different hash.
	if DiffHash(diff) != DiffHash(mustDiff(t, wt, base)) {
		t.Error("diff hash unstable")
	}
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "three\n"})
	if DiffHash(diff) == DiffHash(mustDiff(t, wt, base)) {
		t.Error("different work, same hash")
	}
}

func mustDiff(t *testing.T, wt *Worktree, base string) string {
	t.Helper()
	d, err := wt.Diff(bg(), base)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestOpenWorktreeClearsAStaleIndexLock(t *testing.T) {
	t.Parallel()
	r, wt := newWorktree(t, map[string]string{"a.txt": "a"})
	lock := git(t, wt.Dir(), "rev-parse", "--path-format=absolute", "--git-path", "index.lock")
	writeFiles(t, filepath.Dir(lock), map[string]string{filepath.Base(lock): ""})
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "b"})
	if _, err := wt.Commit(bg(), "blocked", nil); err == nil || !strings.Contains(err.Error(), "index.lock") {
		t.Fatalf("commit with a stale lock: %v", err)
	}
	again, err := r.OpenWorktree(bg(), "run")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Commit(bg(), "after resume", nil); err != nil {
		t.Fatalf("commit after resume: %v", err)
	}
}

func TestResetSoftSquashesIntoOneCommit(t *testing.T) {
	t.Parallel()
	_, wt := newWorktree(t, map[string]string{"a.txt": "a\n"})
	start, _ := wt.Head(bg())
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "b\n"})
	if _, err := wt.Commit(bg(), "wip 1", nil); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, wt.Dir(), map[string]string{"c.txt": "c\n"})
	if _, err := wt.Commit(bg(), "wip 2", nil); err != nil {
		t.Fatal(err)
	}
	if err := wt.ResetSoft(bg(), start); err != nil {
		t.Fatal(err)
	}
	if h, _ := wt.Head(bg()); h != start {
		t.Fatalf("head %s, want %s", h, start)
	}
	if s := readFile(t, filepath.Join(wt.Dir(), "a.txt")); s != "b\n" {
		t.Errorf("work lost: %q", s)
	}
	if _, err := wt.Commit(bg(), "the task", map[string]string{TrailerTask: "t1"}); err != nil {
		t.Fatal(err)
	}
	log, err := wt.Log(bg(), start)
	if err != nil || len(log) != 1 || log[0].Subject != "the task" {
		t.Fatalf("log %+v, %v", log, err)
	}
	if files := git(t, wt.Dir(), "show", "--name-only", "--format=", "HEAD"); files != "a.txt\nc.txt" {
		t.Errorf("squashed commit files %q", files)
	}
	if err := wt.ResetSoft(bg(), ""); err == nil {
		t.Error("empty sha accepted")
	}
}

// A worktree someone detached (a coding CLI checking out a commit) goes back
// on the run's branch with its files as they are; Refs sees every ref.
func TestReattachAndRefs(t *testing.T) {
	repo, wt := newWorktree(t, map[string]string{"a.txt": "a\n"})
	ctx := bg()
	head, err := wt.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	git(t, wt.Dir(), "checkout", "-q", "--detach", head)
	if err := os.WriteFile(filepath.Join(wt.Dir(), "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := wt.Reattach(ctx); err != nil {
		t.Fatal(err)
	}
	if got := git(t, wt.Dir(), "symbolic-ref", "HEAD"); got != "refs/heads/"+wt.Branch() {
		t.Errorf("HEAD is %q after Reattach", got)
	}
	if data, _ := os.ReadFile(filepath.Join(wt.Dir(), "a.txt")); string(data) != "changed\n" {
		t.Errorf("Reattach changed the files: %q", data)
	}
	git(t, wt.Dir(), "tag", "v1")
	refs, err := repo.Refs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if refs["refs/tags/v1"] != head || refs["refs/heads/"+wt.Branch()] != head {
		t.Errorf("refs %v, want the tag and the run branch at %s", refs, head)
	}
}

// A file rewritten in the clock tick git wrote the index in, at the same size,
// has the stats the index recorded: git hashes it again only because the index
// file is as new as the entry ("racily clean"). The diff's copy of the index
// must keep that mtime, or the change is not seen (a one-character fix, `-`
// to `+`, written in the worktree's first tick). The tick is made here by
// setting the times; ctime, which cannot be set, is left out of the stats.
func TestDiffSeesASameSizeRewriteInTheIndexsTick(t *testing.T) {
	t.Parallel()
	_, wt := newWorktree(t, map[string]string{"a.txt": "a - b\n"})
	git(t, wt.Dir(), "config", "core.trustctime", "false")
	tick := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	file := filepath.Join(wt.Dir(), "a.txt")
	if err := os.Chtimes(file, tick, tick); err != nil {
		t.Fatal(err)
	}
	git(t, wt.Dir(), "update-index", "--refresh") // the index records the tick
	index := git(t, wt.Dir(), "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err := os.Chtimes(index, tick, tick); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, wt.Dir(), map[string]string{"a.txt": "a + b\n"})
	if err := os.Chtimes(file, tick, tick); err != nil {
		t.Fatal(err)
	}
	if d := mustDiff(t, wt, ""); !strings.Contains(d, "+a + b") {
		t.Errorf("the rewrite is not in the diff:\n%s", d)
	}
	if files, err := wt.ChangedFiles(bg(), ""); err != nil || !slices.Equal(files, []string{"a.txt"}) {
		t.Errorf("changed files %q, %v", files, err)
	}
}

// The sandbox's caches are the repository's by its identity: the same
// repository keeps its scope, another cloned at the same path after it was
// deleted gets a new one (issue 43), and a git directory that arrives with
// another's identity still gets its own.
func TestCacheScopeIsTheRepositorysIdentityNotItsPath(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"a.txt": "a"})
	scope := func() string {
		t.Helper()
		r, err := OpenRepo(bg(), dir)
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.CacheScope()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := scope()
	if again := scope(); again != first {
		t.Errorf("the same repository changed scope: %q, then %q", first, again)
	}
	id, err := os.ReadFile(filepath.Join(dir, ".git", CacheIDFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, ".git", CacheIDFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("the identity is %v, want 0600", fi.Mode())
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	gitfixture.RepoIn(t, dir, map[string]string{"a.txt": "a"})
	if other := scope(); other == first {
		t.Errorf("another repository at the same path has the first one's scope %q", other)
	}
	// A repository delivered whole, .git included, with the first one's
	// identity, at another path.
	elsewhere := newRepo(t, map[string]string{"a.txt": "a"})
	if err := os.WriteFile(filepath.Join(elsewhere, ".git", CacheIDFile), id, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRepo(bg(), elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := r.CacheScope(); err != nil || s == first {
		t.Errorf("a copied identity gave the first repository's scope: %q, %v", s, err)
	}
	// An identity that is a link or not an identity is refused, named.
	if err := os.Remove(filepath.Join(elsewhere, ".git", CacheIDFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, ".git", CacheIDFile), filepath.Join(elsewhere, ".git", CacheIDFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CacheScope(); err == nil || !strings.Contains(err.Error(), CacheIDFile) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a linked identity: %v", err)
	}
}
