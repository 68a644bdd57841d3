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
//
// A repository nested in the work tree has a configuration of its own, which
// no -c override can name in advance: a committed gitlink a gate makes a
// repository, or a model's test fixture, with a clean filter defined in its
// own .git/config. git runs a command there only when it goes into the
// nested repository, which it does to see whether a gitlink is "dirty"
// (status, diff, and add, which has no option against it). So git never
// goes into one: status and the diffs pass --ignore-submodules=all (and
// diff.ignoreSubmodules=all is set for the porcelain that takes no option),
// add never stages a gitlink or a repository nested in the work tree (it is
// given them as excluded pathspecs), and nothing recurses into submodules
// (submodule.recurse, fetch.recurseSubmodules, push.recurseSubmodules).
// The variables that would point git at another repository or change how
// it reads pathspecs (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE,
// GIT_LITERAL_PATHSPECS…) are dropped from the environment git inherits;
// callers name their own (a worktree's GIT_DIR) through CommandEnv.
package gitsafe

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// always are overridden on every command: no hook, no file system monitor,
// and no way into a nested repository (a submodule, a gitlink a gate made
// a repository, a model's fixture).
var always = []string{
	"core.hooksPath=" + os.DevNull,
	"core.fsmonitor=false",
	"submodule.recurse=false",
	"diff.ignoreSubmodules=all",
	"status.submoduleSummary=false",
	"diff.submodule=short",
	"fetch.recurseSubmodules=false",
	"push.recurseSubmodules=no",
}

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
	"protocol.allow":            "user",
	"protocol.ext.allow":        "never",
	"credential.helper":         "", // an empty helper clears the list; the user's own are added back
	"core.attributesfile":       "", // the user's, or git's default (defaultAttributes): a repository's names no file of its choosing
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

// list reads git's configuration of dir (with env, which may name its git
// directory) with where each value comes from.
func list(ctx context.Context, dir string, env []string) []entry {
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "config", "--list", "--show-scope", "--includes", "-z")
	cmd.Env = append(environ(), "GIT_TERMINAL_PROMPT=0")
	cmd.Env = append(cmd.Env, env...)
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
func Args(ctx context.Context, dir string) []string { return ArgsEnv(ctx, dir, nil) }

// ArgsEnv is Args for a command run with env (a worktree's GIT_DIR, say).
func ArgsEnv(ctx context.Context, dir string, env []string) []string {
	var opts []string
	for _, kv := range always {
		opts = append(opts, "-c", kv)
	}
	es := list(ctx, dir, env)
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
		if key == "core.attributesfile" {
			n = defaultAttributes()
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

// defaultAttributes is the attributes file git reads when no one sets
// core.attributesFile: $XDG_CONFIG_HOME/git/attributes, else
// ~/.config/git/attributes (os.DevNull without a home).
func defaultAttributes() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "attributes")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "git", "attributes")
	}
	return os.DevNull
}

// diffCommands produce diffs: an external diff or textconv driver would run,
// and each would go into a nested repository to see whether it is dirty.
var diffCommands = []string{"diff", "log", "show", "diff-tree", "diff-index", "diff-files", "format-patch", "whatchanged"}

// Command returns the git command for args in dir, hardened: the -c
// options of Args, --no-ext-diff, --no-textconv and
// --ignore-submodules=all for the commands that diff (status takes the
// last), an add that stages no gitlink and no nested repository, and an
// environment with no pager, editor or prompt, nor a repository or a
// pathspec mode of the caller's environment.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	return CommandEnv(ctx, dir, nil, args...)
}

