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

	"github.com/lemmings-dev/lemmings/internal/safefile"
	"github.com/lemmings-dev/lemmings/internal/termsafe"
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
	// repo is the repository (work tree) around dir and rel dir's path in
	// it: every read and write goes through an os.Root of repo, so a
	// symbolic link committed in the repository cannot lead outside it.
	repo, rel string
	now       func() time.Time

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
//
// The store is confined to the repository around dir (the nearest folder
// above it holding .git; dir itself outside any): a document, category
// folder or dir reached through a symbolic link that leads outside it is
// neither read nor written (a Problem says so; a write fails with an
// *EscapeError).
func Open(dir string, opts ...Option) (*Store, []Problem, error) {
	s := &Store{dir: dir, now: time.Now, docs: map[string]*Doc{}}
	for _, o := range opts {
		o(s)
	}
	s.repo, s.rel = confinement(dir)
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
	root, err := os.OpenRoot(s.repo)
	if err != nil {
		return nil, nil, fmt.Errorf("knowledge: open %s: %w", dir, err)
	}
	defer root.Close()
	if _, err := root.Stat(s.rel); err != nil {
		return s, []Problem{{File: ".", Message: s.escapeOr(s.rel, err).Error() + "; not loaded"}}, nil
	}
	var probs []Problem
	err = fs.WalkDir(root.FS(), s.rel, func(p string, e fs.DirEntry, err error) error {
		rel := p
		if s.rel != "." {
			rel = strings.TrimPrefix(strings.TrimPrefix(p, s.rel), "/")
		}
		if rel == "" {
			rel = "."
		}
		if err != nil {
			probs = append(probs, Problem{File: rel, Message: "unreadable: " + s.escapeOr(p, err).Error()})
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
		data, err := safefile.ReadFileIn(root, p)
		if err != nil {
			probs = append(probs, Problem{File: rel, Message: "unreadable: " + s.escapeOr(p, err).Error()})
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
	case !termsafe.Clean(rel) || strings.ContainsAny(rel, "\n\t"):
		// A name a terminal would show otherwise than it is (ESC, U+202E).
		return "", "", fmt.Errorf("knowledge: path %q holds a control or bidirectional character: a document's name is plain text", p)
	}
	cat := rel[:strings.IndexByte(rel, '/')]
	if !knownCategory(cat) {
		return "", "", fmt.Errorf("knowledge: path %q: unknown category %q (want %s)", p, cat, strings.Join(Categories(), ", "))
	}
	return rel, cat, nil
}

// writeFile writes data to the store atomically (a reader never sees half a
// document), inside the repository: through its os.Root, so no symbolic
// link leads the write elsewhere.
func (s *Store) writeFile(rel string, data []byte) error {
	root, err := os.OpenRoot(s.repo)
	if err != nil {
		return fmt.Errorf("knowledge: %w", err)
	}
	defer root.Close()
	name := path.Join(s.rel, rel)
	// A document is read in terminals (cat, git diff): no escape in it.
	data = []byte(termsafe.String(string(data)))
	if err := atomicfile.WriteIn(root, name, data, 0o644); err != nil {
		return fmt.Errorf("knowledge: %w", s.escapeOr(name, err))
	}
	return nil
}

// readFile reads a file of the store inside the repository.
func (s *Store) readFile(rel string) ([]byte, error) {
	root, err := os.OpenRoot(s.repo)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return safefile.ReadFileIn(root, path.Join(s.rel, rel))
}

// confinement returns the repository around dir — the nearest folder at or
// above it that holds .git — and dir's slash path inside it; dir itself
// when it is in no repository.
func confinement(dir string) (root, rel string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, "."
	}
	for p := abs; ; {
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
			r, err := filepath.Rel(p, abs)
			if err != nil {
				break
			}
			return p, filepath.ToSlash(r)
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	return abs, "."
}

// EscapeError: a path of the store leads outside the repository through a
// symbolic link committed in it.
type EscapeError struct {
	Path string // the path inside the repository
	Link string // the link on the way
	To   string // where it points
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("%s leads outside the repository: %s is a symbolic link to %s (knowledge is only read and written inside the repository; replace the link with a folder)", e.Path, e.Link, e.To)
}

// escapeOr explains err, an os.Root refusal of name (slash path from the
// repository), by the link that leads out; other errors come back as they are.
func (s *Store) escapeOr(name string, err error) error {
	if err == nil || !strings.Contains(err.Error(), "escapes") {
		return err
	}
	cur := s.repo
	for _, part := range strings.Split(name, "/") {
		cur = filepath.Join(cur, part)
		fi, lerr := os.Lstat(cur)
		if lerr != nil {
			break
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(cur)
			link, _ := filepath.Rel(s.repo, cur)
			return &EscapeError{Path: name, Link: filepath.ToSlash(link), To: to}
		}
	}
	return err
}

func (s *Store) sortedLocked() []*Doc {
	out := make([]*Doc, 0, len(s.docs))
	for _, d := range s.docs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Doc) int { return strings.Compare(a.Path, b.Path) })
	return out
}
