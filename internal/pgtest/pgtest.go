// Package pgtest starts a real PostgreSQL server for the tests of one test
// binary (cluster/pglocal: initdb and postgres as children, never pg_ctl,
// with fsync off) and gives each test a schema of its own. Call Stop from
// TestMain to remove it.
//
// LEMMINGS_TEST_POSTGRES=0 skips every test that needs the server; =1, or CI
// set, makes missing binaries fail the test instead of skipping it.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lemmings-dev/lemmings/cluster/pglocal"
)

// EnvRequire names the variable that requires ("1") or skips ("0") the server.
const EnvRequire = "LEMMINGS_TEST_POSTGRES"

var (
	once    sync.Once
	shared  *pglocal.Server
	initErr error
	schemas atomic.Int64
)

// New returns a DSN for a fresh schema of the shared server (search_path set
// to it), starting the server on first use. The schema is dropped when the
// test ends.
func New(t testing.TB) string {
	t.Helper()
	s := Shared(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), schemas.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.DSN(""))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, s.DSN(""))
		if err != nil {
			return // the server is gone (a test stopped it): nothing to drop
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
	})
	return s.DSN(name)
}

// Shared returns the server of this test binary, starting it on first use.
// Missing binaries skip the test, or fail it under CI or EnvRequire=1.
func Shared(t testing.TB) *pglocal.Server {
	t.Helper()
	if os.Getenv(EnvRequire) == "0" {
		t.Skipf("%s=0: tests that need PostgreSQL are skipped", EnvRequire)
	}
	bin, err := pglocal.FindBin()
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: %v (%s)", err, pglocal.Hint)
		}
		t.Skipf("pgtest: %v", err)
	}
	once.Do(func() { shared, initErr = pglocal.Start(pglocal.Options{Bin: bin, Fast: true}) })
	if initErr != nil {
		t.Fatalf("pgtest: %v", initErr)
	}
	return shared
}

// Stop stops the shared server, if one was started, and removes its files.
func Stop() {
	if shared != nil {
		shared.Close()
	}
}
