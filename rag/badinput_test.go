package rag

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func skipReason(st Stats, p string) string {
	for _, s := range st.Skipped {
		if s.Path == p {
			return s.Reason
		}
	}
	return ""
}

func TestUpdateSkipsFilesItCannotIndex(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"ok.go":      "package ok\n\n// Fine is fine.\nfunc Fine() {}\n",
		"latin1.txt": "caf\xe9 cr\xe8me\n",
		"image.png":  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
	})
	// A 50 MB file, sparse so the test writes almost nothing.
	big, err := os.Create(filepath.Join(root, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	big.Close()
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}

	ix := openIndex(t, t.TempDir(), NewOfflineEmbedder())
	st, err := ix.Update(context.Background(), root, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"latin1.txt": "not valid UTF-8",
		"image.png":  "binary",
		"huge.log":   "too large: 52428800 bytes (limit 1048576)",
	} {
		if got := skipReason(st, p); got != want {
			t.Errorf("%s skipped for %q, want %q", p, got, want)
		}
	}
	if st.FilesSkipped != 3 || st.FilesIndexed != 1 || st.FilesSeen != 4 {
		t.Errorf("stats: %+v", st)
	}
	hits, _ := ix.Search(context.Background(), "root passwd", 10, Filter{})
	for _, h := range hits {
		if h.Path == "link" {
			t.Error("followed a symlink out of the tree")
		}
	}

	// A file that was indexed and becomes unindexable leaves the index.
	writeFiles(t, root, map[string]string{"ok.go": "package ok\x00binary now"})
	st, _ = ix.Update(context.Background(), root, UpdateOptions{})
	if st.FilesRemoved != 1 || st.Chunks != 0 || skipReason(st, "ok.go") != "binary" {
		t.Errorf("file turned binary: %+v", st)
	}
	// A larger limit lets the big file in (as zeros are binary, it is skipped as such).
	st, _ = ix.Update(context.Background(), root, UpdateOptions{MaxFileSize: 64 << 20})
	if skipReason(st, "huge.log") != "binary" {
		t.Errorf("with a 64 MB limit: %q", skipReason(st, "huge.log"))
	}
}

func buildSmallIndex(t *testing.T, dir string, emb Embedder) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, repoFiles())
	ix, err := Open(dir, emb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Update(context.Background(), root, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	return root
}

func TestIndexOfAnotherEmbedderIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	root := buildSmallIndex(t, dir, newFake("ollama:nomic-embed-text"))

	ix := openIndex(t, dir, NewOfflineEmbedder())
	if len(ix.Warnings) != 1 || !strings.Contains(ix.Warnings[0], "built by embedder ollama:nomic-embed-text (32 dimensions), now using offline-hash-v1 (512 dimensions)") {
		t.Fatalf("warnings = %q", ix.Warnings)
	}
	if ix.Len() != 0 || ix.Embedder() != "offline-hash-v1" {
		t.Fatalf("old vectors kept: %d chunks by %s", ix.Len(), ix.Embedder())
	}
	st, err := ix.Update(context.Background(), root, UpdateOptions{})
	if err != nil || st.ChunksEmbedded != st.Chunks || st.Chunks == 0 {
		t.Fatalf("rebuild: %+v %v", st, err)
	}
	// Same name, other dimensions: also rebuilt.
	ix.Close()
	other := newFake("offline-hash-v1")
	ix2 := openIndex(t, dir, other)
	if len(ix2.Warnings) != 1 || ix2.Len() != 0 {
		t.Fatalf("dimension change: %q, %d chunks", ix2.Warnings, ix2.Len())
	}
}

func TestIndexOfAnotherFormatVersionIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	buildSmallIndex(t, dir, NewOfflineEmbedder())
	m := filepath.Join(dir, manifestFile)
	data, _ := os.ReadFile(m)
	os.WriteFile(m, []byte(strings.Replace(string(data), `"format": 1`, `"format": 0`, 1)), 0o644)
	ix := openIndex(t, dir, NewOfflineEmbedder())
	if len(ix.Warnings) != 1 || !strings.Contains(ix.Warnings[0], "format version 0") || ix.Len() != 0 {
		t.Fatalf("warnings %q, %d chunks", ix.Warnings, ix.Len())
	}
}

