// Package localtoken keeps the access tokens of lemmings' local servers
// (serve, mcp --http). Loopback is no boundary: any process of the machine
// (a coding CLI, which has the network; another user) can connect to
// 127.0.0.1, so every request must carry the token. Each server kind has
// one token, random, in a file readable by you only and kept across
// restarts, so a browser's cookie and an MCP client's configuration stay
// valid. The sandbox hides the folder from the commands it confines.
package localtoken

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/atomicfile"
)

// Dir is the folder of the tokens: $XDG_STATE_HOME/lemmings/tokens, else
// ~/.local/state/lemmings/tokens; "" when there is no home.
func Dir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "lemmings", "tokens")
}

var valid = regexp.MustCompile(`^[0-9a-f]{32,128}$`)

// Load returns the token of the server kind name ("serve", "mcp") and its
// file, making one when there is none, or when the file could have been
// read by others (then it is replaced: the old token may be known).
func Load(name string) (token, path string, err error) {
	dir := Dir()
	if dir == "" {
		return "", "", errors.New("no home folder to keep the access token in (set XDG_STATE_HOME)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("access token folder: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("access token folder: %w", err)
	}
	path = filepath.Join(dir, name+".token")
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 == 0:
		data, err := os.ReadFile(path)
		if err != nil {
			return "", "", fmt.Errorf("access token %s: %w", path, err)
		}
		if t := strings.TrimSpace(string(data)); valid.MatchString(t) {
			return t, path, nil
		}
	case err == nil && !fi.Mode().IsRegular():
		return "", "", fmt.Errorf("access token %s is not a regular file; fix: remove it and start again", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("access token %s: %w", path, err)
	}
	token = New()
	if err := atomicfile.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("access token %s: %w", path, err)
	}
	return token, path, nil
}

// New returns 32 random hex digits.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported systems
	return hex.EncodeToString(b[:])
}

// hiddenList, in Dir, names the token files kept elsewhere (mcp --http
// --token-file), one absolute path a line: the sandbox hides them as it
// hides Dir. Dir is hidden itself, so no confined command can change it.
const hiddenList = "hidden"

// Hide adds the token file at path to the files the sandbox hides (a
// token the user keeps outside Dir); Unhide takes it off again. Both
// rewrite the list whole.
func Hide(path string) error { return editHidden(path, true) }

// Unhide takes path off the hidden files (its server stopped).
func Unhide(path string) error { return editHidden(path, false) }

func editHidden(path string, add bool) error {
	dir := Dir()
	if dir == "" {
		return errors.New("no home folder to keep the list of hidden token files in (set XDG_STATE_HOME)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if !add && !strings.Contains("\n"+strings.Join(Hidden(), "\n")+"\n", "\n"+abs+"\n") {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var keep []string
	for _, p := range readHidden(dir) {
		if p != abs {
			keep = append(keep, p)
		}
	}
	if add {
		keep = append(keep, abs)
	}
	return atomicfile.WriteFile(filepath.Join(dir, hiddenList), []byte(strings.Join(keep, "\n")+"\n"), 0o600)
}

// Hidden lists the token files kept outside Dir that exist now, for the
// sandbox to hide.
func Hidden() []string {
	dir := Dir()
	if dir == "" {
		return nil
	}
	var out []string
	for _, p := range readHidden(dir) {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func readHidden(dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, hiddenList))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); filepath.IsAbs(line) {
			out = append(out, line)
		}
	}
	return out
}
