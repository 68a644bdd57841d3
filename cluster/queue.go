// Package cluster runs lemmings on several machines against one PostgreSQL
// database and one git remote (docs/distributed.md): Submit enqueues a run on
// a River queue named after its model; a Worker on each box takes runs from
// the queues its Ollama serves and advances them through the same graph as a
// local run (package run), holding each by its lock in the store; a reaper in
// every worker re-enqueues runs that are not done and that nobody holds.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/runstate"
)

// RunArgs is the job that advances one run: start it, take it over, or
// resume it with a decision.
type RunArgs struct {
	RunID string `json:"run_id"`
	// Decision answers a pause (resume --approve/--reject --submit).
	Decision *runstate.Approval `json:"decision,omitempty"`
}

// Kind implements river.JobArgs.
func (RunArgs) Kind() string { return "lemmings_run" }

// QueueFor names the queue of runs whose primary model is model: a box
// takes only the queues of the models its Ollama serves.
func QueueFor(model string) string {
	var b strings.Builder
	b.WriteString("model_")
	for _, r := range strings.ToLower(model) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	q := b.String()
	if len(q) > 128 {
		q = q[:128]
	}
	return q
}

// Open opens (and migrates, once, under a lock) the lemmings and River
// tables of the database at dsn.
func Open(ctx context.Context, dsn string) (*pgstore.DB, error) {
	return pgstore.Open(ctx, dsn, pgstore.Options{MaxConns: 16, Migrate: func(ctx context.Context, db *pgstore.DB) error {
		m, err := rivermigrate.New(riverpgxv5.New(db.Pool()), &rivermigrate.Config{Schema: db.Schema()})
		if err != nil {
			return err
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("queue tables: %w", err)
		}
		return nil
	}})
}

// insertOnly is a River client that inserts jobs and works none.
func insertOnly(db *pgstore.DB) (*river.Client[pgx.Tx], error) {
	return river.NewClient(riverpgxv5.New(db.Pool()), &river.Config{Schema: db.Schema()})
}

// Submit records the run and enqueues its first job, in one transaction.
func Submit(ctx context.Context, db *pgstore.DB, s pgstore.Submission) error {
	client, err := insertOnly(db)
	if err != nil {
		return err
	}
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := pgstore.Submit(ctx, tx, s); err != nil {
		return err
	}
	if _, err := client.InsertTx(ctx, tx, RunArgs{RunID: s.RunID}, &river.InsertOpts{Queue: s.Queue, MaxAttempts: maxAttempts}); err != nil {
		return fmt.Errorf("enqueue run %s: %w", s.RunID, err)
	}
	return tx.Commit(ctx)
}

// Enqueue asks a worker to go on with a submitted run (resume --submit),
// clearing a halt request; decision answers a pause.
func Enqueue(ctx context.Context, db *pgstore.DB, runID string, decision *runstate.Approval) error {
	sub, err := db.Submission(ctx, runID)
	if err != nil {
		return err
	}
	client, err := insertOnly(db)
	if err != nil {
		return err
	}
	if err := db.SetHalt(ctx, runID, false); err != nil {
		return err
	}
	_, err = client.Insert(ctx, RunArgs{RunID: runID, Decision: decision}, &river.InsertOpts{Queue: sub.Queue, MaxAttempts: maxAttempts})
	return err
}

// maxAttempts bounds River's retries of one job (a failing step, a refused
// push): after them the run stays failed until someone resumes it.
const maxAttempts = 8

// retryPolicy waits 1s, 2s, 4s … 30s between attempts of a failed job
// (River's default grows as attempt⁴ seconds: minutes after a few).
type retryPolicy struct{}

func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	d := time.Second << min(job.Attempt-1, 5)
	return time.Now().Add(min(d, 30*time.Second))
}

// liveJobs counts the jobs of a run that will run, or are running on a
// worker that is alive (holds its lease). A job whose worker died is not
// live: the reaper gives its run to another worker at once.
func liveJobs(ctx context.Context, db *pgstore.DB, runID string) (int, error) {
	var n int
	err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'lemmings_run' AND args->>'run_id' = $1
		AND (state IN ('available', 'pending', 'scheduled', 'retryable')
			OR (state = 'running' AND `+pgstore.WorkerHeldSQL("attempted_by[cardinality(attempted_by)]")+`))`,
		runID).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
