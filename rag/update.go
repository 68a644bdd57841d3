package rag

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	chromem "github.com/philippgille/chromem-go"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// DefaultMaxFileSize is the largest file indexed by default.
const DefaultMaxFileSize = 1 << 20

// UpdateOptions tune Update; the zero value is the default.
type UpdateOptions struct {
	MaxFileSize  int64  // bytes; 0 means DefaultMaxFileSize
	KnowledgeDir string // relative to root; "" means "docs/knowledge"
	BatchSize    int    // texts per Embed call; 0 means 64
}

// Skip is a file left out of the index and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Stats says what an Update did.
type Stats struct {
	FilesSeen      int // regular files considered
	FilesIndexed   int // new or changed files chunked
	FilesUnchanged int
	FilesSkipped   int // binary, not UTF-8, too big, unreadable
	FilesRemoved   int // gone from the tree (or now skipped)
	ChunksEmbedded int // chunks sent to the embedder
	ChunksReused   int // chunks of changed files whose content had not changed
	ChunksRemoved  int
	Chunks         int // chunks in the index afterwards
	Duration       time.Duration
	Skipped        []Skip
}

// fileWork is a new or changed file waiting for its vectors.
type fileWork struct {
	path   string
	row    fileRow
	chunks []chunk
	ids    []string
	vecs   [][]float32 // nil where the chunk needs embedding
	add    []bool      // chunk must be (re)written to the vector store
	reused int         // chunks whose vector was kept
}

// Update brings the index in line with the files under root: new and changed
// files are chunked and only chunks whose content hash changed are embedded;
// chunks of deleted, changed or now-skipped files are removed. Git-ignored
// files, .git/, .lemmings/, node_modules/ and vendor/ are never indexed;
// binary, non-UTF-8 and oversized files are skipped with a reason in
// Stats.Skipped. If the embedder fails, Update stops with the error and the
// index keeps what was done so far.
func (ix *Index) Update(ctx context.Context, root string, opts UpdateOptions) (Stats, error) {
	start := time.Now()
	opts = opts.withDefaults()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var st Stats
	if ix.cat == nil {
		return st, errors.New("rag: update: index is closed")
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return st, fmt.Errorf("rag: update: %s is not a directory", root)
	}
	files, err := listFiles(ctx, root)
	if err != nil {
		return st, fmt.Errorf("rag: list files of %s: %w", root, err)
	}
	known, err := ix.cat.files(ctx)
	if err != nil {
		return st, fmt.Errorf("rag: read catalog: %w", err)
	}
	keep := map[string]bool{}
	var group []*fileWork
	pending := 0
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return ix.finish(st, start, err)
		}
		row, had := known[rel]
		data, nr, err := ix.changedFile(ctx, root, rel, row, had, opts.MaxFileSize, keep, &st)
		if err != nil {
			return ix.finish(st, start, err)
		}
		if data == nil {
			continue
		}
		w := ix.plan(ctx, rel, nr, chunkFile(rel, kindOf(rel, opts.KnowledgeDir), string(data)))
		for _, v := range w.vecs {
			if v == nil {
				pending++
			}
		}
		group = append(group, w)
		if pending >= opts.BatchSize || len(group) >= 256 {
			if err := ix.flush(ctx, group, opts.BatchSize, &st); err != nil {
				return ix.finish(st, start, err)
			}
			group, pending = nil, 0
		}
	}
	if err := ix.flush(ctx, group, opts.BatchSize, &st); err != nil {
		return ix.finish(st, start, err)
	}
	if err := ix.removeGone(ctx, known, keep, opts.BatchSize, &st); err != nil {
		return ix.finish(st, start, err)
	}
	// After large changes (a first build), merge the FTS5 segments for
	// faster queries; small updates rely on FTS5's automatic merging.
	if changed := st.ChunksEmbedded + st.ChunksRemoved; changed > 0 && changed*4 >= len(ix.byID) {
		if _, err := ix.cat.db.ExecContext(ctx, `INSERT INTO fts(fts) VALUES('optimize')`); err != nil {
			return ix.finish(st, start, fmt.Errorf("rag: optimise keyword index: %w", err))
		}
	}
	return ix.finish(st, start, nil)
}

