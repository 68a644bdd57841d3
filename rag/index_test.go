package rag

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEmbedder stands in for a model server: it counts what it is asked to
// embed, can fail, and maps texts to vectors from letter counts.
type fakeEmbedder struct {
	name string
	dims int

	mu     sync.Mutex
	calls  int
	texts  int
	failAt int // fail the n-th call (1-based); 0 never
	bad    string
}

func newFake(name string) *fakeEmbedder { return &fakeEmbedder{name: name, dims: 32} }

func (f *fakeEmbedder) Name() string    { return f.name }
func (f *fakeEmbedder) Dimensions() int { return f.dims }

func (f *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failAt > 0 && f.calls == f.failAt {
		return nil, errors.New("connection refused")
	}
	f.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, f.dims)
		for _, r := range strings.ToLower(t) {
			if r >= 'a' && r <= 'z' {
				v[(r-'a')%rune(f.dims)]++
			}
		}
		v[f.dims-1] = 1
		if f.bad == "dims" {
			v = v[:f.dims-1]
		}
		out[i] = v
	}
	if f.bad == "count" {
		out = out[:len(out)-1]
	}
	return out, nil
}

func (f *fakeEmbedder) embedded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.texts
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func repoFiles() map[string]string {
	return map[string]string{
		"main.go":                              "package main\n\n// main starts the cookie parser service.\nfunc main() {\n\tparseCookies(\"a=b\")\n}\n",
		"cookies.go":                           "package main\n\n// parseCookies splits a Cookie header into name=value pairs.\nfunc parseCookies(h string) map[string]string {\n\treturn nil\n}\n",
		"README.md":                            "# Demo\n\nA demo service.\n\n## Usage\n\nRun the binary.\n",
		"docs/knowledge/conventions/errors.md": "# Errors\n\n_Status: established_\n\n## Rules\n\n1. Wrap errors with context.\n",
		"scripts/build.sh":                     "#!/bin/sh\ngo build ./...\n",
	}
}

