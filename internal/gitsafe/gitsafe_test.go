package gitsafe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	args := strings.Join(Args(context.Background(), repo), " ")
	for _, want := range []string{"core.fsmonitor=false", "filter.evil.clean=my-clean", "filter.evil.smudge=", "core.sshcommand=ssh -i ~/.ssh/work", "diff.evil.textconv=cat", "commit.gpgsign=false", "gpg.program=gpg"} {
		if !strings.Contains(args, want) {
			t.Errorf("%q lacks %q", args, want)
		}
	}
}