func (o UpdateOptions) withDefaults() UpdateOptions {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.KnowledgeDir == "" {
		o.KnowledgeDir = "docs/knowledge"
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 64
	}
	return o
}

// changedFile returns the content of rel and its new catalog row when the
// file changed since row (had: the catalog knows it). It returns nil content
// for a file that is unchanged (kept, and counted) or skipped (the reason is
// in st's Skipped), and an error only when the catalog cannot be written.
func (ix *Index) changedFile(ctx context.Context, root, rel string, row fileRow, had bool, maxSize int64, keep map[string]bool, st *Stats) ([]byte, fileRow, error) {
	skip := func(reason string) ([]byte, fileRow, error) {
		st.FilesSkipped++
		st.Skipped = append(st.Skipped, Skip{Path: rel, Reason: reason})
		return nil, fileRow{}, nil
	}
	full := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fileRow{}, nil // deleted but still tracked, a symlink, a submodule
	}
	st.FilesSeen++
	if fi.Size() > maxSize {
		return skip(fmt.Sprintf("too large: %d bytes (limit %d)", fi.Size(), maxSize))
	}
	mtime := fi.ModTime().UnixNano()
	if had && row.hash != "" && row.size == fi.Size() && row.mtime == mtime {
		keep[rel] = true
		st.FilesUnchanged++
		return nil, row, nil
	}
	data, err := safefile.ReadFile(full)
	if err != nil {
		return skip("unreadable: " + err.Error())
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return skip("binary")
	}
	if !utf8.Valid(data) {
		return skip("not valid UTF-8")
	}
	sum := sha256.Sum256(data)
	nr := fileRow{size: fi.Size(), mtime: mtime, hash: hex.EncodeToString(sum[:])}
	keep[rel] = true
	if had && row.hash == nr.hash {
		if err := ix.cat.touchFile(ctx, rel, nr); err != nil {
			return nil, nr, fmt.Errorf("rag: catalog: %w", err)
		}
		st.FilesUnchanged++
		return nil, nr, nil
	}
	return data, nr, nil
}

// removeGone drops the files the catalog or the vectors hold that the walk
// no longer listed.
func (ix *Index) removeGone(ctx context.Context, known map[string]fileRow, keep map[string]bool, batch int, st *Stats) error {
	var gone []*fileWork
	for p := range known {
		if !keep[p] {
			gone = append(gone, &fileWork{path: p})
		}
	}
	for p := range ix.byPath {
		if _, ok := known[p]; !ok && !keep[p] {
			gone = append(gone, &fileWork{path: p})
		}
	}
	if len(gone) == 0 {
		return nil
	}
	st.FilesRemoved = len(gone)
	return ix.flush(ctx, gone, batch, st)
}

func (ix *Index) finish(st Stats, start time.Time, err error) (Stats, error) {
	st.Chunks = len(ix.byID)
	st.Duration = time.Since(start)
	return st, err
}

// plan decides, for a changed file, which chunks keep their id and vector
// (same content as before) and which need embedding.
func (ix *Index) plan(ctx context.Context, p string, row fileRow, cs []chunk) *fileWork {
	w := &fileWork{path: p, row: row, chunks: cs, ids: make([]string, len(cs)), vecs: make([][]float32, len(cs)), add: make([]bool, len(cs))}
	oldByHash := map[string][]string{}
	for _, id := range ix.byPath[p] {
		if m, ok := ix.byID[id]; ok {
			oldByHash[m.hash] = append(oldByHash[m.hash], id)
		}
	}
	seen := map[string]int{}
	for i, c := range cs {
		k := seen[c.Hash]
		seen[c.Hash]++
		if olds := oldByHash[c.Hash]; k < len(olds) {
			if doc, err := ix.col.GetByID(ctx, olds[k]); err == nil && len(doc.Embedding) == ix.emb.Dimensions() {
				m := ix.byID[olds[k]]
				w.ids[i], w.vecs[i] = olds[k], doc.Embedding
				w.reused++
				w.add[i] = m.startLine != c.StartLine || m.endLine != c.EndLine || m.kind != c.Kind
				continue
			}
		}
		base := p + "#" + c.Hash
		if k > 0 {
			base += "~" + strconv.Itoa(k+1)
		}
		w.ids[i] = base
		w.add[i] = true
	}
	return w
}