// CommandEnv is Command with env added to git's environment, where the
// configuration is read too (a worktree's GIT_DIR and GIT_WORK_TREE, a
// temporary GIT_INDEX_FILE). Variables appended to the command's Env
// afterwards reach git but not the configuration it was hardened against:
// name a repository here.
func CommandEnv(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	full := ArgsEnv(ctx, dir, env)
	var stdin []byte
	var err error
	switch {
	case len(args) > 0 && slices.Contains(diffCommands, args[0]):
		full = append(full, args[0], "--no-ext-diff", "--no-textconv", "--ignore-submodules=all")
		full = append(full, args[1:]...)
	case len(args) > 0 && args[0] == "status":
		full = append(full, "status", "--ignore-submodules=all")
		full = append(full, args[1:]...)
	case len(args) > 0 && args[0] == "add":
		var add []string
		add, stdin, err = addArgs(ctx, dir, env, full, args[1:])
		full = append(full, add...)
	default:
		full = append(full, args...)
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(environ(), Env()...)
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err != nil {
		cmd.Err = err // Start (Run, Output…) returns it: no add that could go into a nested repository
	}
	return cmd
}

// addArgs rewrites an add of opts (options, then pathspecs, "--" or not) so
// that it stages no gitlink and no repository nested in the work tree: git
// add goes into every gitlink whose commit is the index's to see whether it
// is dirty (there is no option against it), and stages a nested
// repository as a gitlink. The pathspecs, the caller's (the whole tree when
// none) and an exclusion of each of those, go on standard input.
func addArgs(ctx context.Context, dir string, env, cfg, opts []string) (args []string, stdin []byte, err error) {
	var specs []string
	for i, o := range opts {
		if o == "--" {
			specs = append(specs, opts[i+1:]...)
			opts = opts[:i]
			break
		}
		if !strings.HasPrefix(o, "-") {
			specs = append(specs, opts[i:]...)
			opts = opts[:i]
			break
		}
	}
	if len(specs) == 0 {
		specs = []string{":/"}
	}
	nested, err := nestedRepos(ctx, dir, env, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("git add: list the nested repositories: %w", err)
	}
	var in bytes.Buffer
	for _, s := range specs {
		in.WriteString(s)
		in.WriteByte(0)
	}
	for _, p := range nested {
		in.WriteString(":(top,exclude,literal)" + p)
		in.WriteByte(0)
	}
	out := append([]string{"add"}, opts...)
	return append(out, "--pathspec-from-file=-", "--pathspec-file-nul"), in.Bytes(), nil
}

// Nested lists, from the top of dir's work tree, what git must never go
// into: the gitlinks of the index (submodules, populated or not) and the
// repositories nested in the work tree that git does not track (git lists
// such a folder, not its files, with a slash after it). Neither listing goes
// into a nested repository.
func Nested(ctx context.Context, dir string, env []string) ([]string, error) {
	return nestedRepos(ctx, dir, env, ArgsEnv(ctx, dir, env))
}

// nestedRepos is Nested with the -c options of ArgsEnv already made.
func nestedRepos(ctx context.Context, dir string, env, cfg []string) ([]string, error) {
	run := func(args ...string) ([]string, error) {
		cmd := exec.CommandContext(ctx, "git", append(slices.Clone(cfg), args...)...)
		cmd.Dir = dir
		cmd.Env = append(append(environ(), Env()...), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
		}
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"), nil
	}
	staged, err := run("ls-files", "-z", "--stage", "--full-name")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rec := range staged {
		// "mode object stage\tpath"
		if meta, path, ok := strings.Cut(rec, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			out = append(out, path)
		}
	}
	others, err := run("ls-files", "-z", "--others", "--exclude-standard", "--full-name")
	if err != nil {
		return nil, err
	}
	for _, p := range others {
		if strings.HasSuffix(p, "/") {
			out = append(out, strings.TrimSuffix(p, "/"))
		}
	}
	return out, nil
}

// Env is what git's environment gets: no pager, editor or credential
// prompt, whatever the repository says.
func Env() []string {
	return []string{"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true", "GIT_ASKPASS=", "SSH_ASKPASS="}
}

// dropped are the variables of lemmings' own environment git never
// inherits: those that point it at another repository, index or object
// store (lemmings started from a hook or an alias has GIT_DIR set), and
// those that change how it reads pathspecs (GIT_LITERAL_PATHSPECS would
// turn add's exclusions of nested repositories into plain names).
var dropped = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_IMPLICIT_WORK_TREE", "GIT_INTERNAL_SUPER_PREFIX",
	"GIT_SHALLOW_FILE", "GIT_GRAFT_FILE", "GIT_REPLACE_REF_BASE", "GIT_NO_REPLACE_OBJECTS", "GIT_QUARANTINE_PATH",
	"GIT_CONFIG", "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
}

// environ is lemmings' environment without the dropped variables.
func environ() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(dropped, k) {
			out = append(out, kv)
		}
	}
	return out
}
