// Package gitsafe starts git so that a repository's own configuration runs
// nothing: lemmings runs git outside the sandbox, on repositories it did not
// write. A repository's .git/config (and what it includes, through include
// and includeIf) can name commands that git runs by itself: core.fsmonitor
// on every status, the filter drivers .gitattributes assigns on every add
// and checkout, diff drivers and textconv on every diff, hooks, ssh,
// pagers, editors, gpg and credential helpers. Each is overridden on the
// command line (-c, which git reads last) with the user's own value from
// their global or system file, or with a value that runs nothing; diffs
// also pass --no-ext-diff and --no-textconv.
package gitsafe

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// always are overridden on every command: no hook, no file system monitor.
var always = []string{"core.hooksPath=" + os.DevNull, "core.fsmonitor=false"}

// commandKeys are the keys (lower case, as git lists them) that name a
// command git runs, with the value that runs nothing (or the stock tool).
var commandKeys = map[string]string{
	"core.sshcommand":           "ssh",
	"core.gitproxy":             "",
	"core.askpass":              "",
	"core.pager":                "cat",
	"core.editor":               "true",
	"sequence.editor":           "true",
	"core.alternaterefscommand": "",
	"diff.external":             "", // diffs pass --no-ext-diff too: an empty one is an error, not nothing
	"gpg.program":               "gpg",
	"gpg.openpgp.program":       "gpg",
	"gpg.x509.program":          "gpgsm",
	"gpg.ssh.program":           "ssh-keygen",
	"gpg.ssh.defaultkeycommand": "",
	"commit.gpgsign":            "false",
	"log.showsignature":         "false", // git log would run gpg.program
	"tag.gpgsign":               "false",
	"push.gpgsign":              "false",
	"submodule.recurse":         "false",
	"protocol.allow":            "user",
	"protocol.ext.allow":        "never",
	"credential.helper":         "", // an empty helper clears the list; the user's own are added back
}

// driverKeys are the per-driver keys (<section>.<driver>.<key>) that run a
// command, with the value that runs nothing.
var driverKeys = map[string][]string{
	"filter": {"clean=", "smudge=", "process=", "required=false"},
	"diff":   {"textconv=cat", "command=", "cachetextconv=false"},
	"merge":  {"driver="},
	"pager":  nil, // pager.<cmd>: the whole key
	"remote": {"uploadpack=git-upload-pack", "receivepack=git-receive-pack"},
}

type entry struct{ scope, key, value string }

// list reads git's configuration of dir with where each value comes from.
func list(ctx context.Context, dir string) []entry {
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "config", "--list", "--show-scope", "--includes", "-z")
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.Output()
	if err != nil {
		return nil // not a repository, or no configuration: nothing to override
	}
	// "-z" with "--show-scope" writes: scope NUL key LF value NUL.
	recs := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var es []entry
	for i := 0; i+1 < len(recs); i += 2 {
		key, value, _ := strings.Cut(recs[i+1], "\n")
		es = append(es, entry{scope: recs[i], key: strings.ToLower(key), value: value})
	}
	return es
}

// Args returns the -c options for git commands run in dir: the fixed ones,
// and for every command-running key the repository's own files (local,
// worktree) set, the user's value or one that runs nothing.
func Args(ctx context.Context, dir string) []string {
	var opts []string
	for _, kv := range always {
		opts = append(opts, "-c", kv)
	}
	es := list(ctx, dir)
	users := map[string][]string{} // the values of the global and system files, by key
	for _, e := range es {
		if e.scope == "global" || e.scope == "system" {
			users[e.key] = append(users[e.key], e.value)
		}
	}
	done := map[string]bool{}
	for _, e := range es {
		if e.scope != "local" && e.scope != "worktree" || done[e.key] {
			continue
		}
		done[e.key] = true
		for _, kv := range overrides(e.key, users) {
			opts = append(opts, "-c", kv)
		}
	}
	return opts
}

// overrides are the key=value settings that undo what the repository set
// for key.
func overrides(key string, users map[string][]string) []string {
	if n, ok := commandKeys[key]; ok || strings.HasPrefix(key, "credential.") && strings.HasSuffix(key, ".helper") {
		own := users[key]
		if key == "credential.helper" || strings.HasPrefix(key, "credential.") {
			// The empty value clears the list the repository added to; the
			// user's own helpers come back after it.
			return append([]string{key + "="}, prefixed(key+"=", own)...)
		}
		if len(own) > 0 {
			return []string{key + "=" + own[len(own)-1]}
		}
		return []string{key + "=" + n}
	}
	section, rest, ok := strings.Cut(key, ".")
	if !ok {
		return nil
	}
	i := strings.LastIndexByte(rest, '.')
	if section == "pager" {
		return []string{key + "=cat"}
	}
	if i < 0 {
		return nil
	}
	driver := rest[:i]
	sets, ok := driverKeys[section]
	if !ok {
		return nil
	}
	var out []string
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		full := section + "." + driver + "." + k
		if own := users[full]; len(own) > 0 {
			v = own[len(own)-1] // the user's own driver of that name (git-lfs, say)
		}
		out = append(out, full+"="+v)
	}
	return out
}

func prefixed(p string, vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = p + v
	}
	return out
}

// diffCommands produce diffs: an external diff or textconv driver would run.
var diffCommands = []string{"diff", "log", "show", "diff-tree", "diff-index", "diff-files", "format-patch", "whatchanged"}

// Command returns the git command for args in dir, hardened: the -c
// options of Args, --no-ext-diff and --no-textconv for the commands that
// diff, and an environment with no pager, editor or prompt.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	full := Args(ctx, dir)
	if len(args) > 0 && slices.Contains(diffCommands, args[0]) {
		full = append(full, args[0], "--no-ext-diff", "--no-textconv")
		full = append(full, args[1:]...)
	} else {
		full = append(full, args...)
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), Env()...)
	return cmd
}

// Env is what git's environment gets: no pager, editor or credential
// prompt, whatever the repository says.
func Env() []string {
	return []string{"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true", "GIT_ASKPASS=", "SSH_ASKPASS="}
}
