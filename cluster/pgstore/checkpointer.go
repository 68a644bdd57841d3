package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lemmings-dev/lemmings/graph"
)

// Checkpointer is a graph.Checkpointer in PostgreSQL. A writer holds its run
// by a session advisory lock on a connection of its own: every Append goes
// through that connection, so once the session ends (the process died, or
// the server ended it) the lock is free for another process and the old
// writer can append nothing more.
type Checkpointer struct {
	db *DB
	// Holder names this process in lemmings_runs.holder (host:pid).
	Holder string
}

// Checkpointer returns the run store of db.
func (db *DB) Checkpointer() *Checkpointer { return &Checkpointer{db: db} }

var (
	_ graph.Checkpointer = (*Checkpointer)(nil)
	_ graph.BatchWriter  = (*Writer)(nil)
)

// Open implements graph.Checkpointer. The returned writer is a *Writer.
func (c *Checkpointer) Open(ctx context.Context, runID string, create bool) (graph.RunWriter, error) {
	return c.OpenWriter(ctx, runID, create)
}

// OpenWriter is Open with the concrete writer (its incarnation).
func (c *Checkpointer) OpenWriter(ctx context.Context, runID string, create bool) (*Writer, error) {
	if !graph.ValidRunPath(runID) {
		return nil, fmt.Errorf("run %q: %w", runID, graph.ErrInvalidRunID)
	}
	conn, err := pgx.ConnectConfig(ctx, c.db.conf)
	if err != nil {
		return nil, fmt.Errorf("run %s: connect: %w", runID, err)
	}
	ok := false
	defer func() {
		if !ok {
			hangUp(conn)
		}
	}()
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock("+lockKeySQL+")", runID).Scan(&got); err != nil {
		return nil, fmt.Errorf("run %s: lock: %w", runID, err)
	}
	if !got {
		return nil, fmt.Errorf("run %s: %w (held by another process)", runID, graph.ErrRunLocked)
	}
	var next int64
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(seq), 0) + 1 FROM lemmings_records WHERE run_id = $1", runID).Scan(&next); err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	switch {
	case create && next > 1:
		return nil, fmt.Errorf("run %s: %w", runID, graph.ErrRunExists)
	case !create && next == 1:
		return nil, fmt.Errorf("run %s: %w", runID, graph.ErrRunNotFound)
	}
	// Each opening under the lock is a new incarnation: git step refs carry
	// it, so a fenced old holder can never overwrite a ref a checkpoint names.
	var inc int
	if err := conn.QueryRow(ctx, `INSERT INTO lemmings_runs (run_id, incarnation, holder) VALUES ($1, 1, $2)
		ON CONFLICT (run_id) DO UPDATE SET incarnation = lemmings_runs.incarnation + 1, holder = $2, updated_at = now()
		RETURNING incarnation`, runID, c.Holder).Scan(&inc); err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	ok = true
	return &Writer{conn: conn, id: runID, next: next, empty: next == 1, incarnation: inc}, nil
}

// Tail implements graph.Checkpointer.
func (c *Checkpointer) Tail(ctx context.Context, runID string) ([]graph.Record, error) {
	return c.records(ctx, runID, `SELECT kind, step, data FROM lemmings_records WHERE run_id = $1
		AND seq >= (SELECT coalesce(max(seq), 0) FROM lemmings_records WHERE run_id = $1 AND kind = 1) ORDER BY seq`)
}

// Records implements graph.Checkpointer.
func (c *Checkpointer) Records(ctx context.Context, runID string) ([]graph.Record, error) {
	return c.records(ctx, runID, `SELECT kind, step, data FROM lemmings_records WHERE run_id = $1 ORDER BY seq`)
}

func (c *Checkpointer) records(ctx context.Context, runID, q string) ([]graph.Record, error) {
	rows, err := c.db.pool.Query(ctx, q, runID)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (graph.Record, error) {
		var r graph.Record
		var kind int16
		err := row.Scan(&kind, &r.Step, &r.Data)
		r.Kind = graph.RecordKind(kind)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("run %s: %w", runID, graph.ErrRunNotFound)
	}
	return recs, nil
}

// Runs implements graph.Checkpointer; Active comes from pg_locks.
func (c *Checkpointer) Runs(ctx context.Context) ([]graph.StoredRun, error) {
	rows, err := c.db.pool.Query(ctx, `SELECT r.run_id, r.kind, r.step, r.data, `+heldSQL+` FROM
		(SELECT DISTINCT ON (run_id) run_id, kind, step, data FROM lemmings_records ORDER BY run_id, seq DESC) r ORDER BY r.run_id`)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (graph.StoredRun, error) {
		var s graph.StoredRun
		var kind int16
		err := row.Scan(&s.ID, &kind, &s.Last.Step, &s.Last.Data, &s.Active)
		s.Last.Kind = graph.RecordKind(kind)
		return s, err
	})
}

