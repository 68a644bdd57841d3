package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/lemmings-dev/lemmings/internal/termsafe"
)

// forbidden names a directory agents may never enter, with the reason they read.
func forbidden(component string) string {
	switch {
	case strings.EqualFold(component, ".git"):
		return ".git/ is git's own data and is off limits; change files in the work tree and lemmings commits them"
	case strings.EqualFold(component, ".lemmings"):
		return ".lemmings/ holds lemmings' run data and is off limits"
	}
	return ""
}

// resolve turns an agent-given path into a clean slash-separated path
// relative to the root, with every symbolic link resolved, or refuses it
// with a *PathError. allowRoot permits "." (listing, searching).
func (f *FS) resolve(p string, allowRoot bool) (string, error) {
	if p == "" {
		if allowRoot {
			return ".", nil
		}
		return "", &PathError{Path: p, Reason: "empty path; give a file path relative to the repository root, e.g. \"src/main.go\""}
	}
	if strings.ContainsRune(p, 0) {
		return "", &PathError{Path: p, Reason: "the path contains a NUL byte"}
	}
	if !termsafe.Clean(p) || strings.ContainsAny(p, "\n\t") {
		// A name a terminal would show otherwise than it is (ESC, U+202E).
		return "", &PathError{Path: p, Reason: "the path holds a control or bidirectional character: name files with plain text"}
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || filepath.VolumeName(p) != "" {
		reason := "absolute paths are not allowed; paths are relative to the repository root"
		if rel, err := filepath.Rel(f.root, filepath.Clean(p)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			reason = fmt.Sprintf("absolute paths are not allowed; use the repository-relative path %q", filepath.ToSlash(rel))
		}
		return "", &PathError{Path: p, Reason: reason}
	}
	clean := path.Clean(filepath.ToSlash(p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", &PathError{Path: p, Reason: "the path leads outside the repository (..); paths are relative to the repository root"}
	}
	if clean == "." {
		if allowRoot {
			return ".", nil
		}
		return "", &PathError{Path: p, Reason: "that is the repository root, not a file"}
	}
	parts := strings.Split(clean, "/")
	for _, c := range parts {
		if r := forbidden(c); r != "" {
			return "", &PathError{Path: p, Reason: r}
		}
	}

	// Walk the existing prefix one component at a time so that a link
	// anywhere in the path is seen, including a link to a directory.
	cur := f.root
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			cur = filepath.Join(append([]string{cur}, parts[i:]...)...)
			break
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return "", &PathError{Path: p, Reason: strings.Join(parts[:i], "/") + " is a file, not a directory"}
		}
		if err != nil {
			return "", fmt.Errorf("check %s: %w", clean, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		shown := strings.Join(parts[:i+1], "/")
		target, err := filepath.EvalSymlinks(next)
		if err != nil {
			return "", &PathError{Path: p, Reason: fmt.Sprintf("%s is a broken symbolic link", shown)}
		}
		if !within(f.root, target) {
			return "", &PathError{Path: p, Reason: fmt.Sprintf("%s is a symbolic link leading outside the repository", shown)}
		}
		cur = target
	}
	rel, err := filepath.Rel(f.root, cur)
	if err != nil || !within(f.root, cur) {
		return "", &PathError{Path: p, Reason: "the path leads outside the repository"}
	}
	rel = filepath.ToSlash(rel)
	if rel != "." {
		for _, c := range strings.Split(rel, "/") {
			if r := forbidden(c); r != "" {
				return "", &PathError{Path: p, Reason: "a symbolic link in it leads into a forbidden directory: " + r}
			}
		}
	} else if !allowRoot {
		return "", &PathError{Path: p, Reason: "that is the repository root, not a file"}
	}
	return rel, nil
}

// within reports whether target is root or below it.
func within(root, target string) bool {
	rel, err := filepath.Rel(root, target)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}
