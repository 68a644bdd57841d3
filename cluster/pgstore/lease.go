package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrWorkerNameTaken: a live worker holds the lease of this name already.
var ErrWorkerNameTaken = errors.New("a live worker holds this lease")

// workerKeySQL is the advisory lock key of worker $1 in the current schema
// (run ids hold no '/', so it never meets a run's key).
const workerKeySQL = "hashtextextended(current_schema() || '/worker/' || $1, 0)"

// WorkerHeldSQL is true when a session holds the lease of the worker named
// by the SQL expression expr: the worker process is alive and reaches the
// database.
func WorkerHeldSQL(expr string) string {
	return `EXISTS (SELECT 1 FROM pg_locks wl WHERE wl.locktype = 'advisory' AND wl.granted AND wl.objsubid = 1
	AND wl.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND ((wl.classid::bigint << 32) | wl.objid::bigint) = hashtextextended(current_schema() || '/worker/' || ` + expr + `, 0))`
}

// Lease says a worker is alive: a session advisory lock on its name, on a
// connection of its own. When the process dies its session ends and the
// lease with it, at once, so the jobs it was running can be given to
// another worker without waiting for a timeout.
type Lease struct {
	db   *DB
	name string

	mu   sync.Mutex
	conn *pgx.Conn
}

// TakeLease takes the lease of the worker process called name (unique per
// process: River's client id); ErrWorkerNameTaken when a live one has it.
func (db *DB) TakeLease(ctx context.Context, name string) (*Lease, error) {
	l := &Lease{db: db, name: name}
	if err := l.take(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Lease) take(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.db.conf)
	if err != nil {
		return fmt.Errorf("worker %s: connect: %w", l.name, err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock("+workerKeySQL+")", l.name).Scan(&got); err != nil {
		_ = conn.Close(ctx)
		return fmt.Errorf("worker %s: lease: %w", l.name, err)
	}
	if !got {
		_ = conn.Close(ctx)
		return fmt.Errorf("worker %s: %w", l.name, ErrWorkerNameTaken)
	}
	l.mu.Lock()
	l.conn = conn
	l.mu.Unlock()
	return nil
}

// Renew checks the lease's session and takes the lease again when the
// session ended (the server restarted, the network came back).
func (l *Lease) Renew(ctx context.Context) error {
	l.mu.Lock()
	conn := l.conn
	l.mu.Unlock()
	if conn != nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := conn.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
	}
	if conn != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = conn.Close(cctx)
		cancel()
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return l.take(tctx)
}

// Close gives the lease up.
func (l *Lease) Close() error {
	l.mu.Lock()
	conn := l.conn
	l.conn = nil
	l.mu.Unlock()
	if conn == nil {
		return nil
	}
	return hangUp(conn)
}