// Delete implements graph.Checkpointer: the run's records and everything
// else stored of it.
func (c *Checkpointer) Delete(ctx context.Context, runID string) error {
	conn, err := c.db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock("+lockKeySQL+")", runID).Scan(&got); err != nil {
		return fmt.Errorf("run %s: lock: %w", runID, err)
	}
	if !got {
		return fmt.Errorf("run %s: %w", runID, graph.ErrRunLocked)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock("+lockKeySQL+")", runID)
	tag, err := conn.Exec(ctx, "DELETE FROM lemmings_records WHERE run_id = $1", runID)
	if err != nil {
		return fmt.Errorf("delete run %s: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %s: %w", runID, graph.ErrRunNotFound)
	}
	for _, t := range []string{"lemmings_runs", "lemmings_events", "lemmings_files"} {
		if _, err := conn.Exec(ctx, "DELETE FROM "+t+" WHERE run_id = $1", runID); err != nil {
			return fmt.Errorf("delete run %s: %w", runID, err)
		}
	}
	return nil
}

// Writer appends to one run over the connection that holds its lock.
type Writer struct {
	conn        *pgx.Conn
	id          string
	next        int64
	empty       bool
	incarnation int
}

// Incarnation counts the openings of the run under its lock, this one included.
func (w *Writer) Incarnation() int { return w.incarnation }

// Append implements graph.RunWriter.
func (w *Writer) Append(ctx context.Context, rec graph.Record) error {
	if w.conn == nil {
		return fmt.Errorf("run %s: %w", w.id, errClosed)
	}
	if rec.Kind < graph.RecordSnapshot || rec.Kind > graph.RecordStatus {
		return fmt.Errorf("run %s: invalid record kind %d", w.id, rec.Kind)
	}
	if w.empty && rec.Kind != graph.RecordSnapshot {
		return fmt.Errorf("run %s: the first record must be a snapshot", w.id)
	}
	if _, err := w.conn.Exec(ctx, "INSERT INTO lemmings_records (run_id, seq, kind, step, data) VALUES ($1, $2, $3, $4, $5)",
		w.id, w.next, int16(rec.Kind), rec.Step, rec.Data); err != nil {
		return fmt.Errorf("run %s: append: %w", w.id, err)
	}
	w.next++
	w.empty = false
	return nil
}

// AppendBatch implements graph.BatchWriter: one INSERT, so the records are
// committed together or not at all.
func (w *Writer) AppendBatch(ctx context.Context, recs []graph.Record) error {
	if w.conn == nil {
		return fmt.Errorf("run %s: %w", w.id, errClosed)
	}
	if len(recs) == 0 {
		return nil
	}
	kinds := make([]int16, len(recs))
	steps := make([]int32, len(recs))
	data := make([][]byte, len(recs))
	for i, rec := range recs {
		if rec.Kind < graph.RecordSnapshot || rec.Kind > graph.RecordStatus {
			return fmt.Errorf("run %s: invalid record kind %d", w.id, rec.Kind)
		}
		kinds[i], steps[i], data[i] = int16(rec.Kind), int32(rec.Step), rec.Data
	}
	if w.empty && recs[0].Kind != graph.RecordSnapshot {
		return fmt.Errorf("run %s: the first record must be a snapshot", w.id)
	}
	if _, err := w.conn.Exec(ctx, `INSERT INTO lemmings_records (run_id, seq, kind, step, data)
		SELECT $1, $2 + t.i - 1, t.k, t.s, t.d FROM unnest($3::smallint[], $4::integer[], $5::bytea[]) WITH ORDINALITY AS t(k, s, d, i)`,
		w.id, w.next, kinds, steps, data); err != nil {
		return fmt.Errorf("run %s: append %d records: %w", w.id, len(recs), err)
	}
	w.next += int64(len(recs))
	w.empty = false
	return nil
}

// Sync implements graph.RunWriter: a committed insert is durable already
// (as the server's synchronous_commit says).
func (w *Writer) Sync(context.Context) error {
	if w.conn == nil {
		return fmt.Errorf("run %s: %w", w.id, errClosed)
	}
	return nil
}

// Prune implements graph.RunWriter.
func (w *Writer) Prune(ctx context.Context, keepFrom int) (int64, error) {
	if w.conn == nil {
		return 0, fmt.Errorf("run %s: %w", w.id, errClosed)
	}
	var freed int64
	err := w.conn.QueryRow(ctx, `WITH cut AS (
			SELECT coalesce(max(seq), 0) AS seq FROM lemmings_records WHERE run_id = $1 AND kind = 1 AND step <= $2
				AND seq <= (SELECT max(seq) FROM lemmings_records WHERE run_id = $1 AND kind = 1)),
		gone AS (DELETE FROM lemmings_records WHERE run_id = $1 AND seq < (SELECT seq FROM cut) RETURNING length(data) AS n)
		SELECT coalesce(sum(n), 0) FROM gone`, w.id, keepFrom).Scan(&freed)
	if err != nil {
		return 0, fmt.Errorf("run %s: prune: %w", w.id, err)
	}
	return freed, nil
}

// Close implements graph.RunWriter: ending the session releases the lock.
func (w *Writer) Close() error {
	if w.conn == nil {
		return nil
	}
	conn := w.conn
	w.conn = nil
	return hangUp(conn)
}

// hangUp unlocks, then closes: the server ends a closed session's locks a
// moment after the socket closes, and the next Open must find the run free.
func hangUp(conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock_all()") // fails on a dead session, whose locks are gone anyway
	return conn.Close(ctx)
}