func TestCorruptedIndexIsRebuilt(t *testing.T) {
	garbage := []byte("\x00\x01garbage, not what you think\xff\xfe")
	cases := map[string]func(t *testing.T, dir string){
		"garbage database": func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, catalogFile+"-wal"))
			os.Remove(filepath.Join(dir, catalogFile+"-shm"))
			os.WriteFile(filepath.Join(dir, catalogFile), append(garbage, make([]byte, 8192)...), 0o644)
		},
		"garbage manifest": func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, manifestFile), garbage, 0o644)
		},
		"manifest missing": func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, manifestFile))
		},
		"truncated database": func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, catalogFile+"-wal"))
			os.Remove(filepath.Join(dir, catalogFile+"-shm"))
			f := filepath.Join(dir, catalogFile)
			data, _ := os.ReadFile(f)
			os.WriteFile(f, data[:len(data)/3], 0o644)
		},
		"vector of the wrong size": func(t *testing.T, dir string) {
			cat, err := openCatalog(filepath.Join(dir, catalogFile))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cat.db.Exec(`UPDATE chunks SET vector = x'0102' WHERE rid = (SELECT min(rid) FROM chunks)`); err != nil {
				t.Fatal(err)
			}
			cat.close()
		},
		"database is a directory": func(t *testing.T, dir string) {
			for _, n := range []string{catalogFile, catalogFile + "-wal", catalogFile + "-shm"} {
				os.Remove(filepath.Join(dir, n))
			}
			os.MkdirAll(filepath.Join(dir, catalogFile, "x"), 0o755)
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			root := buildSmallIndex(t, dir, NewOfflineEmbedder())
			damage(t, dir)
			ix, err := Open(dir, NewOfflineEmbedder())
			if err != nil {
				t.Fatalf("open of a damaged index failed: %v", err)
			}
			defer ix.Close()
			if len(ix.Warnings) != 1 || !strings.Contains(ix.Warnings[0], "rebuilt from scratch") {
				t.Fatalf("warnings = %q", ix.Warnings)
			}
			st, err := ix.Update(context.Background(), root, UpdateOptions{})
			if err != nil || st.Chunks == 0 || st.ChunksEmbedded != st.Chunks {
				t.Fatalf("rebuild: %+v %v", st, err)
			}
			if hits, err := ix.Search(context.Background(), "cookies", 3, Filter{}); err != nil || len(hits) == 0 {
				t.Fatalf("search after rebuild: %v %v", hits, err)
			}
		})
	}
}

func TestOpenKeepsFilesItDoesNotOwn(t *testing.T) {
	dir := t.TempDir()
	buildSmallIndex(t, dir, newFake("a"))
	writeFiles(t, dir, map[string]string{"notes.txt": "mine\n"})
	ix := openIndex(t, dir, NewOfflineEmbedder())
	if len(ix.Warnings) != 1 {
		t.Fatalf("warnings = %q", ix.Warnings)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(data) != "mine\n" {
		t.Error("rebuild removed a file the index does not own")
	}
}

func TestEmbedderFailuresStopTheUpdateCleanly(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, repoFiles())
	for name, emb := range map[string]*fakeEmbedder{
		"server down":         {name: "f", dims: 32, failAt: 1},
		"short vectors":       {name: "f", dims: 32, bad: "dims"},
		"wrong vector counts": {name: "f", dims: 32, bad: "count"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ix := openIndex(t, dir, emb)
			if _, err := ix.Update(context.Background(), root, UpdateOptions{}); err == nil {
				t.Fatal("update succeeded with a broken embedder")
			}
			if ix.Len() != 0 {
				t.Errorf("half-embedded chunks stored: %d", ix.Len())
			}
			// Fixed, the next update indexes everything.
			emb.failAt, emb.bad = 0, ""
			st, err := ix.Update(context.Background(), root, UpdateOptions{})
			if err != nil || st.Chunks == 0 || st.FilesIndexed != 5 {
				t.Fatalf("after the fix: %+v %v", st, err)
			}
		})
	}
}

func TestSearchReportsAnEmbedderFailure(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, repoFiles())
	emb := newFake("f")
	ix := openIndex(t, t.TempDir(), emb)
	ix.Update(context.Background(), root, UpdateOptions{})
	emb.failAt = emb.calls + 1
	if _, err := ix.Search(context.Background(), "cookies", 3, Filter{}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v", err)
	}
	// The keyword method needs no embedder.
	if hits, err := ix.SearchWith(context.Background(), "cookies", 3, Filter{}, Keyword); err != nil || len(hits) == 0 {
		t.Fatalf("keyword search: %v %v", hits, err)
	}
}

func TestCancelledUpdate(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, repoFiles())
	ix := openIndex(t, t.TempDir(), NewOfflineEmbedder())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.Update(ctx, root, UpdateOptions{}); err == nil {
		t.Fatal("cancelled update succeeded")
	}
	if st, err := ix.Update(context.Background(), root, UpdateOptions{}); err != nil || st.FilesIndexed != 5 {
		t.Fatalf("after cancel: %+v %v", st, err)
	}
}
