package rag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	chromem "github.com/philippgille/chromem-go"

	"github.com/lemmings-dev/lemmings/internal/atomicfile"
)

// FormatVersion changes whenever the on-disk layout or the chunking changes in
// a way that makes an old index wrong; an index of another version is rebuilt.
const FormatVersion = 1

const (
	manifestFile = "manifest.json"
	catalogFile  = "index.db"
	collection   = "chunks"
)

// manifest records what built the index, so that vectors of two embedders
// are never mixed.
type manifest struct {
	Format     int       `json:"format"`
	Embedder   string    `json:"embedder"`
	Dimensions int       `json:"dimensions"`
	Created    time.Time `json:"created"`
}

// Index is a persistent index of a repository's chunks under one directory:
// manifest.json and index.db (SQLite: catalog, vectors, FTS5 keyword index).
// On Open the vectors are loaded into a chromem-go collection, which answers
// the vector queries. Search may run concurrently with itself; Update
// excludes everything else.
type Index struct {
	dir string
	emb Embedder

	// Warnings says what Open had to repair (a rebuilt index and why); the
	// caller prints them.
	Warnings []string

	mu     sync.RWMutex
	col    *chromem.Collection
	cat    *catalog
	man    manifest
	byID   map[string]*chunkMeta
	byRID  map[int64]*chunkMeta
	byPath map[string][]string // chunk ids per file
}

// Open opens (or creates) the index in dir for embedder emb. An index built
// by another embedder, of another format version, or unreadable, is deleted
// and started afresh, with a warning in Index.Warnings: vectors are never
// mixed and a damaged index never stops the caller.
func Open(dir string, emb Embedder) (*Index, error) {
	if emb == nil {
		return nil, errors.New("rag: open index: nil embedder")
	}
	if emb.Dimensions() <= 0 {
		return nil, fmt.Errorf("rag: open index: embedder %s has %d dimensions", emb.Name(), emb.Dimensions())
	}
	// The index holds the repository's code and knowledge: readable by
	// you only, as the rest of .lemmings/ is (an index of an earlier
	// version is tightened here).
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("rag: open index: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("rag: open index: %w", err)
	}
	ix := &Index{dir: dir, emb: emb}
	reason, err := ix.load(false)
	if err == nil && reason == "" {
		return ix, nil
	}
	if err != nil {
		reason = err.Error()
	}
	ix.closeStores()
	ix.Warnings = append(ix.Warnings, fmt.Sprintf("index in %s rebuilt from scratch: %s", dir, reason))
	if err := ix.wipe(); err != nil {
		return nil, fmt.Errorf("rag: reset index %s: %w", dir, err)
	}
	if reason, err := ix.load(true); err != nil || reason != "" {
		ix.closeStores()
		return nil, fmt.Errorf("rag: open fresh index %s: %v%s", dir, err, reason)
	}
	return ix, nil
}

