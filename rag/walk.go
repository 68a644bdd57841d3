package rag

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/internal/pathglob"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// alwaysSkip are directories never indexed, ignored or not.
func alwaysSkip(name string) bool {
	switch name {
	case ".git", ".lemmings", "node_modules", "vendor", ".hg", ".svn":
		return true
	}
	return false
}

func skippedPath(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if alwaysSkip(part) {
			return true
		}
	}
	return false
}

// listFiles returns the files under root to consider, relative, with forward
// slashes, sorted. In a git work tree it asks git (tracked files plus
// untracked ones not ignored); elsewhere it walks the tree and applies
// .gitignore files itself.
func listFiles(ctx context.Context, root string) ([]string, error) {
	files, err := gitFiles(ctx, root)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		files, err = walkFiles(ctx, root)
		if err != nil {
			return nil, err
		}
	}
	out := files[:0]
	for _, f := range files {
		if !skippedPath(f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// gitFiles lists files through git; an error means "not a git work tree"
// (or no git), and the caller walks instead.
func gitFiles(ctx context.Context, root string) ([]string, error) {
	cmd := gitsafe.Command(ctx, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard") // no fsmonitor of the repository's runs
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, errors.New("git ls-files: " + strings.TrimSpace(stderr.String()))
	}
	var out []string
	for _, f := range bytes.Split(stdout.Bytes(), []byte{0}) {
		if len(f) > 0 {
			out = append(out, string(f))
		}
	}
	return out, nil
}

// walkFiles walks root honouring .gitignore files found on the way.
func walkFiles(ctx context.Context, root string) ([]string, error) {
	var out []string
	var ign ignorer
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable entry: not indexable
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel == "." {
				ign.load(root, "")
				return nil
			}
			if alwaysSkip(e.Name()) || ign.ignored(rel, true) {
				return fs.SkipDir
			}
			ign.load(p, rel)
			return nil
		}
		if !ign.ignored(rel, false) {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// ignorer applies .gitignore rules: last match wins, "!" negates, and the
// pattern itself is matched by package pathglob (the dialect of .gitignore:
// a trailing "/" for directories only, anchored when it has a "/", "*" and
// "?" within a path element, "**" across them).
type ignorer struct{ rules []ignoreRule }

type ignoreRule struct {
	base   string // directory of the .gitignore, relative to root ("" at root)
	glob   pathglob.Glob
	negate bool
}

func (g *ignorer) load(dir, rel string) {
	f, _, err := safefile.Open(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: rel}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		glob, err := pathglob.Compile(line)
		if err != nil {
			continue // git, too, passes over a pattern it cannot read
		}
		r.glob = glob
		g.rules = append(g.rules, r)
	}
}

func (g *ignorer) ignored(rel string, isDir bool) bool {
	ignored := false
	for _, r := range g.rules {
		sub := rel
		if r.base != "" {
			var ok bool
			if sub, ok = strings.CutPrefix(rel, r.base+"/"); !ok {
				continue
			}
		}
		if r.glob.Match(sub, isDir) {
			ignored = !r.negate
		}
	}
	return ignored
}

// kindOf says whether a path is a knowledge doc or code.
func kindOf(rel, knowledgeDir string) string {
	kd := strings.Trim(path.Clean("/"+filepath.ToSlash(knowledgeDir)), "/")
	if kd != "" && (rel == kd || strings.HasPrefix(rel, kd+"/")) {
		return KindKnowledge
	}
	return KindCode
}
