package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/lemmings-dev/lemmings/cluster/gitremote"
	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// WorkerOptions configure a worker.
type WorkerOptions struct {
	DB *pgstore.DB
	// RepoDir is this box's repository cache (a clone of the remote).
	RepoDir string
	Remote  gitremote.Remote
	Config  *config.Config
	// Queues are the queues taken (default: the primary model's).
	Queues []string
	// Slots is how many runs this box advances at once (default 1).
	Slots int
	// Name identifies the box in the store and the logs (default host:pid).
	Name string
	// HealthInterval is how often the local model server is checked (default 2s).
	HealthInterval time.Duration
	// Log receives what the worker does, one line each.
	Log io.Writer
	// HTTPClient is used for the model calls (tests).
	HTTPClient *http.Client
}

// Worker takes runs from the queue and advances them.
type Worker struct {
	o       WorkerOptions
	log     *slog.Logger
	app     *graph.Reader[runstate.State] // the store, for reading runs
	healthy atomic.Bool
	// clientID names this process to River (the jobs it runs) and its
	// lease: the box's name and a nonce, so a box restarted under the same
	// name never makes its dead predecessor's jobs look alive.
	clientID string
	mu       sync.Mutex
	client   *river.Client[pgx.Tx]
}

// NewWorker checks the options and opens the store's reader.
func NewWorker(o WorkerOptions) (*Worker, error) {
	if o.Slots <= 0 {
		o.Slots = 1
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 2 * time.Second
	}
	if o.Name == "" {
		host, _ := os.Hostname()
		o.Name = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if len(o.Queues) == 0 {
		o.Queues = []string{QueueFor(o.Config.Roles[config.RolePrimary].Model)}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	app, err := run.StoreOn(o.DB.Checkpointer())
	if err != nil {
		return nil, err
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	w := &Worker{o: o, app: app, log: slog.New(slog.NewTextHandler(o.Log, nil)).With("worker", o.Name),
		clientID: o.Name + "#" + hex.EncodeToString(nonce[:])}
	w.healthy.Store(true)
	return w, nil
}

// Run works until ctx ends: it takes runs while the local model server
// answers, stops taking them (and hands running ones back at their next
// step boundary) while it does not, and reaps runs nobody holds.
func (w *Worker) Run(ctx context.Context) error {
	// The lease first: a job this worker runs is live only while it holds it.
	lease, err := w.o.DB.TakeLease(ctx, w.clientID)
	if err != nil {
		return err
	}
	defer lease.Close()
	w.log.Info("worker started", "queues", w.o.Queues, "slots", w.o.Slots)
	go w.reapLoop(ctx)
	if err := w.startClient(ctx); err != nil {
		return err
	}
	t := time.NewTicker(w.o.HealthInterval)
	defer t.Stop()
	fails := 0
	for {
		select {
		case <-ctx.Done():
			w.stopClient(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
		}
		if err := lease.Renew(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("worker lease", "err", err)
		}
		if w.modelUp(ctx) {
			fails = 0
			if !w.healthy.Load() {
				w.log.Info("model server answers again: taking runs")
				w.healthy.Store(true)
				if err := w.startClient(ctx); err != nil {
					w.log.Error("restart queue client", "err", err)
				}
			}
			continue
		}
		if fails++; fails == 2 && w.healthy.Load() {
			w.log.Warn("model server does not answer: no new runs, running ones handed back at their next step")
			w.healthy.Store(false)
			go w.stopClient(context.WithoutCancel(ctx))
		}
	}
}

func (w *Worker) startClient(ctx context.Context) error {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, river.WorkFunc(w.work)); err != nil {
		return err
	}
	queues := map[string]river.QueueConfig{}
	for _, q := range w.o.Queues {
		queues[q] = river.QueueConfig{MaxWorkers: w.o.Slots}
	}
	client, err := river.NewClient(riverpgxv5.New(w.o.DB.Pool()), &river.Config{
		Schema: w.o.DB.Schema(), Queues: queues, Workers: workers, ID: w.clientID,
		JobTimeout: -1, // a run takes as long as it takes; its lock says who works on it
		// River's own rescue is a last resort behind the reaper (which
		// acts on the run lock, in seconds): only for jobs stuck a day.
		RescueStuckJobsAfter: 24 * time.Hour,
		RetryPolicy:          retryPolicy{}, MaxAttempts: maxAttempts,
		FetchPollInterval: 200 * time.Millisecond, FetchCooldown: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(w.o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	w.mu.Lock()
	w.client = client
	w.mu.Unlock()
	return nil
}

func (w *Worker) stopClient(ctx context.Context) {
	w.mu.Lock()
	client := w.client
	w.client = nil
	w.mu.Unlock()
	if client != nil {
		_ = client.Stop(ctx)
	}
}

// modelUp asks the local Ollama for its version.
func (w *Worker) modelUp(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.o.Config.Ollama.Host+"/api/version", nil)
	if err != nil {
		return false
	}
	hc := w.o.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// snoozeHeld is how long a job for a run someone holds waits before it
// looks again.
const snoozeHeld = 3 * time.Second

// work advances one run as far as it goes on this box.
func (w *Worker) work(ctx context.Context, job *river.Job[RunArgs]) error {
	id := job.Args.RunID
	log := w.log.With("run", id, "job", job.ID)
	sub, err := w.o.DB.Submission(ctx, id)
	if err != nil {
		return river.JobCancel(err) // not ours to run: nothing will make it so
	}
	if halt, err := w.o.DB.HaltRequested(ctx, id); err != nil {
		return err
	} else if halt {
		log.Info("halt requested: not taken")
		return nil
	}
	snap, err := w.app.State(ctx, id)
	fresh := errors.Is(err, graph.ErrRunNotFound)
	switch {
	case err != nil && !fresh:
		return err
	case !fresh && snap.Status == graph.StatusDone:
		return nil // a duplicated or rescued job of a finished run
	case !fresh && snap.Status == graph.StatusPaused && job.Args.Decision == nil:
		return nil // waits for a decision (resume --approve --submit)
	}
	if pid, err := w.o.DB.HolderPID(ctx, id); err != nil {
		return err
	} else if pid != 0 {
		return river.JobSnooze(snoozeHeld) // a live holder: a duplicate job
	}
	head := sub.Base
	if !fresh {
		head = snap.Metadata[run.MetaGitHead]
	}
	if head != "" {
		if err := w.o.Remote.Checkout(ctx, w.o.RepoDir, id, head, !fresh); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tr := &transport{w: w, runID: id, step: -1, cancel: cancel}
	if !fresh {
		tr.step, tr.pushed = snap.Step, head
	} else {
		tr.pushed = sub.Base
	}
	opts := run.Options{RepoDir: w.o.RepoDir, Remit: sub.Remit, RunID: id, Config: w.o.Config,
		Approve: sub.Approve, Decision: job.Args.Decision, Choices: sub.Choices, BaseCommit: sub.Base,
		Sinks: []graph.Sink{tr, &eventSink{db: w.o.DB, runID: id}}, Warn: w.o.Log, HTTPClient: w.o.HTTPClient,
		Backend: &run.Backend{Checkpointer: tr, Halted: tr.halted, BeforeCheckpoint: tr.beforeCheckpoint}}
	log.Info("taking run", "from_step", tr.step, "head", short(head), "attempt", job.Attempt)
	var res run.Result
	if fresh {
		w.forgetLocal(ctx, id) // left by an attempt that died before its first checkpoint
		res, err = run.Start(ctx, opts)
	} else {
		res, err = run.Resume(ctx, opts)
	}
	tr.stopWatch()
	w.uploadFiles(context.WithoutCancel(ctx), id, res.RunDir)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		log.Warn("run stopped", "cause", cause)
		return cause
	}
	switch {
	case errors.Is(err, graph.ErrRunLocked):
		return river.JobSnooze(snoozeHeld)
	case errors.Is(err, graph.ErrHalted):
		log.Info("run halted", "status", res.Status)
		return nil // the reaper re-enqueues a hand-back; a halt request keeps it
	case errors.Is(err, graph.ErrPaused):
		log.Info("run paused", "status", res.Status)
		return nil
	case err != nil:
		log.Warn("run failed", "err", err)
		return err // River retries it with backoff
	}
	log.Info("run finished", "status", res.Status)
	if n, err := pruneOrphanRefs(context.WithoutCancel(ctx), w.app, w.o.Remote, w.o.RepoDir, id); err != nil {
		log.Warn("prune step refs", "err", err)
	} else if n > 0 {
		log.Info("pruned step refs no checkpoint names", "count", n)
	}
	return nil
}

// forgetLocal removes this box's worktree and branch of a run that has no
// checkpoint: they hold nothing a checkpoint names.
func (w *Worker) forgetLocal(ctx context.Context, runID string) {
	repo, err := workspace.OpenRepo(ctx, w.o.RepoDir)
	if err != nil {
		return
	}
	_ = repo.RemoveWorktree(ctx, runID)
	_ = repo.DeleteBranch(ctx, runID)
}

// uploadFiles stores the run's report and board for other machines.
func (w *Worker) uploadFiles(ctx context.Context, runID, runDir string) {
	if runDir == "" {
		return
	}
	for _, name := range []string{"report.md", "board.md"} {
		data, err := os.ReadFile(filepath.Join(runDir, name))
		if err != nil {
			continue
		}
		if err := w.o.DB.PutFile(ctx, runID, name, []byte(llm.Redact(string(data)))); err != nil {
			w.log.Warn("upload run file", "run", runID, "file", name, "err", err)
		}
	}
}

func short(sha string) string { return sha[:min(len(sha), 10)] }

// eventSink stores the run's events (secrets redacted) and notifies live
// views. An event lost to a database hiccup is a lost log line, never a
// lost step: checkpoints are the truth.
type eventSink struct {
	db    *pgstore.DB
	runID string
}

func (s *eventSink) Handle(ev graph.Event) {
	ev.Error = llm.Redact(ev.Error)
	ev.Reason = llm.Redact(ev.Reason)
	if len(ev.Data) > 0 {
		ev.Data = llm.RedactJSON(ev.Data)
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.db.AppendEvent(ctx, s.runID, line)
}

// transport is one job's view of its run: the checkpointer (recording the
// incarnation its writer got), the step counter, the push before each
// checkpoint, the halt check and the watch on the lock's session.
type transport struct {
	w      *Worker
	runID  string
	cancel context.CancelCauseFunc

	mu          sync.Mutex
	incarnation int
	step        int    // the last stored step
	pushed      string // the last commit on the remote
	writer      *pgstore.Writer
	watchStop   chan struct{}
}

// Open implements graph.Checkpointer: it records the writer and starts
// watching its session.
func (t *transport) Open(ctx context.Context, runID string, create bool) (graph.RunWriter, error) {
	cp := t.w.o.DB.Checkpointer()
	cp.Holder = t.w.o.Name
	wr, err := cp.OpenWriter(ctx, runID, create)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.writer, t.incarnation = wr, wr.Incarnation()
	t.watchStop = make(chan struct{})
	stop := t.watchStop
	t.mu.Unlock()
	go t.watch(wr.PID(), stop)
	return watchedWriter{wr, t}, nil
}

// watchedWriter stops the watch on its session before it lets the run go:
// released, the lock has no holder, which the watch would take for a lost
// hold and stop the job of a run that just finished (its orphan step refs
// then never pruned).
type watchedWriter struct {
	*pgstore.Writer
	t *transport
}

func (w watchedWriter) Close() error {
	w.t.stopWatch()
	return w.Writer.Close()
}

func (t *transport) Tail(ctx context.Context, id string) ([]graph.Record, error) {
	return t.w.o.DB.Checkpointer().Tail(ctx, id)
}
func (t *transport) Records(ctx context.Context, id string) ([]graph.Record, error) {
	return t.w.o.DB.Checkpointer().Records(ctx, id)
}
func (t *transport) Runs(ctx context.Context) ([]graph.StoredRun, error) {
	return t.w.o.DB.Checkpointer().Runs(ctx)
}
func (t *transport) Delete(ctx context.Context, id string) error {
	return t.w.o.DB.Checkpointer().Delete(ctx, id)
}

// watch cancels the job when the session holding the run's lock is gone
// (terminated by the server, or the database unreachable): another worker
// may hold the run now, so this one stops its model work at once.
func (t *transport) watch(pid int, stop chan struct{}) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	misses := 0
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		holder, err := t.w.o.DB.HolderPID(ctx, t.runID)
		cancel()
		switch {
		case err != nil:
			misses++ // the database unreachable: we cannot show we hold the run
		case holder != pid:
			misses = 3
		default:
			misses = 0
		}
		if misses >= 3 {
			select {
			case <-stop:
				return // the run let go of its lock itself (watchedWriter.Close)
			default:
			}
			cause := fmt.Errorf("run %s: this worker's hold on the run ended (session %d gone): stopped", t.runID, pid)
			t.w.log.Warn("hold on the run lost: its model work stops now", "run", t.runID, "session", pid, "db_err", err)
			t.cancel(cause)
			return
		}
	}
}

func (t *transport) stopWatch() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.watchStop != nil {
		close(t.watchStop)
		t.watchStop = nil
	}
}

// Handle implements graph.Sink: it follows the stored step.
func (t *transport) Handle(ev graph.Event) {
	if ev.Kind == graph.EventCheckpoint {
		t.mu.Lock()
		t.step = ev.Step
		t.mu.Unlock()
	}
}

// halted stops the run before its next step on a halt request, or when
// this box's model server stopped answering (the run is handed back).
func (t *transport) halted(runID string) bool {
	if !t.w.healthy.Load() {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	halt, err := t.w.o.DB.HaltRequested(ctx, runID)
	return err == nil && halt
}

// beforeCheckpoint pushes the step's commits and names them.
func (t *transport) beforeCheckpoint(ctx context.Context, wt *workspace.Worktree, head string) (map[string]string, error) {
	t.mu.Lock()
	step, inc, pushed := t.step+1, t.incarnation, t.pushed
	t.mu.Unlock()
	if head == pushed {
		return nil, nil // nothing new: the commit is on the remote already
	}
	ref, err := t.w.o.Remote.PushStep(ctx, wt.Dir(), t.runID, inc, step, head)
	if err != nil {
		return nil, fmt.Errorf("step %d of run %s not checkpointed: %w", step, t.runID, err)
	}
	t.mu.Lock()
	t.pushed = head
	t.mu.Unlock()
	t.w.uploadFiles(ctx, t.runID, filepath.Join(wt.Repo().Root(), run.DataDir, run.RunsDir, t.runID))
	return map[string]string{"git_ref": ref}, nil
}
