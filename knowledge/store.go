package knowledge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/internal/atomicfile"
)

// IndexFile is the generated summary of the store, one line per document.
const IndexFile = "_index.md"

// maxDocBytes bounds what Open reads: a knowledge doc is short by design.
const maxDocBytes = 1 << 20

// ErrNotFound is returned for a path that names no document.
var ErrNotFound = errors.New("no such knowledge document")

// ErrStatusNotAllowed is returned when a supervisor tries to mark a doc
// established: only the user, or promotion after clean uses, may.
var ErrStatusNotAllowed = errors.New("only the user or promotion after clean uses may make a document established")

// Store is the knowledge directory loaded in memory. Its methods are safe for
// concurrent use; writes go to disk atomically and keep _index.md current.
type Store struct {
	dir string
	now func() time.Time

	mu   sync.Mutex
	docs map[string]*Doc
}

// Option configures Open.
type Option func(*Store)

// WithClock sets the clock used for changelog dates (tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// Open loads every document under dir. A missing dir is an empty store.
// Malformed documents are loaded as far as they parse and reported as
// Problems; only an unreadable dir is an error.
func Open(dir string, opts ...Option) (*Store, []Problem, error) {
	s := &Store{dir: dir, now: time.Now, docs: map[string]*Doc{}}
	for _, o := range opts {
		o(s)
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("knowledge: open %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("knowledge: open %s: not a directory", dir)
	}
	var probs []Problem
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			probs = append(probs, Problem{File: rel, Message: "unreadable: " + err.Error()})
			if e != nil && e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if rel == "." {
			return nil
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if !strings.Contains(rel, "/") && !knownCategory(name) {
				probs = append(probs, Problem{File: rel + "/", Message: fmt.Sprintf("unknown category directory %q: use %s", name+"/", strings.Join(Categories(), "/, ")+"/")})
			}
			return nil
		}
		if !isDocName(rel) {
			if !strings.Contains(rel, "/") && strings.HasSuffix(name, ".md") && name != "README.md" && name != IndexFile && !strings.HasPrefix(name, "_") {
				probs = append(probs, Problem{File: rel, Message: "not in a category directory (" + strings.Join(Categories(), "/, ") + "/): not loaded"})
			}
			return nil
		}
		if info, err := e.Info(); err == nil && info.Size() > maxDocBytes {
			probs = append(probs, Problem{File: rel, Message: fmt.Sprintf("%d bytes: too large for a knowledge doc (limit %d); not loaded", info.Size(), maxDocBytes)})
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			probs = append(probs, Problem{File: rel, Message: "unreadable: " + err.Error()})
			return nil
		}
		d, pp := Parse(rel, data)
		probs = append(probs, pp...)
		s.docs[rel] = d
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("knowledge: walk %s: %w", dir, err)
	}
	probs = append(probs, s.duplicateTitles()...)
	sortProblems(probs)
	return s, probs, nil
}

// isDocName reports whether a relative path names a document: a .md file
// inside a directory, not README.md and not starting with "_" (the index,
// examples and notes).
func isDocName(rel string) bool {
	base := path.Base(rel)
	return strings.Contains(rel, "/") && strings.HasSuffix(base, ".md") &&
		!strings.HasPrefix(base, "_") && base != "README.md"
}

func (s *Store) duplicateTitles() []Problem {
	by := map[string][]*Doc{}
	for _, d := range s.docs {
		if t := strings.ToLower(oneLine(d.Title)); t != "" {
			by[t] = append(by[t], d)
		}
	}
	var probs []Problem
	for _, ds := range by {
		if len(ds) < 2 {
			continue
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i].Path < ds[j].Path })
		for _, d := range ds {
			var others []string
			for _, o := range ds {
				if o != d {
					others = append(others, o.Path)
				}
			}
			probs = append(probs, Problem{File: d.Path, Line: d.titleAt + 1, Message: fmt.Sprintf("duplicate title %q (also in %s)", d.Title, strings.Join(others, ", "))})
		}
	}
	return probs
}

// Docs returns copies of all documents, sorted by path.
func (s *Store) Docs() []*Doc {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Doc, 0, len(s.docs))
	for _, d := range s.docs {
		out = append(out, d.Clone())
	}
	slices.SortFunc(out, func(a, b *Doc) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Get returns a copy of the document at path (relative to the knowledge dir).
func (s *Store) Get(p string) (*Doc, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[cleanRel(p)]
	if !ok {
		return nil, false
	}
	return d.Clone(), true
}

// Empty reports whether the store holds no documents (README.md, _index.md
// and examples do not count): supervisors then run in bootstrap mode.
func (s *Store) Empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.docs) == 0
}

func cleanRel(p string) string { return path.Clean(strings.ReplaceAll(p, "\\", "/")) }

// checkPath validates a document path for writing and returns it cleaned with
// its category.
func checkPath(p string) (string, string, error) {
	rel := cleanRel(p)
	switch {
	case p == "" || path.IsAbs(rel) || filepath.IsAbs(p) || rel == ".." || strings.HasPrefix(rel, "../"):
		return "", "", fmt.Errorf("knowledge: path %q must be relative to the knowledge dir", p)
	case !isDocName(rel):
		return "", "", fmt.Errorf("knowledge: path %q must be category/name.md (name not starting with _)", p)
	}
	cat := rel[:strings.IndexByte(rel, '/')]
	if !knownCategory(cat) {
		return "", "", fmt.Errorf("knowledge: path %q: unknown category %q (want %s)", p, cat, strings.Join(Categories(), ", "))
	}
	return rel, cat, nil
}

// writeFile writes data to the store atomically: a reader never sees half a
// document.
func (s *Store) writeFile(rel string, data []byte) error {
	full := filepath.Join(s.dir, filepath.FromSlash(rel))
	if err := atomicfile.WriteFile(full, data, 0o644); err != nil {
		return fmt.Errorf("knowledge: %w", err)
	}
	return nil
}

func (s *Store) sortedLocked() []*Doc {
	out := make([]*Doc, 0, len(s.docs))
	for _, d := range s.docs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Doc) int { return strings.Compare(a.Path, b.Path) })
	return out
}
