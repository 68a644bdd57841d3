package knowledge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symbolic link committed in the repository cannot take knowledge writes
// outside it: a category folder or the knowledge folder itself linked
// elsewhere is refused by name, and nothing lands there. A link that stays
// inside the repository works.
func TestKnowledgeWritesStayInsideTheRepository(t *testing.T) {
	doc := func(p string) *Doc {
		return &Doc{Path: p, Title: "Layering", Rules: "- handlers call services, never the database"}
	}
	for _, c := range []struct {
		name string
		link func(repo, outside string) // makes the link
		path string
		ok   bool
	}{
		{"a category folder linked outside", func(repo, outside string) {
			must(t, os.MkdirAll(filepath.Join(repo, "docs", "knowledge"), 0o755))
			must(t, os.Symlink(outside, filepath.Join(repo, "docs", "knowledge", "design")))
		}, "design/layering.md", false},
		{"the knowledge folder linked outside", func(repo, outside string) {
			must(t, os.MkdirAll(filepath.Join(repo, "docs"), 0o755))
			must(t, os.MkdirAll(filepath.Join(outside, "design"), 0o755))
			must(t, os.Symlink(outside, filepath.Join(repo, "docs", "knowledge")))
		}, "design/layering.md", false},
		{"a link inside the repository", func(repo, _ string) {
			must(t, os.MkdirAll(filepath.Join(repo, "shared", "design"), 0o755))
			must(t, os.MkdirAll(filepath.Join(repo, "docs", "knowledge"), 0o755))
			must(t, os.Symlink(filepath.Join("..", "..", "shared", "design"), filepath.Join(repo, "docs", "knowledge", "design")))
		}, "design/layering.md", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo, outside := t.TempDir(), t.TempDir()
			must(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
			c.link(repo, outside)
			s, _, err := Open(filepath.Join(repo, "docs", "knowledge"), WithClock(fixedClock))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Write(Design, doc(c.path), "T1", "M1")
			if c.ok {
				if err != nil {
					t.Fatalf("write through a link inside the repository: %v", err)
				}
				if _, err := os.Stat(filepath.Join(repo, "shared", "design", "layering.md")); err != nil {
					t.Errorf("the document is not where the link leads: %v", err)
				}
				return
			}
			var ee *EscapeError
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), "outside the repository") {
				t.Fatalf("write: %v, want an EscapeError", err)
			}
			var found []string
			filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					found = append(found, p)
				}
				return nil
			})
			if len(found) > 0 {
				t.Errorf("files landed outside the repository: %v", found)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