// flush embeds what the group needs, swaps the files' chunks in the database
// in one transaction, then mirrors the change in the in-memory vectors.
func (ix *Index) flush(ctx context.Context, group []*fileWork, batch int, st *Stats) error {
	if len(group) == 0 {
		return nil
	}
	type slot struct{ w, i int }
	var texts []string
	var slots []slot
	for wi, w := range group {
		for i, v := range w.vecs {
			if v == nil {
				texts = append(texts, w.chunks[i].embedText())
				slots = append(slots, slot{wi, i})
			}
		}
	}
	for from := 0; from < len(texts); from += batch {
		to := min(from+batch, len(texts))
		vecs, err := ix.emb.Embed(ctx, texts[from:to])
		if err != nil {
			return fmt.Errorf("rag: embed with %s: %w", ix.emb.Name(), err)
		}
		if len(vecs) != to-from {
			return fmt.Errorf("rag: embedder %s returned %d vectors for %d texts", ix.emb.Name(), len(vecs), to-from)
		}
		for j, v := range vecs {
			if len(v) != ix.emb.Dimensions() {
				return fmt.Errorf("rag: embedder %s returned a vector of %d dimensions, want %d", ix.emb.Name(), len(v), ix.emb.Dimensions())
			}
			s := slots[from+j]
			group[s.w].vecs[s.i] = normalize(v)
		}
	}

	tx, err := ix.cat.begin(ctx)
	if err != nil {
		return fmt.Errorf("rag: index database: %w", err)
	}
	newMetas := make([][]chunkMeta, len(group))
	for wi, w := range group {
		var row *fileRow
		if w.row.hash != "" {
			row = &w.row
		}
		if newMetas[wi], err = tx.replaceFile(ctx, w.path, row, w.chunks, w.ids, w.vecs); err != nil {
			tx.rollback()
			return fmt.Errorf("rag: index database, %s: %w", w.path, err)
		}
	}
	if err := tx.commit(); err != nil {
		return fmt.Errorf("rag: index database: %w", err)
	}
	st.ChunksEmbedded += len(texts)

	// The database is the truth; mirror it in memory.
	var stale []string
	var docs []chromem.Document
	for wi, w := range group {
		newIDs := map[string]bool{}
		for _, id := range w.ids {
			newIDs[id] = true
		}
		for _, id := range ix.byPath[w.path] {
			if !newIDs[id] {
				stale = append(stale, id)
			}
			if m, ok := ix.byID[id]; ok {
				delete(ix.byRID, m.rid)
				delete(ix.byID, id)
			}
		}
		delete(ix.byPath, w.path)
		for i := range newMetas[wi] {
			m := &newMetas[wi][i]
			ix.remember(m)
			if w.add[i] {
				docs = append(docs, chromemDoc(m, w.chunks[i].Text, w.vecs[i]))
			}
		}
		st.ChunksReused += w.reused
	}
	if err := ix.addVectors(ctx, docs); err != nil {
		return fmt.Errorf("rag: %w", err)
	}
	if len(stale) > 0 {
		if err := ix.col.Delete(ctx, nil, nil, stale...); err != nil {
			return fmt.Errorf("rag: vector store: %w", err)
		}
		st.ChunksRemoved += len(stale)
	}
	st.FilesIndexed += countChanged(group)
	return nil
}

// normalize returns v scaled to unit length (chromem compares by dot product).
func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.Abs(sum-1) < 1e-6 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

func countChanged(group []*fileWork) int {
	n := 0
	for _, w := range group {
		if w.row.hash != "" {
			n++
		}
	}
	return n
}
