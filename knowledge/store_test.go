package knowledge

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func fixedClock() time.Time { return time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC) }

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, probs, err := Open(dir, WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	return s
}

func TestOpenMissingDirIsEmpty(t *testing.T) {
	s, probs, err := Open(filepath.Join(t.TempDir(), "docs", "knowledge"))
	if err != nil || len(probs) != 0 || !s.Empty() || len(s.Docs()) != 0 {
		t.Fatalf("missing dir: %v %v %v", err, probs, s.Empty())
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, []byte("x"), 0o644)
	if _, _, err := Open(f); err == nil {
		t.Error("a file is not a knowledge dir")
	}
}

func TestWriteOwnership(t *testing.T) {
	cases := []struct {
		w    Writer
		path string
		ok   bool
	}{
		{CodeStyle, "conventions/a.md", true},
		{CodeStyle, "design/a.md", false},
		{CodeStyle, "lessons/a.md", false},
		{Design, "design/a.md", true},
		{Design, "conventions/a.md", false},
		{Internaliser, "lessons/a.md", true},
		{Internaliser, "domain/a.md", true},
		{Internaliser, "design/a.md", false},
		{User, "conventions/a.md", true},
		{User, "domain/a.md", true},
		{System, "conventions/a.md", false},
		{Writer("stranger"), "lessons/a.md", false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s writes %s", c.w, c.path), func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			err := s.Write(c.w, &Doc{Path: c.path, Title: "A", Rules: "1. a"}, "task_1", "M1")
			var oe *OwnershipError
			if c.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if _, statErr := os.Stat(filepath.Join(dir, c.path)); statErr != nil {
					t.Fatal("not written")
				}
				return
			}
			if !errors.As(err, &oe) || oe.Writer != c.w {
				t.Fatalf("want *OwnershipError, got %v", err)
			}
			if _, statErr := os.Stat(filepath.Join(dir, c.path)); statErr == nil {
				t.Fatal("a refused write left a file")
			}
		})
	}
}

