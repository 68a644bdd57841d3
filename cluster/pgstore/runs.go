package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Submission is what `lemmings run --submit` asks for: a worker starts the
// run from it.
type Submission struct {
	RunID   string `json:"run_id"`
	Remit   string `json:"remit"`
	Base    string `json:"base"`              // the commit the run branches from (on the shared remote)
	Approve string `json:"approve,omitempty"` // "", "milestones" or "tasks"
	Queue   string `json:"queue"`
	// Choices are the run's recorded choices (run.Choices).
	Choices map[string]string `json:"choices,omitempty"`
}

// ErrNoSubmission: the run was not submitted to this database.
var ErrNoSubmission = errors.New("no such submitted run")

// Submit records a submission (in tx, beside the job that carries it).
func Submit(ctx context.Context, tx pgx.Tx, s Submission) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO lemmings_runs (run_id, queue, submission) VALUES ($1, $2, $3)`, s.RunID, s.Queue, data)
	if err != nil {
		return fmt.Errorf("submit run %s: %w", s.RunID, err)
	}
	return nil
}

// Submission reads a run's submission.
func (db *DB) Submission(ctx context.Context, runID string) (Submission, error) {
	var data []byte
	err := db.pool.QueryRow(ctx, `SELECT submission FROM lemmings_runs WHERE run_id = $1 AND submission IS NOT NULL`, runID).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return Submission{}, fmt.Errorf("run %s: %w", runID, ErrNoSubmission)
	}
	if err != nil {
		return Submission{}, fmt.Errorf("run %s: %w", runID, err)
	}
	var s Submission
	if err := json.Unmarshal(data, &s); err != nil {
		return Submission{}, fmt.Errorf("run %s: submission: %w", runID, err)
	}
	return s, nil
}

// Submitted lists the submitted runs that no halt request holds back.
func (db *DB) Submitted(ctx context.Context) ([]Submission, error) {
	rows, err := db.pool.Query(ctx, `SELECT submission FROM lemmings_runs WHERE submission IS NOT NULL AND NOT halt`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Submission, error) {
		var data []byte
		var s Submission
		if err := row.Scan(&data); err != nil {
			return s, err
		}
		return s, json.Unmarshal(data, &s)
	})
}

// SetHalt records or clears a halt request; the holder stops before its
// next step and no worker takes the run until it is cleared.
func (db *DB) SetHalt(ctx context.Context, runID string, halt bool) error {
	tag, err := db.pool.Exec(ctx, `UPDATE lemmings_runs SET halt = $2, updated_at = now() WHERE run_id = $1`, runID, halt)
	if err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %s: %w", runID, ErrNoSubmission)
	}
	return nil
}

// HaltRequested reports a halt request (false when it cannot tell).
func (db *DB) HaltRequested(ctx context.Context, runID string) (bool, error) {
	var halt bool
	err := db.pool.QueryRow(ctx, `SELECT halt FROM lemmings_runs WHERE run_id = $1`, runID).Scan(&halt)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return halt, err
}

// EventsChannel is the LISTEN/NOTIFY channel of new events; a notification
// carries "<run>:<id>", a pointer, never the event.
func (db *DB) EventsChannel() string { return db.schema + "_lemmings_events" }

// AppendEvent stores one line of a run's event log and notifies listeners.
func (db *DB) AppendEvent(ctx context.Context, runID string, line []byte) error {
	_, err := db.pool.Exec(ctx, `WITH e AS (INSERT INTO lemmings_events (run_id, line) VALUES ($1, $2) RETURNING id)
		SELECT pg_notify($3, $1 || ':' || id) FROM e`, runID, string(line), db.EventsChannel())
	return err
}

// Event is one stored event line.
type Event struct {
	ID   int64
	Line []byte
}

// Events returns up to max (0: every) events of the run after id after,
// oldest first.
func (db *DB) Events(ctx context.Context, runID string, after int64, max int) ([]Event, error) {
	var limit any // NULL: LIMIT ALL
	if max > 0 {
		limit = max
	}
	rows, err := db.pool.Query(ctx, `SELECT id, line FROM lemmings_events WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3`, runID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Event, error) {
		var e Event
		var line string
		err := row.Scan(&e.ID, &line)
		e.Line = []byte(line)
		return e, err
	})
}

// WaitEvents blocks until a new event of runID is notified, ctx ends or
// timeout passes (a live view polls Events after it).
func (db *DB) WaitEvents(ctx context.Context, runID string, timeout time.Duration) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	ch := pgx.Identifier{db.EventsChannel()}.Sanitize()
	if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "UNLISTEN "+ch)
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		n, err := conn.Conn().WaitForNotification(wctx)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return nil
			}
			return err
		}
		if strings.HasPrefix(n.Payload, runID+":") {
			return nil
		}
	}
}

// PutFile stores a run file (report.md, board.md, …) for other machines.
func (db *DB) PutFile(ctx context.Context, runID, name string, data []byte) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO lemmings_files (run_id, name, data) VALUES ($1, $2, $3)
		ON CONFLICT (run_id, name) DO UPDATE SET data = $3, updated_at = now()`, runID, name, data)
	return err
}

