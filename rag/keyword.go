package rag

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	_ "modernc.org/sqlite" // pure-Go SQLite with FTS5
)

// catalog is the persistent side of the index, one SQLite file: which files
// are indexed (for incremental updates), the chunks with their metadata,
// content and vector, and an FTS5 table for BM25 keyword ranking. Every
// update is one transaction, so an interrupted update leaves the previous
// state.
type catalog struct{ db *sql.DB }

const schema = `
CREATE TABLE IF NOT EXISTS files(
	path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL,
	start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL,
	kind TEXT NOT NULL, language TEXT NOT NULL, context TEXT NOT NULL,
	content TEXT NOT NULL, vector BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
	path, body, content='', contentless_delete=1, tokenize='porter unicode61');
`

func openCatalog(file string) (*catalog, error) {
	db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, err
	}
	// One connection: writes are serialised by Index anyway. 16 KiB pages
	// hold a chunk row (a 2 KiB vector and its text) without spilling to
	// overflow pages; the page size only takes on a new file, before WAL
	// (the driver would apply DSN pragmas in alphabetical order).
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`PRAGMA page_size = 16384; PRAGMA journal_mode = WAL;`); err != nil {
		db.Close()
		return nil, err
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, err
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	return &catalog{db: db}, nil
}

func (c *catalog) close() error { return c.db.Close() }

type fileRow struct {
	size, mtime int64
	hash        string
}

type chunkMeta struct {
	rid                 int64
	id, path, hash      string
	startLine, endLine  int
	kind, lang, context string
}

func (c *catalog) files(ctx context.Context) (map[string]fileRow, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT path, size, mtime, hash FROM files`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]fileRow{}
	for rows.Next() {
		var p string
		var r fileRow
		if err := rows.Scan(&p, &r.size, &r.mtime, &r.hash); err != nil {
			return nil, err
		}
		out[p] = r
	}
	return out, rows.Err()
}

// chunks calls fn for every chunk with its content and vector.
func (c *catalog) chunks(ctx context.Context, fn func(m chunkMeta, content string, vec []byte) error) error {
	rows, err := c.db.QueryContext(ctx, `SELECT rid, id, path, start_line, end_line, hash, kind, language, context, content, vector FROM chunks`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var m chunkMeta
		var content string
		var vec []byte
		if err := rows.Scan(&m.rid, &m.id, &m.path, &m.startLine, &m.endLine, &m.hash, &m.kind, &m.lang, &m.context, &content, &vec); err != nil {
			return err
		}
		if err := fn(m, content, vec); err != nil {
			return err
		}
	}
	return rows.Err()
}

// writer holds one transaction's prepared statements: a batch of files is
// swapped with statements parsed once.
type writer struct {
	tx                                                             *sql.Tx
	oldRIDs, delFTS, delChunks, delFile, putFile, putChunk, putFTS *sql.Stmt
}

func (c *catalog) begin(ctx context.Context) (*writer, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	w := &writer{tx: tx}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&w.oldRIDs, `SELECT rid FROM chunks WHERE path = ?`},
		{&w.delFTS, `DELETE FROM fts WHERE rowid = ?`},
		{&w.delChunks, `DELETE FROM chunks WHERE path = ?`},
		{&w.delFile, `DELETE FROM files WHERE path = ?`},
		{&w.putFile, `INSERT INTO files(path, size, mtime, hash) VALUES(?, ?, ?, ?)
			ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, hash = excluded.hash`},
		{&w.putChunk, `INSERT INTO chunks(id, path, start_line, end_line, hash, kind, language, context, content, vector)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.putFTS, `INSERT INTO fts(rowid, path, body) VALUES(?, ?, ?)`},
	} {
		if *p.st, err = tx.PrepareContext(ctx, p.sql); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	return w, nil
}

func (w *writer) commit() error   { return w.tx.Commit() }
func (w *writer) rollback() error { return w.tx.Rollback() }

