package gitsafe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileRepo is a repository whose own configuration (through includeIf,
// as the attack did) and committed .gitattributes name commands
// that append their name to marker.
func hostileRepo(t *testing.T) (repo, marker string) {
	t.Helper()
	dir := t.TempDir()
	repo, marker = filepath.Join(dir, "repo"), filepath.Join(dir, "marker")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+filepath.Join(dir, "global"), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q", "-b", "main")
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one\n", 0o644)
	run("-c", "user.name=t", "-c", "user.email=t@t.invalid", "add", "a.txt")
	run("-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "one")
	say := func(what string) string { return "\"sh -c 'echo " + what + " >> " + marker + "; cat'\"" }
	script := filepath.Join(dir, "fsmonitor.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho fsmonitor >> "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The include target is a file of the work tree, as a repository
	// delivered whole would have it.
	write("settings.cfg", "[core]\n\tfsmonitor = "+script+"\n\tpager = "+say("pager")+"\n\tsshCommand = "+say("ssh")+"\n", 0o644)
	cfg := "[includeIf \"onbranch:main\"]\n\tpath = ../settings.cfg\n" +
		"[filter \"evil\"]\n\tclean = " + say("clean") + "\n\tsmudge = " + say("smudge") + "\n\trequired = true\n" +
		"[diff \"evil\"]\n\ttextconv = " + say("textconv") + "\n\tcommand = " + say("diffcommand") + "\n" +
		"[diff]\n\texternal = " + say("external") + "\n" +
		"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = " + say("gpg") + "\n"
	f, err := os.OpenFile(filepath.Join(repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(cfg)
	f.Close()
	write(".gitattributes", "* filter=evil diff=evil\n", 0o644)
	return repo, marker
}

// Everything lemmings asks git to do on such a repository runs none of it.
func TestTheRepositorysConfigRunsNothing(t *testing.T) {
	t.Parallel()
	repo, marker := hostileRepo(t)
	ctx := context.Background()
	git := func(args ...string) string {
		t.Helper()
		cmd := Command(ctx, repo, args...)
		cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("status", "--porcelain")
	git("add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "two")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\ntwo\n"), 0o644)
	if d := git("diff", "HEAD"); !strings.Contains(d, "+two") {
		t.Errorf("the diff lost its content:\n%s", d)
	}
	git("log", "-p", "-1")
	git("show", "HEAD")
	git("worktree", "add", "-q", filepath.Join(t.TempDir(), "wt"), "HEAD")
	git("checkout", "-q", "--", "a.txt")
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the repository's configuration ran:\n%s", b)
	}
	// The plain git does run them: the attack is real.
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	cmd.Run()
	if _, err := os.ReadFile(marker); err != nil {
		t.Error("plain git ran nothing: the fixture does not attack")
	}
}

// A driver or helper of the user's own files (git-lfs, a credential
// helper) keeps working when the repository sets the same key.
func TestTheUsersOwnValuesWin(t *testing.T) {
	repo, _ := hostileRepo(t)
	global := filepath.Join(t.TempDir(), "gitconfig")
	os.WriteFile(global, []byte("[filter \"evil\"]\n\tclean = my-clean\n[core]\n\tsshCommand = ssh -i ~/.ssh/work\n[credential]\n\thelper = store\n"), 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	cmd := exec.Command("git", "config", "core.attributesFile", filepath.Join(repo, "attributes"))
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Setenv("XDG_CONFIG_HOME", "/home/someone/.config")
	args := strings.Join(Args(context.Background(), repo), " ")
	for _, want := range []string{"core.fsmonitor=false", "core.attributesfile=/home/someone/.config/git/attributes", "diff.ignoreSubmodules=all", "filter.evil.clean=my-clean", "filter.evil.smudge=", "core.sshcommand=ssh -i ~/.ssh/work", "diff.evil.textconv=cat", "commit.gpgsign=false", "gpg.program=gpg"} {
		if !strings.Contains(args, want) {
			t.Errorf("%q lacks %q", args, want)
		}
	}
}

// nestedRepo is a repository with a committed gitlink, sub, that a gate made
// a repository of its own, and a repository a model's test made, fixture,
// untracked: each has a clean filter of its own configuration that appends
// to marker, and a committed file whose time was moved back, which git
// hashes again (through the filter) the next time it looks.
func nestedRepo(t *testing.T) (repo, marker string) {
	t.Helper()
	dir := t.TempDir()
	repo, marker = filepath.Join(dir, "repo"), filepath.Join(dir, "marker")
	run := func(in string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t.invalid"}, args...)...)
		cmd.Dir = filepath.Join(repo, in)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v in %s: %v\n%s", args, in, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one\n")
	run("", "init", "-q", "-b", "main")
	run("", "add", "a.txt")
	run("", "commit", "-q", "-m", "one")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"sub", "fixture"} {
		write(name+"/data.txt", "data\n")
		run(name, "init", "-q")
		run(name, "config", "filter.evil.clean", "sh -c 'echo "+name+" >> "+marker+"; cat'")
		run(name, "config", "core.fsmonitor", "sh -c 'echo fsmonitor-"+name+" >> "+marker+"'")
		write(name+"/.gitattributes", "* filter=evil\n")
		run(name, "add", ".")
		if err := os.Remove(marker); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		run(name, "-c", "filter.evil.clean=cat", "commit", "-q", "-m", "nested")
		if name == "sub" {
			run("", "update-index", "--add", "--cacheinfo", "160000,"+run("sub", "rev-parse", "HEAD")+",sub")
			run("", "commit", "-q", "-m", "gitlink")
		}
		if err := os.Chtimes(filepath.Join(repo, name, "data.txt"), old, old); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(marker)
	return repo, marker
}

// Nothing lemmings asks git to do on the outer repository goes into a
// nested one (issue 43, attacks 2 and 3).
func TestNoNestedRepositorysConfigRuns(t *testing.T) {
	t.Parallel()
	repo, marker := nestedRepo(t)
	ctx := context.Background()
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}
	git := func(args ...string) string {
		t.Helper()
		out, err := CommandEnv(ctx, repo, env, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\ntwo\n"), 0o644)
	git("status", "--porcelain=v1", "-z", "--untracked-files=all")
	git("diff", "--name-only")
	git("diff", "HEAD")
	git("diff-files")
	git("diff-index", "HEAD")
	git("add", "--all")
	if staged := git("diff", "--cached", "--name-only"); staged != "a.txt\n" {
		t.Errorf("staged %q, want a.txt alone (no gitlink, no nested repository)", staged)
	}
	git("-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "two")
	git("log", "-p", "-2")
	git("show", "HEAD")
	git("reset", "-q", "--hard", "HEAD")
	git("clean", "-fd")
	git("revert", "--no-commit", "HEAD")
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("a nested repository's configuration ran:\n%s", b)
	}
	if tree := git("ls-tree", "-r", "HEAD"); strings.Contains(tree, "fixture") {
		t.Errorf("the untracked nested repository was committed:\n%s", tree)
	}
	// The plain git does go in: the attack is real.
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), env...)
	cmd.Run()
	if _, err := os.ReadFile(marker); err != nil {
		t.Error("plain git ran nothing: the fixture does not attack")
	}
}

// An add with pathspecs of its own keeps them, and still stages no nested
// repository; the caller's environment cannot make git read the exclusions
// as plain names, nor point it at another repository.
func TestAddKeepsItsPathspecsAndTheEnvironmentCannotUndoTheExclusions(t *testing.T) {
	repo, marker := nestedRepo(t)
	ctx := context.Background()
	t.Setenv("GIT_LITERAL_PATHSPECS", "1")
	t.Setenv("GIT_DIR", filepath.Join(repo, "sub", ".git"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	os.WriteFile(filepath.Join(repo, "b.txt"), []byte("b\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "c.txt"), []byte("c\n"), 0o644)
	if out, err := Command(ctx, repo, "add", "-f", "--", "b.txt", "fixture").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	out, err := Command(ctx, repo, "diff", "--cached", "--name-only").CombinedOutput()
	if err != nil || string(out) != "b.txt\n" {
		t.Errorf("staged %q (%v), want b.txt alone", out, err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("a nested repository's configuration ran:\n%s", b)
	}
}
