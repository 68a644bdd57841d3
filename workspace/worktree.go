package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// BranchPrefix is the prefix of every run branch: lemmings/<run-id>.
const BranchPrefix = "lemmings/"

// WorktreesDir is where run worktrees live, relative to the repository root.
const WorktreesDir = ".lemmings/worktrees"

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// Worktree is the git worktree a run works in, on branch lemmings/<run-id>.
type Worktree struct {
	repo   *Repo
	runID  string
	dir    string
	branch string
	fs     *FS
	// gitDir is the worktree's own git directory in the repository's
	// common dir, found from the repository's side: lemmings' git commands
	// name it (GIT_DIR) rather than follow the worktree's .git file, which
	// model-written code could point at a directory of its own making.
	gitDir string
}

func checkRunID(runID string) error {
	if !runIDPattern.MatchString(runID) || strings.Contains(runID, "..") || strings.HasSuffix(runID, ".lock") || strings.HasSuffix(runID, ".") {
		return fmt.Errorf("invalid run id %q: use letters, digits, '.', '_' and '-' (at most 100, not starting with a symbol)", runID)
	}
	return nil
}

// WorktreeDir returns where the worktree of runID lives (it may not exist).
func (r *Repo) WorktreeDir(runID string) string {
	return filepath.Join(r.root, filepath.FromSlash(WorktreesDir), runID)
}

// CreateWorktree creates the run's worktree under .lemmings/worktrees/<runID>
// on a new branch lemmings/<runID> from the user's HEAD. The user's checkout,
// index and uncommitted changes are not touched. .lemmings/ is added to
// .git/info/exclude. It fails with ErrWorktreeExists if either is there.
func (r *Repo) CreateWorktree(ctx context.Context, runID string) (*Worktree, error) {
	return r.CreateWorktreeAt(ctx, runID, "")
}

