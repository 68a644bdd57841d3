// Package clusterdemo is lemmings demo --cluster: the distributed mode on
// one machine, as a user would try it. It starts a local PostgreSQL server,
// a bare git remote and two workers (child processes running the lemmings
// binary, each with its own repository cache, as two GPU boxes would),
// submits the demo remit, SIGKILLs the worker holding the run in the middle
// of a step and shows the other one finishing it, then removes everything
// it started. The models are the demo's scripted server; everything else
// is real.
package clusterdemo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/cluster"
	"github.com/lemmings-dev/lemmings/cluster/gitremote"
	"github.com/lemmings-dev/lemmings/cluster/pglocal"
	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
)

// Options tune the demo.
type Options struct {
	// Exe is the lemmings binary the workers run (os.Executable for the CLI).
	Exe string
	// Out receives the story, one line per thing that happens.
	Out io.Writer
	// Script is the scripted model (nil: the demo's, with latencies that
	// leave time to kill a worker inside a model call).
	Script *demo.Script
	// Timeout bounds the whole demo (default 5 minutes).
	Timeout time.Duration
}

// Result is what happened.
type Result struct {
	RunID            string
	Status           graph.Status
	Victim, Survivor string
	KilledAtStep     int // the step in flight when the victim was killed
	// Takeover is the time from the SIGKILL to the next step the survivor stored.
	Takeover time.Duration
	Tasks    int
	// Commits are the run branch's commits on the remote, oldest first ("sha subject").
	Commits []string
	// PostgresPID and Dir name what was started and removed (tests check it is gone).
	PostgresPID int
	Dir         string
	WorkerPIDs  []int
}

// ErrNoPostgres: the machine has no PostgreSQL server programs.
var ErrNoPostgres = errors.New("lemmings demo --cluster starts a local PostgreSQL server, and its programs (initdb, postgres) are not installed")

const schema = "lemmings_demo"

// findPostgres finds the server programs (a variable: the test of the
// error a machine without them gets replaces it).
var findPostgres = pglocal.FindBin

