package codingcli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/tempdir"
)

// A coding CLI's state folders (~/.claude, ~/.codex, ~/.gemini, ~/.qwen)
// hold what its next session runs: hooks, MCP servers, an apiKeyHelper,
// instructions. Writable from the sandbox, a hostile run could plant a
// hook that runs, unsandboxed, in your next interactive session. The CLI
// gets private copies instead, in a HOME of the run's own: your settings,
// login and instructions as they are, its writes dropped when it ends;
// only a refreshed login (Credentials) is written back, so a token the CLI
// rotated does not leave you logged out.

// Folders of a state folder left out of the copy: transcripts, histories,
// logs and caches, large and not needed by a headless run.
var stateSkip = map[string]bool{
	"projects": true, "sessions": true, "archived_sessions": true, "shell-snapshots": true, "todos": true,
	"statsig": true, "logs": true, "log": true, "debug": true, "file-history": true, "tmp": true,
	"history": true, "cache": true, "ide": true, "marketplaces": true,
}

// maxStateFile bounds one copied file; larger ones (a history) are left out.
const maxStateFile = 8 << 20

// maxCredentials bounds a credentials file written back.
const maxCredentials = 64 << 10

// privateState copies the preset's state (Writable) out of the HOME and
// variables env names into a private folder, and returns env pointed at
// the copies, the folder to make writable, and a cleanup that writes back
// the credentials (saying why one was kept) and removes the copies.
func (p Preset) privateState(env []string) ([]string, []string, func() []string, error) {
	if len(p.Writable) == 0 {
		return env, nil, func() []string { return nil }, nil
	}
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v // the last value wins, as for the process
		}
	}
	priv, err := tempdir.Make(tempdir.CLI, p.Name+"-home-")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s private state: %w", p.Name, err)
	}
	fail := func(err error) ([]string, []string, func() []string, error) {
		os.RemoveAll(priv)
		return nil, nil, nil, fmt.Errorf("%s private state: %w", p.Name, err)
	}
	copies := map[string]string{} // original → copy, for the write-back
	resolve := func(w string) (orig, cp string, ok bool) {
		switch {
		case strings.HasPrefix(w, "~/"):
			if vars["HOME"] == "" {
				return "", "", false
			}
			return filepath.Join(vars["HOME"], w[2:]), filepath.Join(priv, w[2:]), true
		case strings.HasPrefix(w, "$"):
			name, rest, _ := strings.Cut(w[1:], "/")
			v := vars[name]
			if !filepath.IsAbs(v) {
				return "", "", false
			}
			return filepath.Join(v, rest), filepath.Join(priv, ".lemmings-state", name, rest), true
		}
		return "", "", false
	}
	var out []string
	for _, w := range p.Writable {
		dir := strings.HasSuffix(w, "/")
		orig, cp, ok := resolve(strings.TrimSuffix(w, "/"))
		if !ok {
			continue
		}
		if strings.HasPrefix(w, "$") {
			name, _, _ := strings.Cut(w[1:], "/")
			out = append(out, name+"="+cp)
		}
		if err := copyState(orig, cp); err != nil {
			return fail(err)
		}
		if dir {
			if err := os.MkdirAll(cp, 0o700); err != nil {
				return fail(err)
			}
		}
		copies[filepath.Clean(orig)] = cp
	}
	type credential struct{ orig, cp string }
	var creds []credential
	for _, c := range p.Credentials {
		if orig, cp, ok := resolve(c); ok {
			creds = append(creds, credential{orig, cp})
		}
	}
	env = append(append(append([]string(nil), env...), "HOME="+priv), out...)
	cleanup := func() []string {
		var warnings []string
		for _, c := range creds {
			if w := writeBackCredentials(c.orig, c.cp); w != "" {
				warnings = append(warnings, w)
			}
		}
		os.RemoveAll(priv)
		return warnings
	}
	return env, []string{priv}, cleanup, nil
}

// copyState copies a state file or folder; what is missing is no error.
func copyState(src, dst string) error {
	fi, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return copyFile(src, dst, fi)
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable entry is left out
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && rel != "." && stateSkip[d.Name()]:
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			fi, err := os.Stat(path)
			if err != nil || fi.IsDir() {
				return nil // a linked folder is left out
			}
			return copyFile(path, target, fi)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			return copyFile(path, target, fi)
		}
		return nil // sockets, devices
	})
}

func copyFile(src, dst string, fi fs.FileInfo) error {
	if fi.Size() > maxStateFile {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return nil // unreadable: the CLI would not read it either
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm()&0o700|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, maxStateFile)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