// CreateWorktreeAt is CreateWorktree branching from commit instead of HEAD
// (empty: HEAD): a worker starts a run where its submitter's HEAD was.
func (r *Repo) CreateWorktreeAt(ctx context.Context, runID, commit string) (*Worktree, error) {
	if err := checkRunID(runID); err != nil {
		return nil, err
	}
	if err := r.ensureExcluded(); err != nil {
		return nil, fmt.Errorf("create worktree: %w", err)
	}
	dir := r.WorktreeDir(runID)
	branch := BranchPrefix + runID
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("create worktree %s: %s exists: %w", runID, dir, ErrWorktreeExists)
	}
	exists, err := r.branchExists(ctx, branch)
	if err != nil {
		return nil, fmt.Errorf("create worktree %s: %w", runID, err)
	}
	if exists {
		return nil, fmt.Errorf("create worktree %s: branch %s exists: %w", runID, branch, ErrWorktreeExists)
	}
	head := commit
	if head == "" {
		if head, err = r.HeadCommit(ctx); err != nil {
			return nil, fmt.Errorf("create worktree %s: %w", runID, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, fmt.Errorf("create worktree %s: %w", runID, err)
	}
	if _, err := runGit(ctx, r.root, nil, "worktree", "add", "--quiet", "-b", branch, dir, head+"^{commit}"); err != nil {
		return nil, fmt.Errorf("create worktree %s: %w", runID, err)
	}
	if err := private(dir); err != nil {
		return nil, fmt.Errorf("create worktree %s: %w", runID, err)
	}
	return r.worktree(runID, dir, branch)
}

// OpenWorktree opens the run's worktree to resume it. If the directory has
// vanished but the branch exists, the worktree is re-created on that branch.
// Lock files left by a git command killed mid-way are removed (the caller
// holds the run, so no other process works here). Uncommitted changes are
// kept: reset them with ResetHard if the task restarts. It fails with
// ErrNoWorktree when the branch does not exist.
func (r *Repo) OpenWorktree(ctx context.Context, runID string) (*Worktree, error) {
	if err := checkRunID(runID); err != nil {
		return nil, err
	}
	dir := r.WorktreeDir(runID)
	branch := BranchPrefix + runID
	exists, err := r.branchExists(ctx, branch)
	if err != nil {
		return nil, fmt.Errorf("open worktree %s: %w", runID, err)
	}
	if !exists {
		return nil, fmt.Errorf("open worktree %s: branch %s not found: %w", runID, branch, ErrNoWorktree)
	}
	if _, err := os.Lstat(dir); err == nil {
		if gitDir := r.adminDir(dir); gitDir != "" {
			env := gitDirEnv(gitDir, dir)
			cur, err := runGit(ctx, dir, env, "symbolic-ref", "--quiet", "--short", "HEAD")
			if err == nil && strings.TrimSpace(cur) == branch {
				if err := r.clearStaleLocks(ctx, dir, env, branch); err != nil {
					return nil, fmt.Errorf("open worktree %s: %w", runID, err)
				}
				if fi, err := os.Lstat(dir); err == nil && fi.IsDir() && fi.Mode().Perm() != 0o700 {
					_ = private(dir) // one an earlier version made 0755; best effort: another owner's stays
				}
				return r.worktree(runID, dir, branch)
			}
		}
		return nil, fmt.Errorf("open worktree %s: %s exists but is not a worktree on %s; move it away and resume again", runID, dir, branch)
	}
	if err := r.ensureExcluded(); err != nil {
		return nil, fmt.Errorf("open worktree %s: %w", runID, err)
	}
	// Forget the vanished directory's registration, then check the branch out again.
	if _, err := runGit(ctx, r.root, nil, "worktree", "prune"); err != nil {
		return nil, fmt.Errorf("open worktree %s: %w", runID, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, fmt.Errorf("open worktree %s: %w", runID, err)
	}
	if _, err := runGit(ctx, r.root, nil, "worktree", "add", "--quiet", dir, branch); err != nil {
		return nil, fmt.Errorf("open worktree %s: re-create: %w", runID, err)
	}
	if err := private(dir); err != nil {
		return nil, fmt.Errorf("open worktree %s: %w", runID, err)
	}
	return r.worktree(runID, dir, branch)
}

// RemoveWorktree deletes the run's worktree directory (even with changes in
// it) and its registration. The branch and its commits are kept: they are
// the run's result. Removing a worktree that is already gone is not an error.
func (r *Repo) RemoveWorktree(ctx context.Context, runID string) error {
	if err := checkRunID(runID); err != nil {
		return err
	}
	dir := r.WorktreeDir(runID)
	if _, err := os.Lstat(dir); err == nil {
		if _, err := runGit(ctx, r.root, nil, "worktree", "remove", "--force", dir); err != nil {
			// Not a registered worktree (e.g. half-created): remove the directory itself.
			if rmErr := os.RemoveAll(dir); rmErr != nil {
				return fmt.Errorf("remove worktree %s: %w", runID, errors.Join(err, rmErr))
			}
		}
	}
	if _, err := runGit(ctx, r.root, nil, "worktree", "prune"); err != nil {
		return fmt.Errorf("remove worktree %s: %w", runID, err)
	}
	return nil
}

// DeleteBranch deletes the run's branch lemmings/<runID> (its worktree must
// be removed first) and its rescue branches (lemmings/<runID>-rescue…, see
// Worktree.Rescue). The commits become unreachable.
func (r *Repo) DeleteBranch(ctx context.Context, runID string) error {
	if err := checkRunID(runID); err != nil {
		return err
	}
	branches := []string{BranchPrefix + runID}
	out, err := runGit(ctx, r.root, nil, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+BranchPrefix+runID+"-rescue*")
	if err != nil {
		return fmt.Errorf("delete branch of run %s: %w", runID, err)
	}
	branches = append(branches, strings.Fields(out)...)
	if _, err := runGit(ctx, r.root, nil, append([]string{"branch", "-D", "--quiet"}, branches...)...); err != nil {
		return fmt.Errorf("delete branch of run %s: %w", runID, err)
	}
	return nil
}

// clearStaleLocks removes the lock files a killed git command leaves in the
// worktree (its index and the run branch). Resuming means no other process
// works in this worktree (the run holds its lock), so they are stale.
func (r *Repo) clearStaleLocks(ctx context.Context, dir string, env []string, branch string) error {
	out, err := runGit(ctx, dir, env, "rev-parse", "--path-format=absolute",
		"--git-path", "index.lock", "--git-path", "HEAD.lock", "--git-path", "refs/heads/"+branch+".lock")
	if err != nil {
		return err
	}
	for _, p := range strings.Split(strings.TrimSpace(out), "\n") {
		if p == "" {
			continue
		}
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove stale lock %s: %w", p, err)
		}
	}
	return nil
}

func (r *Repo) branchExists(ctx context.Context, branch string) (bool, error) {
	_, err := runGit(ctx, r.root, nil, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, err
}

func (r *Repo) worktree(runID, dir, branch string) (*Worktree, error) {
	fsys, err := Open(dir)
	if err != nil {
		return nil, err
	}
	gitDir := r.adminDir(dir)
	if gitDir == "" {
		return nil, fmt.Errorf("open worktree %s: %s is not registered in %s", runID, dir, filepath.Join(r.commonDir, "worktrees"))
	}
	return &Worktree{repo: r, runID: runID, dir: fsys.Root(), branch: branch, fs: fsys, gitDir: gitDir}, nil
}

// adminDir finds the git directory of the worktree at dir from the
// repository's side (<common>/worktrees/*/gitdir names each worktree's
// .git); "" when dir is not a registered worktree.
func (r *Repo) adminDir(dir string) string {
	base := filepath.Join(r.commonDir, "worktrees")
	entries, err := os.ReadDir(base)
	if err != nil {
		return ""
	}
	want := filepath.Join(dir, ".git")
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(base, e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		if got := filepath.Clean(strings.TrimSpace(string(data))); got == want || samePath(filepath.Dir(got), dir) {
			return filepath.Join(base, e.Name())
		}
	}
	return ""
}

// gitDirEnv names a worktree's git directory and files for git.
func gitDirEnv(gitDir, dir string) []string {
	return []string{"GIT_DIR=" + gitDir, "GIT_WORK_TREE=" + dir}
}

// git runs git on the worktree through its git directory.
func (w *Worktree) git(ctx context.Context, env []string, args ...string) (string, error) {
	return runGit(ctx, w.dir, append(gitDirEnv(w.gitDir, w.dir), env...), args...)
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// Dir returns the worktree's absolute directory.
func (w *Worktree) Dir() string { return w.dir }

// FS returns confined file access to the worktree.
func (w *Worktree) FS() *FS { return w.fs }

// Branch returns the run branch, lemmings/<run-id>.
func (w *Worktree) Branch() string { return w.branch }

// RunID returns the run the worktree belongs to.
func (w *Worktree) RunID() string { return w.runID }

// Repo returns the user's repository (the coding-CLI Implementor checks that
// nothing outside the worktree changed).
func (w *Worktree) Repo() *Repo { return w.repo }

// Head returns the full hash of the worktree's HEAD commit.
func (w *Worktree) Head(ctx context.Context) (string, error) {
	out, err := w.git(ctx, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("read worktree HEAD: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// Reattach puts HEAD back on the run's branch when something else (a coding
// CLI, say) checked out another branch or detached it; the files stay as
// they are.
func (w *Worktree) Reattach(ctx context.Context) error {
	want := "refs/heads/" + w.branch
	if cur, _ := w.git(ctx, nil, "symbolic-ref", "-q", "HEAD"); strings.TrimSpace(cur) == want {
		return nil
	}
	if _, err := w.git(ctx, nil, "symbolic-ref", "HEAD", want); err != nil {
		return fmt.Errorf("reattach HEAD to %s: %w", w.branch, err)
	}
	return nil
}

// private makes a worktree's folder readable by its user only (0700): it
// holds what the model writes and what its tests leave, executables
// included, for no other user of the machine to run.
func private(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("make %s private: %w", dir, err)
	}
	return nil
}
