package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/lemmings-dev/lemmings/sandbox/internal/helperplan"
)

// A scope's Go caches start cold: the first go test of a repository would
// compile the standard library again (~40 s of CPU here). Where the
// sandbox has mounts, each is an overlay instead: your own cache below,
// read-only (your builds already trust it, and nothing in the sandbox can
// change it), the scope's writes above, kept for its later commands. One
// command at a time holds a scope's upper layer (an overlay's upper
// directory must not serve two mounts); a command started while it is
// held writes into a layer of its own, dropped when it ends.

// cacheLayers lists the overlays of a command's Go caches, and a release
// of the scope's upper layers once it has ended.
func (b *Box) cacheLayers(tmp string) ([]helperplan.Layer, func()) {
	g := b.userGoEnv()
	var out []helperplan.Layer
	var held []*os.File
	for _, c := range []struct{ name, lower string }{{"go-build", g.Cache}, {"gomod", g.ModCache}} {
		if !usableLower(c.lower, b.cache) {
			continue
		}
		target := filepath.Join(b.cache, c.name)
		base := filepath.Join(b.cache, ".layers", c.name)
		if f := tryLock(base + ".lock"); f != nil {
			held = append(held, f)
		} else {
			base = filepath.Join(tmp, ".layers", c.name) // the scope's is in use
		}
		l := helperplan.Layer{Lower: c.lower, Upper: filepath.Join(base, "upper"), Work: filepath.Join(base, "work"), Target: target}
		if mkdirs(l.Upper, l.Work, l.Target) != nil {
			continue
		}
		out = append(out, l)
	}
	return out, func() {
		for _, f := range held {
			f.Close() // releases the flock
		}
	}
}

// usableLower: an existing folder, outside the scope's caches, whose path
// an overlay option can carry.
func usableLower(lower, cache string) bool {
	if lower == "" || !filepath.IsAbs(lower) || strings.ContainsAny(lower, ",:\\") || !isDir(lower) {
		return false
	}
	rel, err := filepath.Rel(lower, cache)
	if err == nil && !strings.HasPrefix(rel, "..") {
		return false // the caches are below it
	}
	rel, err = filepath.Rel(cache, lower)
	return err != nil || strings.HasPrefix(rel, "..")
}

func tryLock(path string) *os.File {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil
	}
	return f
}

func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}
