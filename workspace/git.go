package workspace

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/lemmings-dev/lemmings/internal/gitsafe"
)

// runGit runs git in dir and returns its standard output. A failure is a
// *GitError carrying git's own message; a missing binary says so.
func runGit(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return runGitInput(ctx, dir, env, nil, args...)
}

func runGitInput(ctx context.Context, dir string, env []string, stdin []byte, args ...string) (string, error) {
	// No hook, monitor, filter, diff driver or pager of the repository's
	// configuration runs (package gitsafe); never a prompt or an editor.
	// env (a worktree's GIT_DIR) is given to gitsafe, which reads the
	// configuration to harden against through it.
	cmd := gitsafe.CommandEnv(ctx, dir, append([]string{"LC_ALL=C", "LANGUAGE=C"}, env...), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("git is not installed or not on PATH: install git: %w", err)
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), &GitError{Args: args, ExitCode: ee.ExitCode(), Stderr: stderr.String()}
	}
	return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
}

// exitCode returns the exit status of a failed git command, or -1.
func exitCode(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// Repo is the user's git repository.
type Repo struct {
	root      string // top level of the user's work tree
	commonDir string // the shared .git directory (absolute)
}

// OpenRepo finds the git repository containing dir. It fails with
// ErrNotGitRepo when there is none, ErrBareRepo for a bare repository (no
// work tree) and ErrNoCommits when HEAD has no commit.
func OpenRepo(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("open repository %s: not an existing directory", dir)
	}
	out, err := runGit(ctx, abs, nil, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "must be run in a work tree") {
			return nil, fmt.Errorf("%s: %w", abs, ErrBareRepo)
		}
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository") {
			return nil, fmt.Errorf("%s: %w", abs, ErrNotGitRepo)
		}
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("open repository %s: unexpected rev-parse output %q", dir, out)
	}
	top, err := filepath.EvalSymlinks(lines[0])
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	r := &Repo{root: top, commonDir: filepath.Clean(lines[1])}
	if _, err := runGit(ctx, top, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		if exitCode(err) > 0 {
			return nil, fmt.Errorf("%s: %w", top, ErrNoCommits)
		}
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	return r, nil
}

// Root returns the top-level directory of the user's work tree.
func (r *Repo) Root() string { return r.root }

// HeadCommit returns the full hash of the user's HEAD commit.
func (r *Repo) HeadCommit(ctx context.Context) (string, error) {
	out, err := runGit(ctx, r.root, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// Dirty lists the paths with uncommitted changes in the user's checkout
// (modified, staged, deleted, untracked; ignored files excluded). The run
// starts from HEAD, so these changes are not part of it.
func (r *Repo) Dirty(ctx context.Context) ([]string, error) {
	out, err := runGit(ctx, r.root, nil, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, fmt.Errorf("git status: %w", err)
	}
	return parsePorcelainZ(out), nil
}

// parsePorcelainZ extracts paths from `git status --porcelain=v1 -z`.
func parsePorcelainZ(out string) []string {
	var paths []string
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		paths = append(paths, f[3:])
		if f[0] == 'R' || f[0] == 'C' {
			i++ // the rename's source follows
		}
	}
	return paths
}

// ensureExcluded makes git ignore .lemmings/ through .git/info/exclude, so
// the user's .gitignore is never edited.
// ExcludeRunData makes git ignore lemmings' .lemmings/ folders (at any
// depth: an index may live in a subdirectory) through .git/info/exclude,
// never the user's .gitignore.
func (r *Repo) ExcludeRunData() error { return r.ensureExcluded() }

func (r *Repo) ensureExcluded() error {
	info := filepath.Join(r.commonDir, "info")
	file := filepath.Join(info, "exclude")
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", file, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(line) {
		case ".lemmings", ".lemmings/", "/.lemmings", "/.lemmings/":
			return nil
		}
	}
	if err := os.MkdirAll(info, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", info, err)
	}
	add := "# lemmings run data (worktrees, checkpoints, logs, index)\n.lemmings/\n"
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		add = "\n" + add
	}
	fh, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", file, err)
	}
	if _, err := fh.WriteString(add); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", file, err)
	}
	return fh.Close()
}

// CacheIDFile is the file of the repository's git directory that holds its
// identity for the sandbox's caches (CacheScope).
const CacheIDFile = "lemmings-cache-id"

// CacheScope names the repository for the sandbox's caches
// (sandbox.Config.Scope): its top folder and a random identity kept in its
// git directory, made on first use. The path alone was not the repository: a
// repository deleted and another cloned at the same path got the first
// one's caches, with what its gates had planted there (a changed module
// source). The identity is in .git, which no clone copies and no sandboxed
// command can write; a fresh clone gets its own. The path stays part of it,
// so a git directory that arrives with an identity (a repository delivered
// whole, its id copied from another's) still gets caches of its own. Not the
// root commit: a fork has the one of what it forked.
func (r *Repo) CacheScope() (string, error) {
	id, err := r.cacheID()
	if err != nil {
		return "", err
	}
	return r.root + "#" + id, nil
}

func (r *Repo) cacheID() (string, error) {
	p := filepath.Join(r.commonDir, CacheIDFile)
	for range 2 {
		id, err := readCacheID(p)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("the repository's identity for the sandbox's caches: %w (remove %s: lemmings makes a new one, and the caches start afresh)", err, p)
		}
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another run made it first: read that one
		}
		if err != nil {
			return "", fmt.Errorf("the repository's identity for the sandbox's caches: %w", err)
		}
		_, err = f.WriteString(hex.EncodeToString(b[:]) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(p)
			return "", fmt.Errorf("the repository's identity for the sandbox's caches: %w", err)
		}
	}
	return readCacheID(p)
}

// readCacheID reads an identity file: a regular file, not a link, of 32 hex
// digits.
func readCacheID(p string) (string, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", fmt.Errorf("%s is a symbolic link", p)
		}
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	data, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(data))
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%s does not hold an identity (32 hex digits)", p)
	}
	return id, nil
}

// Refs maps every ref of the repository to the commit it names.
func (r *Repo) Refs(ctx context.Context) (map[string]string, error) {
	out, err := runGit(ctx, r.root, nil, "for-each-ref", "--format=%(refname) %(objectname)")
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	refs := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, sha, ok := strings.Cut(l, " "); ok {
			refs[name] = sha
		}
	}
	return refs, nil
}