func TestWriteRefusesBadPathsAndDocs(t *testing.T) {
	s := openStore(t, t.TempDir())
	for _, p := range []string{"../x.md", "/abs/conventions/x.md", "conventions/x.txt", "x.md", "recipes/x.md", "conventions/_x.md", "conventions/README.md"} {
		if err := s.Write(User, &Doc{Path: p, Title: "T", Rules: "1. a"}, "", ""); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	var ie *InvalidDocError
	for name, d := range map[string]*Doc{
		"no title":           {Path: "conventions/a.md", Rules: "1. a"},
		"rules too long":     {Path: "conventions/a.md", Title: "T", Rules: strings.Repeat("r", 501)},
		"no content":         {Path: "conventions/a.md", Title: "T"},
		"heading in rules":   {Path: "conventions/a.md", Title: "T", Rules: "1. a\n## Sneaky\n2. b"},
		"bad status":         {Path: "conventions/a.md", Title: "T", Rules: "1. a", Status: "maybe"},
		"unclosed fence":     {Path: "conventions/a.md", Title: "T", Rules: "1. a\n```\ncode", Examples: "x"},
		"invalid utf-8 rule": {Path: "conventions/a.md", Title: "T", Rules: "1. \xff"},
	} {
		if err := s.Write(User, d, "", ""); !errors.As(err, &ie) {
			t.Errorf("%s: want *InvalidDocError, got %v", name, err)
		}
	}
	if !s.Empty() {
		t.Error("refused writes changed the store")
	}
}

func TestSupervisorDocsStartProvisionalAndKeepHistory(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.Write(CodeStyle, &Doc{Path: "conventions/naming.md", Title: "Naming", Status: Established, Rules: "1. camelCase."}, "task_3", "M1"); err != nil {
		t.Fatal(err)
	}
	d, _ := s.Get("conventions/naming.md")
	if d.Status != Provisional || d.UpdatedBy != "code_style" || d.SourceTask != "task_3" {
		t.Fatalf("new supervisor doc: status %q by %q after %q", d.Status, d.UpdatedBy, d.SourceTask)
	}
	if len(d.Changelog) != 1 || d.Changelog[0] != (Change{Date: "2026-11-05", Writer: CodeStyle, Task: "task_3", Milestone: "M1", Summary: "created (provisional)"}) {
		t.Fatalf("changelog = %+v", d.Changelog)
	}

	// A user adds a section of their own; the supervisor's update keeps it.
	full := filepath.Join(dir, "conventions", "naming.md")
	data, _ := os.ReadFile(full)
	os.WriteFile(full, append(data, []byte("\n## Team notes\n\nAsk Ana before renaming packages.\n")...), 0o644)
	s = openStore(t, dir)
	if err := s.Write(CodeStyle, &Doc{Path: "conventions/naming.md", Rules: "1. camelCase.\n2. No stutter."}, "task_8", "M2"); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(full)
	got := string(data)
	for _, want := range []string{"## Team notes\n\nAsk Ana before renaming packages.", "2. No stutter.", "_Last updated by: code_style, task_8_",
		"- 2026-11-05 code_style after task_3 (milestone M1): created (provisional)\n- 2026-11-05 code_style after task_8 (milestone M2): changed rules\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("after update, missing %q in:\n%s", want, got)
		}
	}
	// Writing the same content again changes nothing.
	before, _ := os.ReadFile(full)
	if err := s.Write(CodeStyle, &Doc{Path: "conventions/naming.md", Rules: "1. camelCase.\n2. No stutter."}, "task_9", "M2"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(full)
	if string(before) != string(after) {
		t.Error("a no-op write rewrote the file")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "conventions"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestSupervisorCannotEstablishButUserCan(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.Write(User, &Doc{Path: "design/api.md", Title: "API", Rules: "1. REST."}, "", ""); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Get("design/api.md"); d.Status != Established {
		t.Fatalf("user doc status = %q, want established", d.Status)
	}
	// A supervisor changing the guidance of an established doc makes it provisional again.
	if err := s.Write(Design, &Doc{Path: "design/api.md", Rules: "1. gRPC."}, "task_5", "M2"); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Get("design/api.md"); d.Status != Provisional {
		t.Fatalf("after supervisor rewrite status = %q", d.Status)
	}
	if err := s.SetStatus("design/api.md", Established, Design, "looks good"); !errors.Is(err, ErrStatusNotAllowed) {
		t.Fatalf("supervisor established a doc: %v", err)
	}
	var oe *OwnershipError
	if err := s.SetStatus("design/api.md", Deprecated, CodeStyle, "x"); !errors.As(err, &oe) {
		t.Fatalf("code_style deprecated a design doc: %v", err)
	}
	if err := s.SetStatus("design/nope.md", Deprecated, Design, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing doc: %v", err)
	}
	if err := s.SetStatus("design/api.md", Deprecated, Design, "superseded by grpc.md"); err != nil {
		t.Fatal(err)
	}
	d, _ := s.Get("design/api.md")
	last := d.Changelog[len(d.Changelog)-1]
	if d.Status != Deprecated || last.Summary != "status provisional → deprecated: superseded by grpc.md" || last.Writer != Design {
		t.Fatalf("after SetStatus: %q %+v", d.Status, last)
	}
	if err := s.SetStatus("design/api.md", Established, User, "I decided"); err != nil {
		t.Fatal(err)
	}
}

func TestPromote(t *testing.T) {
	s := openStore(t, t.TempDir())
	s.Write(Internaliser, &Doc{Path: "lessons/retry.md", Title: "Retry", Rules: "- 429 needs backoff."}, "t1", "M1")
	ok, err := s.Promote("lessons/retry.md", "t4", "M1", 3)
	if err != nil || !ok {
		t.Fatalf("promote: %v %v", ok, err)
	}
	d, _ := s.Get("lessons/retry.md")
	last := d.Changelog[len(d.Changelog)-1]
	if d.Status != Established || last.Writer != System || !strings.Contains(last.Summary, "used by 3 completed tasks without trouble") {
		t.Fatalf("after promote: %q %+v", d.Status, last)
	}
	if ok, err := s.Promote("lessons/retry.md", "t5", "M1", 3); ok || err != nil {
		t.Fatalf("second promote: %v %v", ok, err)
	}
}

func TestWriterAppendedChangeIsCompleted(t *testing.T) {
	s := openStore(t, t.TempDir())
	d := &Doc{Path: "domain/units.md", Title: "Units", Rules: "- Money is integer cents.", Changelog: []Change{{Summary: "learned from the invoice bug"}}}
	if err := s.Write(Internaliser, d, "task_7", "M2"); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get("domain/units.md")
	if len(got.Changelog) != 1 || got.Changelog[0] != (Change{Date: "2026-11-05", Writer: Internaliser, Task: "task_7", Milestone: "M2", Summary: "learned from the invoice bug"}) {
		t.Fatalf("changelog = %+v", got.Changelog)
	}
}

func TestIndexFileIsKeptCurrent(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"conventions/errors.md": "# Errors\n_Status: established_\n\nWrap errors with context. Always.\n\n## Rules\n1. Wrap.\n",
	})
	s := openStore(t, dir)
	if err := s.Write(Design, &Doc{Path: "design/store.md", Title: "Store", Rules: "1. **One** package owns the database. Really.\n2. x"}, "t2", "M1"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{
		"- [conventions/errors.md](conventions/errors.md) — Errors (established): Wrap errors with context.\n",
		"- [design/store.md](design/store.md) — Store (provisional): One package owns the database.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("index lacks %q:\n%s", want, got)
		}
	}
	if s.IndexText() != got {
		t.Error("IndexText differs from the file")
	}
}

func TestConcurrentWritesAreSafe(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, cat := CodeStyle, CatConventions
			if i%2 == 1 {
				w, cat = Internaliser, CatLessons
			}
			if err := s.Write(w, &Doc{Path: fmt.Sprintf("%s/d%d.md", cat, i), Title: fmt.Sprintf("D%d", i), Rules: "1. x"}, "t", "M"); err != nil {
				t.Error(err)
			}
			s.Docs()
		}()
	}
	wg.Wait()
	s2 := openStore(t, dir)
	if len(s2.Docs()) != 8 {
		t.Fatalf("docs = %d", len(s2.Docs()))
	}
	data, _ := os.ReadFile(filepath.Join(dir, IndexFile))
	if strings.Count(string(data), "\n- [") != 8 {
		t.Errorf("index:\n%s", data)
	}
}

func TestInitScaffoldsWithoutOverwriting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docs", "knowledge")
	writeTree(t, dir, map[string]string{"README.md": "mine\n"})
	created, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range created {
		if strings.HasSuffix(c, "README.md") {
			t.Error("Init overwrote README.md")
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(data) != "mine\n" {
		t.Errorf("README changed: %q", data)
	}
	for _, c := range Categories() {
		p := filepath.Join(dir, c, "_example.md")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("no example for %s: %v", c, err)
		}
		d, probs := Parse(c+"/example.md", data)
		if len(probs) != 0 || d.Status != Established || d.Rules == "" {
			t.Errorf("example %s is not a clean doc: %v", c, probs)
		}
	}
	s := openStore(t, dir)
	if !s.Empty() {
		t.Error("examples must not count as documents (bootstrap mode)")
	}
	again, err := Init(dir)
	if err != nil || len(again) != 0 {
		t.Fatalf("second Init created %v (%v)", again, err)
	}
	readme, _ := os.ReadFile(filepath.Join("scaffold", "README.md"))
	if !strings.Contains(string(readme), "_Status: established_") {
		t.Error("scaffold README does not show the format")
	}
}
