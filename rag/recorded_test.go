package rag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRecordedNamesTheEmbedderAndKeywordOnlyOpensWithoutRebuilding(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	if _, _, err := Recorded(dir); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("Recorded of a missing index: %v, want ErrNoIndex", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Recorded created %s", dir)
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "cookies.go"), []byte("package web\n\n// ParseCookie reads a cookie header.\nfunc ParseCookie(s string) string { return s }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, NewOfflineEmbedder())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Update(context.Background(), src, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	name, dims, err := Recorded(dir)
	if err != nil || !IsOffline(name) || dims != OfflineDimensions {
		t.Fatalf("Recorded = %q %d %v", name, dims, err)
	}
	ko, err := Open(dir, KeywordOnly(name, dims, errors.New("refused")))
	if err != nil {
		t.Fatal(err)
	}
	defer ko.Close()
	if len(ko.Warnings) > 0 || ko.Len() == 0 {
		t.Fatalf("the index was rebuilt or emptied: %v, %d chunks", ko.Warnings, ko.Len())
	}
	hits, err := ko.SearchWith(context.Background(), "cookie header", 3, Filter{}, Keyword)
	if err != nil || len(hits) == 0 || hits[0].Path != "cookies.go" {
		t.Fatalf("keyword search: %v %v", hits, err)
	}
	if _, err := ko.Search(context.Background(), "cookie header", 3, Filter{}); err == nil {
		t.Errorf("a hybrid search embedded the query with an unavailable embedder")
	}
}