// load opens the stores. It returns a reason to rebuild (an index that is not
// this one's to use), or an error when something is damaged. fresh says the
// index files were just removed.
func (ix *Index) load(fresh bool) (string, error) {
	data, err := os.ReadFile(filepath.Join(ix.dir, manifestFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !fresh && exists(filepath.Join(ix.dir, catalogFile)) {
			return "no manifest beside the index files", nil
		}
		ix.man = manifest{Format: FormatVersion, Embedder: ix.emb.Name(), Dimensions: ix.emb.Dimensions(), Created: time.Now().UTC()}
		if err := ix.writeManifest(); err != nil {
			return "", err
		}
	case err != nil:
		return "", fmt.Errorf("read manifest: %w", err)
	default:
		if err := json.Unmarshal(data, &ix.man); err != nil {
			return "", fmt.Errorf("manifest is corrupted: %w", err)
		}
		switch {
		case ix.man.Format != FormatVersion:
			return fmt.Sprintf("it has format version %d, this lemmings writes %d", ix.man.Format, FormatVersion), nil
		case ix.man.Embedder != ix.emb.Name() || ix.man.Dimensions != ix.emb.Dimensions():
			return fmt.Sprintf("it was built by embedder %s (%d dimensions), now using %s (%d dimensions)",
				ix.man.Embedder, ix.man.Dimensions, ix.emb.Name(), ix.emb.Dimensions()), nil
		}
	}
	ix.cat, err = openCatalog(filepath.Join(ix.dir, catalogFile))
	if err != nil {
		return "", fmt.Errorf("index database is unreadable: %w", err)
	}
	// SQLite gives its journal files the database's mode.
	for _, name := range []string{catalogFile, catalogFile + "-wal", catalogFile + "-shm"} {
		if err := os.Chmod(filepath.Join(ix.dir, name), 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("index database: %w", err)
		}
	}
	ix.col, err = chromem.NewDB().CreateCollection(collection, nil, ix.embedOne)
	if err != nil {
		return "", fmt.Errorf("vector store: %w", err)
	}
	ix.byID, ix.byRID, ix.byPath = map[string]*chunkMeta{}, map[int64]*chunkMeta{}, map[string][]string{}
	var docs []chromem.Document
	dims := ix.emb.Dimensions()
	err = ix.cat.chunks(context.Background(), func(m chunkMeta, content string, vb []byte) error {
		v, ok := decodeVector(vb, dims)
		if !ok {
			return fmt.Errorf("chunk %s has a vector of %d bytes, want %d", m.id, len(vb), 4*dims)
		}
		ix.remember(&m)
		docs = append(docs, chromemDoc(&m, content, v))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("index database is unreadable: %w", err)
	}
	if err := ix.addVectors(context.Background(), docs); err != nil {
		return "", err
	}
	return "", nil
}

func chromemDoc(m *chunkMeta, content string, v []float32) chromem.Document {
	return chromem.Document{ID: m.id, Embedding: v, Content: content, Metadata: map[string]string{
		"path": m.path, "kind": m.kind, "language": m.lang,
		"start_line": strconv.Itoa(m.startLine), "end_line": strconv.Itoa(m.endLine)}}
}

// addVectors puts documents into the in-memory collection. chromem-go starts
// one goroutine per document, so large sets go in slices.
func (ix *Index) addVectors(ctx context.Context, docs []chromem.Document) error {
	for from := 0; from < len(docs); from += 4096 {
		if err := ix.col.AddDocuments(ctx, docs[from:min(from+4096, len(docs))], runtime.GOMAXPROCS(0)); err != nil {
			return fmt.Errorf("vector store: %w", err)
		}
	}
	return nil
}

func (ix *Index) remember(m *chunkMeta) {
	ix.byID[m.id] = m
	ix.byRID[m.rid] = m
	ix.byPath[m.path] = append(ix.byPath[m.path], m.id)
}

// embedOne is chromem's embedding function; the index passes vectors itself,
// so chromem only calls it if asked to embed text directly.
func (ix *Index) embedOne(ctx context.Context, text string) ([]float32, error) {
	vs, err := ix.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embedder %s returned %d vectors for 1 text", ix.emb.Name(), len(vs))
	}
	return vs[0], nil
}

func (ix *Index) writeManifest() error {
	data, err := json.MarshalIndent(ix.man, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(ix.dir, manifestFile), data, 0o600); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return nil
}

// wipe removes the index's own files from dir (and nothing else).
func (ix *Index) wipe() error {
	for _, name := range []string{catalogFile, catalogFile + "-wal", catalogFile + "-shm", catalogFile + "-journal", manifestFile, manifestFile + ".tmp"} {
		if err := os.RemoveAll(filepath.Join(ix.dir, name)); err != nil {
			return err
		}
	}
	return nil
}

func (ix *Index) closeStores() {
	if ix.cat != nil {
		ix.cat.close()
		ix.cat = nil
	}
	ix.col = nil
}

// Close releases the index's files.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.cat == nil {
		return nil
	}
	err := ix.cat.close()
	ix.cat = nil
	return err
}

// Embedder returns the name of the embedder the index was built with.
func (ix *Index) Embedder() string { return ix.man.Embedder }

// Len returns the number of chunks in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byID)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
