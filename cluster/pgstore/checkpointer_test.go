package pgstore_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/graph/graphtest"
	"github.com/lemmings-dev/lemmings/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

func openDB(t *testing.T) *pgstore.DB {
	t.Helper()
	db, err := pgstore.Open(context.Background(), pgtest.New(t), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func TestCheckpointerSuite(t *testing.T) {
	graphtest.RunCheckpointerSuite(t, func(t *testing.T) graph.Checkpointer {
		return openDB(t).Checkpointer()
	})
}

// A writer whose session the server ended (what TCP keepalives do to a box
// that vanished) can append nothing more, and another process takes the run.
func TestWriterFencedWhenItsSessionEnds(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	cp := db.Checkpointer()
	w, err := cp.OpenWriter(ctx, "f", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(ctx, graph.Record{Kind: graph.RecordSnapshot, Data: []byte("s0")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	var w2 *pgstore.Writer
	for range 100 { // the server frees the lock as the backend exits
		if w2, err = cp.OpenWriter(ctx, "f", false); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("second writer after the first was terminated: %v", err)
	}
	defer w2.Close()
	if w2.Incarnation() != w.Incarnation()+1 {
		t.Errorf("incarnation %d after %d", w2.Incarnation(), w.Incarnation())
	}
	if err := w.Append(ctx, graph.Record{Kind: graph.RecordDelta, Step: 1, Data: []byte("stale")}); err == nil {
		t.Fatal("the fenced writer appended")
	}
	recs, err := cp.Records(ctx, "f")
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %+v, %v; want the one snapshot", recs, err)
	}
}

// Processes opening an empty database at once all succeed (migrations run
// one after the other under an advisory lock).
func TestConcurrentOpenOfAnEmptyDatabase(t *testing.T) {
	dsn := pgtest.New(t)
	dsn = strings.Replace(dsn, "search_path=", "search_path=fresh_", 1) // a schema nobody made yet
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t.Cleanup(func() { db.Pool().Exec(context.Background(), "DROP SCHEMA "+db.Schema()+" CASCADE") })
	if _, err := db.Pool().Exec(context.Background(), "SELECT 1 FROM lemmings_records"); err != nil {
		t.Fatal(err)
	}
}