func openIndex(t *testing.T, dir string, emb Embedder) *Index {
	t.Helper()
	ix, err := Open(dir, emb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestUpdateIsIncremental(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFiles(t, root, repoFiles())
	emb := newFake("fake-a")
	ix := openIndex(t, dir, emb)
	ctx := context.Background()

	st, err := ix.Update(ctx, root, UpdateOptions{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.FilesSeen != 5 || st.FilesIndexed != 5 || st.ChunksEmbedded != st.Chunks || st.Chunks == 0 || emb.embedded() != st.Chunks {
		t.Fatalf("first update: %+v, embedded %d", st, emb.embedded())
	}
	if emb.calls < st.Chunks/2 {
		t.Errorf("batch size 2 not honoured: %d calls for %d chunks", emb.calls, st.Chunks)
	}
	total := st.Chunks

	st, err = ix.Update(ctx, root, UpdateOptions{})
	if err != nil || st.ChunksEmbedded != 0 || st.FilesUnchanged != 5 || st.Chunks != total {
		t.Fatalf("unchanged update: %+v %v", st, err)
	}

	// Append a function to cookies.go: only the new chunk is embedded.
	before := emb.embedded()
	writeFiles(t, root, map[string]string{"cookies.go": repoFiles()["cookies.go"] + "\n// formatCookie renders one cookie as name=value for a header line; it is\n// long enough to be a chunk of its own rather than merged with its neighbours.\nfunc formatCookie(n, v string) string {\n\treturn n + \"=\" + v + \" and some more text to keep it apart\"\n}\n"})
	st, err = ix.Update(ctx, root, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.FilesIndexed != 1 || st.ChunksEmbedded != 1 || st.ChunksReused < 1 || emb.embedded()-before != 1 {
		t.Fatalf("changed file: %+v (embedded %d)", st, emb.embedded()-before)
	}

	// Same content, new mtime: nothing is embedded.
	now := filepath.Join(root, "main.go")
	data, _ := os.ReadFile(now)
	os.WriteFile(now, data, 0o644)
	st, _ = ix.Update(ctx, root, UpdateOptions{})
	if st.ChunksEmbedded != 0 || st.FilesIndexed != 0 {
		t.Fatalf("touched file re-embedded: %+v", st)
	}

	// Delete a file: its chunks leave the index.
	os.Remove(filepath.Join(root, "scripts", "build.sh"))
	st, _ = ix.Update(ctx, root, UpdateOptions{})
	if st.FilesRemoved != 1 || st.ChunksRemoved != 1 {
		t.Fatalf("deleted file: %+v", st)
	}
	hits, err := ix.Search(ctx, "go build script", 20, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Path == "scripts/build.sh" {
			t.Fatal("deleted file still found")
		}
	}

	// Reopen: the state persisted.
	ix.Close()
	ix2 := openIndex(t, dir, emb)
	if len(ix2.Warnings) != 0 || ix2.Len() != st.Chunks {
		t.Fatalf("reopened: %v, %d chunks, want %d", ix2.Warnings, ix2.Len(), st.Chunks)
	}
	st, _ = ix2.Update(ctx, root, UpdateOptions{})
	if st.ChunksEmbedded != 0 {
		t.Fatalf("reopened index re-embedded: %+v", st)
	}
}

func TestSearchWithAnEmbedder(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, repoFiles())
	ix := openIndex(t, t.TempDir(), newFake("fake-a"))
	ctx := context.Background()
	if _, err := ix.Update(ctx, root, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []Method{Hybrid, Keyword, Vector} {
		hits, err := ix.SearchWith(ctx, "where are cookies parsed", 3, Filter{}, m)
		if err != nil || len(hits) == 0 {
			t.Fatalf("%s: %v %v", m, hits, err)
		}
		if m != Vector && hits[0].Path != "cookies.go" {
			t.Errorf("%s: top hit %s", m, hits[0].Path)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("%s: hits not sorted by score", m)
			}
		}
	}
	hits, _ := ix.Search(ctx, "where are cookies parsed", 3, Filter{})
	h := hits[0]
	if h.StartLine != 1 || h.EndLine != 6 || h.Kind != KindCode || h.Language != "go" || !strings.Contains(h.Snippet, "parseCookies splits") || !strings.Contains(h.Content, "return nil") {
		t.Errorf("top hit: %+v", h)
	}
	kn, err := ix.Search(ctx, "errors context", 5, Filter{Kind: KindKnowledge})
	if err != nil || len(kn) == 0 {
		t.Fatalf("knowledge filter: %+v %v", kn, err)
	}
	for _, h := range kn {
		if h.Path != "docs/knowledge/conventions/errors.md" || h.Kind != KindKnowledge {
			t.Errorf("knowledge filter returned %+v", h)
		}
	}
	code, _ := ix.Search(ctx, "errors context", 10, Filter{Kind: KindCode})
	for _, h := range code {
		if h.Kind != KindCode {
			t.Errorf("code filter returned %+v", h)
		}
	}
	if _, err := ix.Search(ctx, "x", 5, Filter{Kind: "pictures"}); err == nil {
		t.Error("unknown kind accepted")
	}
	if _, err := ix.Search(ctx, "  ", 5, Filter{}); err == nil {
		t.Error("empty query accepted")
	}
	if _, err := ix.SearchWith(ctx, "x", 5, Filter{}, Method("magic")); err == nil {
		t.Error("unknown method accepted")
	}
}

func TestSearchIsSafeForConcurrentUse(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, repoFiles())
	ix := openIndex(t, t.TempDir(), NewOfflineEmbedder())
	ctx := context.Background()
	ix.Update(ctx, root, UpdateOptions{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				writeFiles(t, root, map[string]string{"new.go": "package main\n\nfunc added() {}\n"})
				if _, err := ix.Update(ctx, root, UpdateOptions{}); err != nil {
					t.Error(err)
				}
				return
			}
			if _, err := ix.Search(ctx, "cookie parser", 5, Filter{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestFormatHits(t *testing.T) {
	hits := []Hit{{Path: "a/b.go", StartLine: 3, EndLine: 9, Score: 0.0325, Kind: KindCode, Language: "go", Context: "package b; func F", Snippet: "// F does.\nfunc F() {}", Content: "secret whole chunk"}}
	var buf bytes.Buffer
	if err := FormatHits(&buf, hits, false); err != nil {
		t.Fatal(err)
	}
	want := "a/b.go:3-9  score 0.0325  (code, go: package b; func F)\n    // F does.\n    func F() {}\n"
	if buf.String() != want {
		t.Errorf("text:\n%q\nwant\n%q", buf.String(), want)
	}
	buf.Reset()
	FormatHits(&buf, append(hits, hits[0]), true)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || lines[0] != `{"path":"a/b.go","start_line":3,"end_line":9,"score":0.0325,"kind":"code","language":"go","context":"package b; func F","snippet":"// F does.\nfunc F() {}"}` {
		t.Errorf("json:\n%s", buf.String())
	}
	st := Stats{FilesSeen: 5, FilesIndexed: 1, FilesUnchanged: 3, FilesSkipped: 1, ChunksEmbedded: 2, ChunksReused: 4, Chunks: 9, Duration: 1500 * time.Millisecond}
	if got := st.String(); got != "5 files: 1 new or changed, 3 unchanged, 1 skipped, 0 removed; chunks: 2 embedded, 4 reused, 0 removed, 9 in the index; 1.50s" {
		t.Errorf("stats: %q", got)
	}
	buf.Reset()
	FormatHits(&buf, nil, false)
	if buf.String() != "no results\n" {
		t.Errorf("empty: %q", buf.String())
	}
}

func TestKnowledgeKindFollowsTheConfiguredDir(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"kb/x.md": "# X\n\ntext\n", "docs/knowledge/y.md": "# Y\n\ntext\n"})
	ix := openIndex(t, t.TempDir(), NewOfflineEmbedder())
	if _, err := ix.Update(context.Background(), root, UpdateOptions{KnowledgeDir: "kb/"}); err != nil {
		t.Fatal(err)
	}
	hits, _ := ix.Search(context.Background(), "text", 5, Filter{Kind: KindKnowledge})
	if len(hits) != 1 || hits[0].Path != "kb/x.md" {
		t.Fatalf("hits = %+v", hits)
	}
}

func gitAvailable(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestListFilesInAGitRepository(t *testing.T) {
	gitAvailable(t)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".gitignore":           "*.log\nbuild/\n",
		"a.go":                 "package a\n",
		"untracked.go":         "package a\n",
		"debug.log":            "noise\n",
		"build/out.go":         "package out\n",
		"sub/.gitignore":       "secret.txt\n",
		"sub/secret.txt":       "x\n",
		"sub/keep.txt":         "x\n",
		"node_modules/m/i.js":  "x\n",
		"vendor/v/v.go":        "package v\n",
		".lemmings/index/x.db": "x\n",
	})
	git(t, root, "init", "-q")
	git(t, root, "add", "a.go", ".gitignore")
	got, err := listFiles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", "a.go", "sub/.gitignore", "sub/keep.txt", "untracked.go"}
	if !slices.Equal(got, want) {
		t.Errorf("git listing = %q, want %q", got, want)
	}
	// A subdirectory of a repository lists its own files, relative to it.
	got, _ = listFiles(context.Background(), filepath.Join(root, "sub"))
	if !slices.Equal(got, []string{".gitignore", "keep.txt"}) {
		t.Errorf("subdir listing = %q", got)
	}
}

func TestListFilesWithoutGitAppliesGitignore(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".gitignore":          "# comment\n*.log\n!keep.log\n/top-only.txt\nout/\ndocs/**/draft-*.md\n",
		"a.go":                "package a\n",
		"x.log":               "noise\n",
		"keep.log":            "kept\n",
		"top-only.txt":        "x\n",
		"deep/top-only.txt":   "kept: anchored pattern\n",
		"deep/y.log":          "noise\n",
		"out/gen.go":          "package out\n",
		"deep/out/gen.go":     "package out\n",
		"docs/a/b/draft-1.md": "x\n",
		"docs/a/final.md":     "x\n",
		"deep/.gitignore":     "local.txt\n",
		"deep/local.txt":      "x\n",
		"local.txt":           "kept: rule is deep/ only\n",
		"node_modules/m.js":   "x\n",
	})
	got, err := walkFiles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{".gitignore", "a.go", "deep/.gitignore", "deep/top-only.txt", "docs/a/final.md", "keep.log", "local.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("walk = %q\nwant   %q", got, want)
	}
}

func TestUpdateOfAMissingRootFails(t *testing.T) {
	ix := openIndex(t, t.TempDir(), NewOfflineEmbedder())
	if _, err := ix.Update(context.Background(), filepath.Join(t.TempDir(), "nope"), UpdateOptions{}); err == nil {
		t.Error("missing root accepted")
	}
}

func TestClosedIndex(t *testing.T) {
	ix := openIndex(t, t.TempDir(), NewOfflineEmbedder())
	ix.Close()
	if _, err := ix.Search(context.Background(), "x", 1, Filter{}); err == nil {
		t.Error("search on a closed index")
	}
	if _, err := ix.Update(context.Background(), t.TempDir(), UpdateOptions{}); err == nil {
		t.Error("update on a closed index")
	}
	if err := ix.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}
