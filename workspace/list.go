package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// DefaultMaxEntries bounds List and Tree when no limit is given.
const DefaultMaxEntries = 1000

// Entry is one file or directory of a listing.
type Entry struct {
	Path string // repository-relative, slash-separated
	Dir  bool
	Size int64 // bytes; 0 for directories
}

// String renders an entry on one line: "dir/" or "path  1.2 KB".
func (e Entry) String() string {
	if e.Dir {
		return e.Path + "/"
	}
	return e.Path + "  " + humanSize(e.Size)
}

// List returns the files and directories under dir ("" or "." for the
// whole repository), recursively, in tree order, skipping .git/ and
// .lemmings/ (and what .gitignore ignores, in a git work tree). When there
// are more than maxEntries (≤ 0: DefaultMaxEntries), the first maxEntries
// are returned with an error wrapping ErrTruncated.
func (f *FS) List(dir string, maxEntries int) ([]Entry, error) {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	rel, err := f.resolve(dir, true)
	if err != nil {
		return nil, err
	}
	abs := filepath.Join(f.root, filepath.FromSlash(rel))
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, notExist("list", dir, err)
	}
	if !fi.IsDir() {
		return []Entry{{Path: rel, Size: fi.Size()}}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	files, err := f.files(ctx, rel)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	seen := map[string]bool{}
	var entries []Entry
	for _, p := range files {
		// Parent directories first, each once.
		for d := path.Dir(p); d != "." && d != rel && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			entries = append(entries, Entry{Path: d, Dir: true})
		}
		st, err := os.Lstat(filepath.Join(f.root, filepath.FromSlash(p)))
		if err != nil {
			continue // listed by git but deleted in the work tree
		}
		if st.IsDir() { // a submodule
			if !seen[p] {
				seen[p] = true
				entries = append(entries, Entry{Path: p, Dir: true})
			}
			continue
		}
		entries = append(entries, Entry{Path: p, Size: st.Size()})
	}
	sort.Slice(entries, func(i, j int) bool { return treeLess(entries[i].Path, entries[j].Path) })
	if len(entries) > maxEntries {
		return entries[:maxEntries], fmt.Errorf("listing of %q stopped after %d of %d entries; list a subdirectory to see the rest: %w",
			displayDir(rel), maxEntries, len(entries), ErrTruncated)
	}
	return entries, nil
}

func displayDir(rel string) string {
	if rel == "." {
		return "the repository"
	}
	return rel
}

// treeLess orders paths component by component, so a directory's contents
// follow it directly.
func treeLess(a, b string) bool {
	return strings.ReplaceAll(a, "/", "\x00") < strings.ReplaceAll(b, "/", "\x00")
}

// files returns the regular files (and symlinks, submodules) under rel,
// repository-relative. In a git work tree it asks git, so that ignored files
// stay out; otherwise it walks the directory.
func (f *FS) files(ctx context.Context, rel string) ([]string, error) {
	if f.inGit {
		out, err := runGit(ctx, f.root, nil, "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", rel)
		if err == nil {
			var files []string
			seen := map[string]bool{}
			for _, p := range strings.Split(out, "\x00") {
				if p == "" || seen[p] || hasForbidden(p) {
					continue
				}
				seen[p] = true
				files = append(files, p)
			}
			sort.Slice(files, func(i, j int) bool { return treeLess(files[i], files[j]) })
			return files, nil
		}
	}
	var files []string
	start := filepath.Join(f.root, filepath.FromSlash(rel))
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // unreadable entry: skip it
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != start && forbidden(d.Name()) != "" {
				return filepath.SkipDir
			}
			return nil
		}
		r, err := filepath.Rel(f.root, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(r))
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return treeLess(files[i], files[j]) })
	return files, nil
}

func hasForbidden(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if forbidden(c) != "" {
			return true
		}
	}
	return false
}

// Tree renders the listing of dir as an indented tree for a prompt, with
// file sizes, noting when it was cut at maxEntries.
func (f *FS) Tree(dir string, maxEntries int) (string, error) {
	entries, err := f.List(dir, maxEntries)
	if err != nil && !errors.Is(err, ErrTruncated) {
		return "", err
	}
	base := ""
	if rel, rerr := f.resolve(dir, true); rerr == nil && rel != "." {
		base = rel
	}
	out := RenderTree(entries, base)
	if err != nil {
		out += "… " + err.Error() + "\n"
	}
	return out, nil
}

// RenderTree draws entries (in List's order) as an indented tree, each
// name relative to base ("" for the repository root):
//
//	cmd/
//	  main.go  1.2 KB
//	go.mod  120 B
func RenderTree(entries []Entry, base string) string {
	var b strings.Builder
	for _, e := range entries {
		p := e.Path
		if base != "" {
			p = strings.TrimPrefix(strings.TrimPrefix(p, base), "/")
			if p == "" {
				p = path.Base(e.Path)
			}
		}
		depth := strings.Count(p, "/")
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(path.Base(p))
		if e.Dir {
			b.WriteString("/\n")
			continue
		}
		b.WriteString("  ")
		b.WriteString(humanSize(e.Size))
		b.WriteString("\n")
	}
	return b.String()
}

func humanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}
