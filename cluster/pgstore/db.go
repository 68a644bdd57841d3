// Package pgstore keeps lemmings' runs in PostgreSQL: the checkpoints of
// package graph (Checkpointer, one writer per run by a session advisory lock
// on a pinned connection), and what a run writes besides them (events,
// report, board, halt requests, decisions) so that any machine reading the
// same database sees them.
//
// Every table lives in the first schema of the connection's search_path
// (postgres://…?search_path=lemmings); advisory lock keys include the schema,
// so two schemas of one database never share a lock.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is an open lemmings database.
type DB struct {
	pool   *pgxpool.Pool
	conf   *pgx.ConnConfig // for the pinned connection of each run writer
	schema string
}

// Options tune Open.
type Options struct {
	// Migrate runs, under the migration lock and after lemmings' own tables
	// are made, more migrations (the queue's), with their own transactions.
	Migrate func(ctx context.Context, db *DB) error
	// MaxConns caps the pool (default 8).
	MaxConns int32
}

// Open connects to dsn and brings the schema up to date. Two processes
// opening an empty database at once are safe: migrations run under a
// database-wide advisory lock, one after the other.
func Open(ctx context.Context, dsn string, o Options) (*DB, error) {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w (want postgres://user@host:port/db?search_path=schema)", redactDSN(dsn), err)
	}
	pcfg.ConnConfig.DialFunc = dial
	pcfg.MaxConns = 8
	if o.MaxConns > 0 {
		pcfg.MaxConns = o.MaxConns
	}
	schema := "public"
	if sp := pcfg.ConnConfig.RuntimeParams["search_path"]; sp != "" {
		schema = strings.TrimSpace(strings.Split(sp, ",")[0])
	}
	if !validIdent(schema) {
		return nil, fmt.Errorf("store %s: search_path schema %q: use letters, digits and _ only", redactDSN(dsn), schema)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", redactDSN(dsn), err)
	}
	db := &DB{pool: pool, conf: pcfg.ConnConfig, schema: schema}
	if err := db.migrate(ctx, o.Migrate); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store %s: %w", redactDSN(dsn), err)
	}
	return db, nil
}

// Pool is the database's connection pool.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Schema is the schema the tables live in.
func (db *DB) Schema() string { return db.schema }

// Close closes the pool (run writers close their own connections).
func (db *DB) Close() { db.pool.Close() }

func validIdent(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// redactDSN hides a password in a connection string shown in an error.
func redactDSN(dsn string) string {
	if at := strings.LastIndex(dsn, "@"); at > 0 {
		if i := strings.Index(dsn, "://"); i >= 0 && i+3 < at {
			cred := dsn[i+3 : at]
			if c := strings.Index(cred, ":"); c >= 0 {
				return dsn[:i+3] + cred[:c] + ":***" + dsn[at:]
			}
		}
	}
	return dsn
}

// migrationLock is the advisory lock every migration runs under, database wide.
const migrationLock = "lemmings-migrations"

var schemaSQL = []string{
	`CREATE TABLE IF NOT EXISTS lemmings_records (
		run_id text NOT NULL, seq bigint NOT NULL, kind smallint NOT NULL, step integer NOT NULL, data bytea NOT NULL,
		PRIMARY KEY (run_id, seq))`,
	`CREATE TABLE IF NOT EXISTS lemmings_runs (
		run_id text PRIMARY KEY,
		created_at timestamptz NOT NULL DEFAULT now(),
		updated_at timestamptz NOT NULL DEFAULT now(),
		incarnation integer NOT NULL DEFAULT 0,
		holder text NOT NULL DEFAULT '',
		halt boolean NOT NULL DEFAULT false,
		queue text NOT NULL DEFAULT '',
		submission jsonb)`,
	`CREATE TABLE IF NOT EXISTS lemmings_events (
		id bigserial PRIMARY KEY, run_id text NOT NULL, at timestamptz NOT NULL DEFAULT now(), line text NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS lemmings_events_run ON lemmings_events (run_id, id)`,
	// pruned_at: when a finished run's checkpoints and step refs were
	// pruned (cluster.events_retention), once.
	`ALTER TABLE lemmings_runs ADD COLUMN IF NOT EXISTS pruned_at timestamptz`,
	`CREATE TABLE IF NOT EXISTS lemmings_files (
		run_id text NOT NULL, name text NOT NULL, data bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (run_id, name))`,
}

func (db *DB) migrate(ctx context.Context, more func(context.Context, *DB) error) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A session lock on a connection taken out of the pool: some migrations
	// (River's enum changes) cannot share one transaction. If this process
	// dies, the session ends and so does the lock.
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtextextended($1, 0))", migrationLock); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtextextended($1, 0))", migrationLock)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{db.schema}.Sanitize()); err != nil {
		return fmt.Errorf("create schema %s: %w", db.schema, err)
	}
	for _, q := range schemaSQL {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	if more != nil {
		return more(ctx, db)
	}
	return nil
}

// lockKeySQL is the advisory lock key of run $1 in the current schema.
const lockKeySQL = "hashtextextended(current_schema() || '/' || $1, 0)"

// heldSQL is true when some session holds the run lock of run_id r.run_id.
const heldSQL = `EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(current_schema() || '/' || r.run_id, 0))`

var errClosed = errors.New("run writer closed")