// Run runs the demo; everything it started is stopped and removed when it
// returns, whatever happened.
func Run(ctx context.Context, o Options) (res Result, err error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Script == nil {
		o.Script = &demo.Script{LocalLatency: 40 * time.Millisecond, ImplementorLatency: 500 * time.Millisecond}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	bin, err := findPostgres()
	if err != nil {
		return res, fmt.Errorf("%w: %v. Install them (Debian, Ubuntu: %s) and try again", ErrNoPostgres, err, pglocal.Hint)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	s := &story{out: o.Out, start: time.Now()}

	root, err := os.MkdirTemp("", "lemmings-cluster-demo-")
	if err != nil {
		return res, err
	}
	res.Dir = root
	defer func() {
		os.RemoveAll(root)
		s.say("removed %s (repositories, remote, worker caches)", root)
	}()

	s.say("starting PostgreSQL (%s)", bin)
	pg, err := pglocal.Start(pglocal.Options{Bin: bin, Fast: true})
	if err != nil {
		return res, err
	}
	res.PostgresPID = pg.PID()
	defer func() {
		pg.Close()
		s.say("PostgreSQL stopped (pid %d) and its data removed", res.PostgresPID)
	}()
	as := "this user"
	if os.Geteuid() == 0 {
		as = "the postgres user (initdb refuses root)"
	}
	s.say("PostgreSQL started: 127.0.0.1:%d, pid %d, run as %s, data in %s", pg.Port(), res.PostgresPID, as, pg.Dir())
	dsn := pg.DSN(schema)

	origin, remote := filepath.Join(root, "laptop"), filepath.Join(root, "remote.git")
	if err := demo.PrepareRepo(ctx, origin); err != nil {
		return res, err
	}
	if out, err := gitsafe.Command(ctx, root, "clone", "--quiet", "--bare", origin, remote).CombinedOutput(); err != nil {
		return res, fmt.Errorf("git clone --bare: %v: %s", err, out)
	}
	s.say("the sample repository (your checkout): %s; the shared remote: %s", origin, remote)

	srv := demo.NewServer(o.Script)
	defer srv.Close()
	s.say("the scripted model server (both boxes' Ollama): %s", srv.URL())

	db, err := cluster.Open(ctx, dsn)
	if err != nil {
		return res, err
	}
	defer db.Close()

	var boxes []*worker
	defer func() {
		for _, w := range boxes {
			w.stop()
		}
		if len(boxes) > 0 {
			s.say("workers stopped")
		}
	}()
	for _, name := range []string{"box-a", "box-b"} {
		w, err := startWorker(o.Exe, root, name, workerConfig(srv.URL(), dsn, remote))
		if err != nil {
			return res, err
		}
		boxes = append(boxes, w)
		res.WorkerPIDs = append(res.WorkerPIDs, w.pid())
		s.say("%s: lemmings worker -C %s --name %s (pid %d, log %s)", name, w.cache, name, w.pid(), w.logPath)
	}
	for _, w := range boxes {
		if err := w.waitStarted(ctx); err != nil {
			return res, err
		}
	}

	id, base, err := submit(ctx, db, origin, remote)
	if err != nil {
		return res, err
	}
	res.RunID = id
	s.say("submitted run %s (lemmings run --submit %q): pushed %s to the remote, one job on queue %s",
		id, demo.Remit, base[:10], cluster.QueueFor(demo.PrimaryModel))

	err = s.follow(ctx, db, id, boxes, &res)
	if err != nil {
		return res, err
	}
	res.Commits = branchCommits(ctx, remote, id, base)
	s.say("the branch lemmings/%s on the remote:", id)
	for _, c := range res.Commits {
		fmt.Fprintf(s.out, "           %s\n", c)
	}
	return res, nil
}

// story prints what happens with the time since the start.
type story struct {
	out   io.Writer
	start time.Time
}

func (s *story) say(format string, args ...any) {
	fmt.Fprintf(s.out, "[%6.1fs] %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
}

// follow prints every step as it is stored and who stored it, kills the
// holder once the first task is done and the next implementor step has
// begun, and waits for the run to end.
func (s *story) follow(ctx context.Context, db *pgstore.DB, id string, boxes []*worker, res *Result) error {
	app, err := run.StoreOn(db.Checkpointer())
	if err != nil {
		return err
	}
	printed := -1
	holder, inc := "", 0
	var killedAt time.Time
	var victim *worker
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("run %s did not finish in time: %w", id, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		var h string
		var i int
		_ = db.Pool().QueryRow(ctx, "SELECT holder, incarnation FROM lemmings_runs WHERE run_id = $1", id).Scan(&h, &i)
		if i != inc && h != "" {
			if victim != nil && h != victim.name {
				s.say("%s took the run over (incarnation %d): it fetched the commit of the last checkpoint from the remote, reset its work tree to it and re-runs the cut step", h, i)
			} else {
				s.say("%s took the run (incarnation %d)", h, i)
			}
			holder, inc = h, i
		}
		snap, err := app.State(ctx, id)
		if errors.Is(err, graph.ErrRunNotFound) {
			continue // not started yet
		}
		if err != nil {
			return err
		}
		if snap.Step > printed {
			hist, err := app.History(ctx, id)
			if err != nil {
				return err
			}
			for _, c := range hist {
				if c.Step <= printed {
					continue
				}
				printed = c.Step
				s.say("  step %3d  %-6s %-16s %s", c.Step, holder, strings.Join(c.Nodes, ","), stepNote(c))
				if victim != nil && res.Takeover == 0 && holder != victim.name {
					res.Takeover = time.Since(killedAt)
					s.say("%s stored step %d %.1fs after the SIGKILL", holder, c.Step, res.Takeover.Seconds())
				}
			}
		}
		switch snap.Status {
		case graph.StatusDone:
			res.Status, res.Tasks = snap.Status, snap.State.TasksCompleted
			s.say("run %s: done — %d tasks done, %d failed; %s was killed in the middle of step %d, %s finished it",
				id, snap.State.TasksCompleted, snap.State.TasksFailed, res.Victim, res.KilledAtStep, res.Survivor)
			return nil
		case graph.StatusFailed:
			return fmt.Errorf("run %s failed: %s", id, snap.Error)
		}
		if victim == nil && snap.State.TasksCompleted >= 1 && slices.Contains(snap.Next, runstate.NodeImplementor) {
			for _, w := range boxes {
				if w.name == holder {
					victim = w
				}
			}
			if victim == nil {
				continue
			}
			time.Sleep(300 * time.Millisecond) // inside the implementor's model call
			killedAt = time.Now()
			// The step in flight, as every line of the demo names it (the last stored is printed).
			res.Victim, res.KilledAtStep = victim.name, printed+1
			victim.kill()
			s.say("SIGKILL %s (pid %d) in the middle of step %d (implementor of the next task): its database session ends and the run's lock is free",
				victim.name, victim.pid(), res.KilledAtStep)
			for _, w := range boxes {
				if w != victim {
					res.Survivor = w.name
				}
			}
		}
	}
}

// stepNote says what a stored step did: the task, or a pushed commit.
func stepNote(c graph.CheckpointInfo) string {
	if ref := c.Metadata["git_ref"]; ref != "" && gitremote.StepOf(ref) == c.Step {
		return "pushed " + short(c.Metadata[run.MetaGitHead]) + " to " + ref
	}
	return ""
}

func short(sha string) string { return sha[:min(len(sha), 10)] }

// workerConfig is a box's configuration: every role on the scripted
// server, the store and the remote.
func workerConfig(modelURL, dsn, remote string) string {
	return fmt.Sprintf(`ollama:
  host: %[1]s
roles:
  primary: {model: %[2]s, edit_protocol: json}
  summarizer: {model: %[3]s}
  embedding: {model: %[4]s}
supervisors:
  enabled: false
retry:
  initial_backoff: 10ms
limits:
  fix_rounds: 0
store: %[5]s
cluster:
  remote: %[6]s
  reap_interval: 500ms
`, modelURL, demo.PrimaryModel, demo.SummarizerModel, demo.EmbeddingModel, dsn, remote)
}

// submit does what lemmings run --submit does in the checkout at origin.
func submit(ctx context.Context, db *pgstore.DB, origin, remote string) (id, base string, err error) {
	out, err := gitsafe.Command(ctx, origin, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", "", fmt.Errorf("git rev-parse HEAD: %w", err)
	}
	base = strings.TrimSpace(string(out))
	id = run.NewRunID()
	if err := (gitremote.Remote{URL: remote}).PushBase(ctx, origin, id, base); err != nil {
		return "", "", err
	}
	return id, base, cluster.Submit(ctx, db, pgstore.Submission{RunID: id, Remit: demo.Remit, Base: base, Queue: cluster.QueueFor(demo.PrimaryModel)})
}

// branchCommits lists the run branch on the remote, oldest first.
func branchCommits(ctx context.Context, remote, id, base string) []string {
	out, err := gitsafe.Command(ctx, remote, "log", "--reverse", "--format=%h %s", base+".."+gitremote.Branch(id)).Output()
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