// replaceFile swaps the chunks of one file: old chunk rows and their FTS
// entries go, the new ones come in, and the file row is upserted (or deleted
// when row is nil). It returns the new chunks' metadata.
func (w *writer) replaceFile(ctx context.Context, p string, row *fileRow, cs []chunk, ids []string, vecs [][]float32) ([]chunkMeta, error) {
	rows, err := w.oldRIDs.QueryContext(ctx, p)
	if err != nil {
		return nil, err
	}
	var old []int64
	for rows.Next() {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			rows.Close()
			return nil, err
		}
		old = append(old, rid)
	}
	rows.Close()
	for _, rid := range old {
		if _, err := w.delFTS.ExecContext(ctx, rid); err != nil {
			return nil, err
		}
	}
	if _, err := w.delChunks.ExecContext(ctx, p); err != nil {
		return nil, err
	}
	if row == nil {
		_, err := w.delFile.ExecContext(ctx, p)
		return nil, err
	}
	if _, err := w.putFile.ExecContext(ctx, p, row.size, row.mtime, row.hash); err != nil {
		return nil, err
	}
	metas := make([]chunkMeta, 0, len(cs))
	pathWords := keywordText(p)
	for i, ch := range cs {
		res, err := w.putChunk.ExecContext(ctx, ids[i], p, ch.StartLine, ch.EndLine, ch.Hash, ch.Kind, ch.Language, ch.Context, ch.Text, encodeVector(vecs[i]))
		if err != nil {
			return nil, err
		}
		rid, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		if _, err := w.putFTS.ExecContext(ctx, rid, pathWords, keywordText(ch.Context+"\n"+ch.Text)); err != nil {
			return nil, err
		}
		metas = append(metas, chunkMeta{rid: rid, id: ids[i], path: p, hash: ch.Hash, startLine: ch.StartLine,
			endLine: ch.EndLine, kind: ch.Kind, lang: ch.Language, context: ch.Context})
	}
	return metas, nil
}

// touchFile records a new size and mtime for a file whose content is unchanged.
func (c *catalog) touchFile(ctx context.Context, p string, row fileRow) error {
	_, err := c.db.ExecContext(ctx, `UPDATE files SET size = ?, mtime = ? WHERE path = ?`, row.size, row.mtime, p)
	return err
}

// keywordText is the text given to FTS5: the original words plus the parts of
// compound identifiers, so "cookies" finds readSetCookies.
func keywordText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	b.WriteString(s)
	b.WriteByte('\n')
	words(s, func(w string, part bool) {
		if part {
			b.WriteString(w)
			b.WriteByte(' ')
		}
	})
	return b.String()
}

// ftsQuery turns a question into an FTS5 query: its content words, each
// quoted, joined by OR (BM25 ranks documents matching more and rarer words
// higher). It returns "" when the question has no content word.
func ftsQuery(q string) string {
	seen := map[string]bool{}
	var terms []string
	words(q, func(w string, part bool) {
		if isStop(w) || len(w) < 2 || seen[w] {
			return
		}
		seen[w] = true
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	})
	return strings.Join(terms, " OR ")
}

// bm25Weights weigh a match in the path twice a match in the body.
const bm25Weights = "2.0, 1.0"

// keywordSearch returns chunk rowids ranked by BM25, best first, with their
// scores (higher is better), at most n, optionally of one kind.
func (c *catalog) keywordSearch(ctx context.Context, q, kind string, n int) ([]int64, []float64, error) {
	fq := ftsQuery(q)
	if fq == "" {
		return nil, nil, nil
	}
	query := fmt.Sprintf(`SELECT fts.rowid, bm25(fts, %s) AS r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT ?`, bm25Weights)
	args := []any{fq, n}
	if kind != "" {
		query = fmt.Sprintf(`SELECT fts.rowid, bm25(fts, %s) AS r FROM fts JOIN chunks ON chunks.rid = fts.rowid
			WHERE fts MATCH ? AND chunks.kind = ? ORDER BY r LIMIT ?`, bm25Weights)
		args = []any{fq, kind, n}
	}
	rows, err := c.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("keyword search: %w", err)
	}
	defer rows.Close()
	var rids []int64
	var scores []float64
	for rows.Next() {
		var rid int64
		var r float64
		if err := rows.Scan(&rid, &r); err != nil {
			return nil, nil, err
		}
		rids = append(rids, rid)
		scores = append(scores, -r) // bm25() is lower-is-better
	}
	return rids, scores, rows.Err()
}

// encodeVector stores a vector as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte, dims int) ([]float32, bool) {
	if len(b) != 4*dims {
		return nil, false
	}
	v := make([]float32, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}
