// Package tempdir makes lemmings' temporary folders so that the ones a
// killed process leaves behind are found and removed. A run killed with
// SIGKILL never runs its cleanup: its sandbox folder (the private HOME and
// TMPDIR of its gates), a coding CLI's private HOME with the copies of
// your login, a prompt file, stayed in the temp folder. Each folder's name
// carries its owner — the process id and its start time — so the next
// run (or lemmings clean) removes those whose owner is gone. The name is
// the record: nothing a sandboxed command writes can change it (the temp
// folder itself is not writable in the sandbox).
package tempdir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sep ends the owner part of a name: prefix + pid.start + sep + label +
// random.
const sep = "~"

// The prefixes of lemmings' temporary folders, which Sweep looks for.
const (
	Sandbox = "lemmings-sandbox-" // a sandbox's private HOME and TMPDIRs
	CLI     = "lemmings-cli-"     // a coding CLI's private HOME, settings, prompt
	Index   = "lemmings-index-"   // a throw-away git index
)

// All are the prefixes Sweep takes by default.
var All = []string{Sandbox, CLI, Index}

// Make creates a folder in the temp folder named prefix, this process's
// stamp, label and a random part (os.MkdirTemp: 0700).
func Make(prefix, label string) (string, error) {
	return os.MkdirTemp("", prefix+stamp(os.Getpid())+sep+label+"*")
}

// stamp is pid.start, start being the process's start time as the
// system keeps it (0 where it cannot be read).
func stamp(pid int) string {
	return strconv.Itoa(pid) + "." + strconv.FormatUint(startTime(pid), 10)
}

// owner reads the pid and start time of a folder named prefix+stamp+sep…;
// false when the name has none (a folder of an older lemmings).
func owner(name, prefix string) (int, uint64, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, 0, false
	}
	st, _, ok := strings.Cut(rest, sep)
	if !ok {
		return 0, 0, false
	}
	p, s, ok := strings.Cut(st, ".")
	if !ok {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(s, 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return 0, 0, false
	}
	return pid, start, true
}

// Gone reports whether the folder at path (made by Make with prefix) has
// lost its owner: its process has ended, or its pid now names another
// process (another start time).
func Gone(path, prefix string) bool {
	pid, start, ok := owner(filepath.Base(path), prefix)
	if !ok {
		return false
	}
	if pid == os.Getpid() {
		return start != 0 && startTime(pid) != 0 && startTime(pid) != start
	}
	if !alive(pid) {
		return true
	}
	now := startTime(pid)
	return start != 0 && now != 0 && now != start
}

// minAge spares a folder made a moment ago (its owner's stamp is read
// after the folder exists, so a racing sweep could misjudge nothing, but
// a folder this young is never worth the doubt).
const minAge = 2 * time.Second

// Sweep removes the folders of the temp folder made by Make with one of
// prefixes whose owner is gone, and returns their paths. Folders of other
// users, of older lemmings (no stamp) and of live processes stay.
func Sweep(prefixes ...string) []string {
	dir := os.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, prefix := range prefixes {
			path := filepath.Join(dir, e.Name())
			if !strings.HasPrefix(e.Name(), prefix) || !Gone(path, prefix) || !mine(path) {
				continue
			}
			if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < minAge {
				continue
			}
			if RemoveAll(path) == nil {
				removed = append(removed, path)
			}
			break
		}
	}
	return removed
}

// RemoveAll removes path as os.RemoveAll does, first making its folders
// writable to their owner (a Go module cache's are read-only).
func RemoveAll(path string) error {
	if err := os.RemoveAll(path); err == nil {
		return nil
	}
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