// File reads a stored run file; ok is false when there is none.
func (db *DB) File(ctx context.Context, runID, name string) (data []byte, ok bool, err error) {
	err = db.pool.QueryRow(ctx, `SELECT data FROM lemmings_files WHERE run_id = $1 AND name = $2`, runID, name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// DeleteEventsBefore deletes the events of the given runs older than cutoff.
func (db *DB) DeleteEventsBefore(ctx context.Context, runIDs []string, cutoff time.Time) (int64, error) {
	if len(runIDs) == 0 {
		return 0, nil
	}
	tag, err := db.pool.Exec(ctx, `DELETE FROM lemmings_events WHERE run_id = ANY($1) AND at < $2`, runIDs, cutoff)
	return tag.RowsAffected(), err
}

// HolderPID is the backend process id of the session that holds the run's
// lock, 0 when none does.
func (db *DB) HolderPID(ctx context.Context, runID string) (int, error) {
	var pid int
	err := db.pool.QueryRow(ctx, `SELECT coalesce((SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND ((l.classid::bigint << 32) | l.objid::bigint) = `+lockKeySQL+` LIMIT 1), 0)`, runID).Scan(&pid)
	return pid, err
}

// RunLockHolders counts, per run, the sessions holding its lock right now
// (tests sample it: never more than one).
func (db *DB) RunLockHolders(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	rows, err := db.pool.Query(ctx, `SELECT r.run_id, count(*)::int FROM lemmings_runs r JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
		AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(current_schema() || '/' || r.run_id, 0)
		GROUP BY r.run_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// PID is the backend process id of a run writer's session.
func (w *Writer) PID() int {
	if w.conn == nil {
		return 0
	}
	return int(w.conn.PgConn().PID())
}

// Unpruned lists the runs whose checkpoints were not pruned yet.
func (db *DB) Unpruned(ctx context.Context) (map[string]bool, error) {
	rows, err := db.pool.Query(ctx, `SELECT run_id FROM lemmings_runs WHERE pruned_at IS NULL`)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// ClaimPrune marks the run pruned; false when another process did first
// (two reapers never prune one run at once).
func (db *DB) ClaimPrune(ctx context.Context, runID string) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE lemmings_runs SET pruned_at = now() WHERE run_id = $1 AND pruned_at IS NULL`, runID)
	return tag.RowsAffected() == 1, err
}

// UnclaimPrune takes a claim back after a prune that failed, so that a
// later reap tries again.
func (db *DB) UnclaimPrune(ctx context.Context, runID string) error {
	_, err := db.pool.Exec(ctx, `UPDATE lemmings_runs SET pruned_at = NULL WHERE run_id = $1`, runID)
	return err
}
