// Package clustertest runs lemmings workers — the real binary, built once
// per test binary — against a real PostgreSQL server (internal/pgtest, one
// schema per test), real bare git remotes, and the demo's scripted model
// server, and breaks things: SIGKILL, terminated sessions, a restarted
// database, a remote refusing pushes, a model server going down.
package clustertest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/cluster"
	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/buildtest"
	"github.com/lemmings-dev/lemmings/internal/pgtest"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	buildtest.RemoveAll()
	os.Exit(code)
}

// lemmingsBin builds cmd/lemmings once per test binary.
func lemmingsBin(t testing.TB) string {
	t.Helper()
	return buildtest.Binary(t, "github.com/lemmings-dev/lemmings/cmd/lemmings")
}

// env is one test's cluster: a schema, a bare remote, the submitter's
// repository, and a configuration per box.
type env struct {
	t      testing.TB
	dsn    string
	dir    string
	origin string // the submitter's repository
	remote string // the bare shared remote
	db     *pgstore.DB
	// extraYAML is appended to every box's configuration (the benchmark's cheap gate).
	extraYAML string
	// retention is cluster.events_retention ("": the default).
	retention string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, pgtest.New(t))
}

// newEnvOn is newEnv on the database at dsn.
func newEnvOn(t testing.TB, dsn string) *env {
	t.Helper()
	e := &env{t: t, dsn: dsn, dir: t.TempDir()}
	e.origin = filepath.Join(e.dir, "origin")
	e.remote = filepath.Join(e.dir, "remote.git")
	if err := demo.PrepareRepo(context.Background(), e.origin); err != nil {
		t.Fatal(err)
	}
	gitRun(t, e.dir, "clone", "--quiet", "--bare", e.origin, e.remote)
	return e
}

// openDB opens the store from the test (after the workers made it, or first).
func (e *env) openDB() *pgstore.DB {
	e.t.Helper()
	if e.db == nil {
		db, err := cluster.Open(context.Background(), e.dsn)
		if err != nil {
			e.t.Fatal(err)
		}
		e.db = db
		e.t.Cleanup(db.Close)
	}
	return e.db
}

func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// configYAML points every role of a box at its scripted model server.
func (e *env) configYAML(modelURL string) string {
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
  reap_interval: 300ms
  events_retention: %[7]s
`, modelURL, demo.PrimaryModel, demo.SummarizerModel, demo.EmbeddingModel, e.dsn, e.remote, cmp.Or(e.retention, "720h")) + e.extraYAML
}

// box is one machine's process: its config home and, for a worker, its
// repository cache and log.
type box struct {
	e      *env
	name   string
	home   string
	cache  string
	cmd    *exec.Cmd
	wrap   []string // runs the worker through this command (ip netns exec ns)
	log    *bytes.Buffer
	mu     *sync.Mutex
	exited chan struct{}
}

func (e *env) newBox(name, modelURL string) *box {
	e.t.Helper()
	b := &box{e: e, name: name, home: filepath.Join(e.dir, name+"-home"), cache: filepath.Join(e.dir, name), log: &bytes.Buffer{}, mu: &sync.Mutex{}}
	if err := os.MkdirAll(filepath.Join(b.home, "lemmings"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.home, "lemmings", "config.yaml"), []byte(e.configYAML(modelURL)), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (b *box) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LEMMINGS_") || strings.HasPrefix(kv, "OLLAMA_") || strings.HasPrefix(kv, "OPENROUTER_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "XDG_CONFIG_HOME="+b.home)
}

// lemmings runs one command of the binary in dir and returns its stdout.
func (b *box) lemmings(dir string, args ...string) string {
	b.e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lemmingsBin(b.e.t), args...)
	cmd.Dir, cmd.Env = dir, b.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.e.t.Fatalf("lemmings %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

type syncWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (s syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// startWorker starts `lemmings worker` in the box's cache (cloned by the
// worker from the remote) in a process group of its own.
func (b *box) startWorker(extra ...string) {
	b.e.t.Helper()
	if err := os.MkdirAll(b.cache, 0o755); err != nil {
		b.e.t.Fatal(err)
	}
	args := append([]string{"worker", "--name", b.name, "--health-interval", "200ms"}, extra...)
	argv := append(append(slices.Clone(b.wrap), lemmingsBin(b.e.t)), args...)
	b.cmd = exec.Command(argv[0], argv[1:]...)
	b.cmd.Dir, b.cmd.Env = b.cache, b.environ()
	w := syncWriter{b.mu, b.log}
	b.cmd.Stdout, b.cmd.Stderr = w, w
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := b.cmd.Start(); err != nil {
		b.e.t.Fatal(err)
	}
	b.exited = make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(b.exited) }()
	b.e.t.Cleanup(func() {
		b.kill(syscall.SIGKILL)
		if b.e.t.Failed() {
			b.e.t.Logf("worker %s log:\n%s", b.name, b.logText())
		}
	})
}

func (b *box) kill(sig syscall.Signal) {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, sig)
	select {
	case <-b.exited:
	case <-time.After(20 * time.Second):
	}
}

func (b *box) logText() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

// submit submits the demo remit from the origin repository; it returns the run id.
func (e *env) submit(b *box) string {
	e.t.Helper()
	out := b.lemmings(e.origin, "run", "--submit", "--json", demo.Remit)
	i := strings.Index(out, `"run_id":"`)
	if i < 0 {
		e.t.Fatalf("no run id in %q", out)
	}
	id := out[i+len(`"run_id":"`):]
	return id[:strings.IndexByte(id, '"')]
}

// state reads the run's last checkpoint.
func (e *env) state(id string) (graph.Snapshot[runstate.State], error) {
	app, err := run.StoreOn(e.openDB().Checkpointer())
	if err != nil {
		e.t.Fatal(err)
	}
	return app.State(context.Background(), id)
}

// waitFor polls cond every 20ms until it holds or d passes.
func (e *env) waitFor(d time.Duration, what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holder names the worker that opened the run last.
func (e *env) holder(id string) (string, int) {
	var h string
	var inc int
	_ = e.openDB().Pool().QueryRow(context.Background(), "SELECT holder, incarnation FROM lemmings_runs WHERE run_id = $1", id).Scan(&h, &inc)
	return h, inc
}

// lockSampler samples pg_locks until stopped and records the most
// sessions that held one run's lock at once.
type lockSampler struct {
	stop    chan struct{}
	done    chan struct{}
	most    int
	samples int
}

func (e *env) sampleLocks() *lockSampler {
	s := &lockSampler{stop: make(chan struct{}), done: make(chan struct{})}
	db := e.openDB()
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(25 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			held, err := db.RunLockHolders(ctx)
			cancel()
			if err != nil {
				continue // the server restarting
			}
			s.samples++
			for _, n := range held {
				s.most = max(s.most, n)
			}
		}
	}()
	return s
}

func (s *lockSampler) finish() (most, samples int) {
	close(s.stop)
	<-s.done
	return s.most, s.samples
}

// taskTrailers lists the Lemmings-Task trailers of the run branch on the
// remote, one per task commit.
func (e *env) taskTrailers(id, base string) []string {
	out := gitRun(e.t, e.remote, "log", "--format=%(trailers:key=Lemmings-Task,valueonly)", base+"..refs/heads/lemmings/"+id)
	var ts []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ts = append(ts, l)
		}
	}
	return ts
}

func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func itoa(n int64) string { return fmt.Sprint(n) }
