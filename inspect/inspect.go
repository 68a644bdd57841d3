// Package inspect reads a repository's runs the way the CLI (status, runs,
// log, report, directives) and lemmings serve both show them: checkpoints,
// event log, report and the request files a running run picks up. Every read
// is safe while a run writes: checkpoints tolerate a torn tail, the event log
// is read up to its last complete line, files the run rewrites are replaced
// atomically. Nothing here takes a lock a run waits for, except the brief
// probe that tells whether a run is active (graph.ListRuns).
package inspect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/runview"
)

// ErrNoMatchingRun: runs are stored, but none is what Pick wants.
var ErrNoMatchingRun = errors.New("no matching run (lemmings runs lists them)")

// ErrNoSuchRun is returned when a named run is not stored.
var ErrNoSuchRun = errors.New("no such run")

// ErrNoReport is returned for a run whose report is not written yet.
var ErrNoReport = errors.New("no report yet")

// Store reads the runs of one repository.
type Store struct {
	root string
	app  *graph.Reader[runstate.State]
}

// Open opens the run store of the repository at root.
func Open(root string) (*Store, error) {
	app, err := run.Store(root)
	if err != nil {
		return nil, err
	}
	return &Store{root: root, app: app}, nil
}

// Root is the repository the store belongs to.
func (s *Store) Root() string { return s.root }

// Reader reads the store's runs (History, StateAt) without the workflow.
func (s *Store) Reader() *graph.Reader[runstate.State] { return s.app }

// Run is one stored run with its last state; Err says why the state could
// not be read (a damaged run), and then State is the zero value.
type Run struct {
	graph.RunInfo
	State runstate.State
	Err   error
}

// Damaged is the status of a run whose checkpoints cannot be read.
const Damaged = "damaged"

// DisplayStatus is the run's status in the one vocabulary every command and
// page uses (runstate.RunStatus), or "damaged" when it cannot be read.
func (r Run) DisplayStatus() string {
	if r.Err != nil && r.Status == "" {
		return Damaged
	}
	return string(r.Standing().Status)
}

// Standing is the run's status with the reason and the next step that works.
// A run stored as running that no process holds has crashed.
func (r Run) Standing() runstate.Standing {
	s := r.State
	if s.RunID == "" {
		s.RunID = r.ID
	}
	return runstate.StandingOf(runstate.Stored{Status: r.Status, Active: r.Active, Reason: r.Reason, Error: r.Error}, &s)
}

// View is the run as every screen shows it (package runview): its tasks,
// milestones, directives, tokens and cost, and how it stands. A damaged
// run's view is empty but for its id and standing.
func (r Run) View() runview.View {
	s := r.State
	if s.RunID == "" {
		s.RunID = r.ID
	}
	return runview.Of(&s, r.Standing())
}

// List returns every run, most recently updated first, each with its last
// state. A damaged run does not spoil the list: it comes back with Err set
// (saying what to do about it).
func (s *Store) List(ctx context.Context) ([]Run, error) {
	infos, damaged, err := run.Runs(ctx, s.app)
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, len(infos)+len(damaged))
	for _, info := range infos {
		r := Run{RunInfo: info}
		snap, err := s.app.State(ctx, info.ID)
		if err != nil {
			r.Err = damagedErr(info.ID, err)
		} else {
			r.State = snap.State
		}
		out = append(out, r)
	}
	for id, err := range damaged {
		out = append(out, s.damagedRun(id, err))
	}
	sortRecent(out)
	return out, nil
}

// Damaged returns the runs whose checkpoints cannot be read, each with an
// error that says what to do: a command about another run names them as a
// warning and goes on.
func (s *Store) Damaged(ctx context.Context) map[string]error {
	_, damaged, err := run.Runs(ctx, s.app)
	if err != nil || len(damaged) == 0 {
		return nil
	}
	out := make(map[string]error, len(damaged))
	for id, err := range damaged {
		out[id] = damagedErr(id, err)
	}
	return out
}

// DamagedError is a run whose checkpoints cannot be read.
type DamagedError struct {
	ID  string
	Err error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("run %s is damaged (%v): %s", e.ID, e.Err, run.DamagedAdvice(e.ID))
}

func (e *DamagedError) Unwrap() error { return e.Err }

func damagedErr(id string, err error) error {
	if errors.Is(err, graph.ErrRunNotFound) || errors.As(err, new(*DamagedError)) {
		return err
	}
	return &DamagedError{ID: id, Err: err}
}

func (s *Store) damagedRun(id string, err error) Run {
	r := Run{RunInfo: graph.RunInfo{ID: id}, Err: damagedErr(id, err)}
	if fi, serr := os.Stat(RunDir(s.root, id)); serr == nil {
		r.Updated = fi.ModTime()
	}
	return r
}

// Get reads one run; a damaged run comes back with Err set. Active is not
// probed (State does not say); List has it.
func (s *Store) Get(ctx context.Context, id string) Run {
	r := Run{RunInfo: graph.RunInfo{ID: id}}
	snap, err := s.app.State(ctx, id)
	if err != nil {
		if errors.Is(err, graph.ErrRunNotFound) {
			r.Err = err
		} else {
			r = s.damagedRun(id, err)
		}
		return r
	}
	r.State = snap.State
	r.Status, r.Step, r.Created, r.Updated = snap.Status, snap.Step, snap.Created, snap.Updated
	r.Nodes, r.Next, r.Reason, r.Error = snap.Nodes, snap.Next, snap.Reason, snap.Error
	return r
}

// Find returns the named run as List sees it (with Active), or ErrNoSuchRun.
// It reads the state of that run only; a damaged run comes back with Err.
func (s *Store) Find(ctx context.Context, id string) (Run, error) {
	infos, damaged, err := run.Runs(ctx, s.app)
	if err != nil {
		return Run{}, err
	}
	if derr, ok := damaged[id]; ok {
		return s.damagedRun(id, derr), nil
	}
	for _, info := range infos {
		if info.ID != id {
			continue
		}
		r := Run{RunInfo: info}
		if snap, err := s.app.State(ctx, id); err != nil {
			r.Err = damagedErr(id, err)
		} else {
			r.State = snap.State
		}
		return r, nil
	}
	return Run{}, fmt.Errorf("%w %q in %s (lemmings runs lists them)", ErrNoSuchRun, id, s.root)
}

// Snapshot reads a run's last checkpoint; a damaged run's error says what
// to do about it.
func (s *Store) Snapshot(ctx context.Context, id string) (graph.Snapshot[runstate.State], error) {
	snap, err := s.app.State(ctx, id)
	if err != nil {
		return snap, damagedErr(id, err)
	}
	return snap, nil
}

func sortRecent(runs []Run) {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Updated.After(runs[j].Updated) })
}

// Pick returns the run named id (ErrNoSuchRun when it is not stored; a
// damaged run is stored), or with id empty the most recently updated run
// that want accepts (want nil: any), damaged runs left aside.
func (s *Store) Pick(ctx context.Context, id string, want func(graph.RunInfo) bool) (string, error) {
	runs, damaged, err := run.Runs(ctx, s.app)
	if err != nil {
		return "", err
	}
	if id != "" {
		if err := run.CheckRunFiles(s.root, id); err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoSuchRun, err)
		}
		if _, ok := damaged[id]; ok {
			return id, nil
		}
		for _, r := range runs {
			if r.ID == id {
				return r.ID, nil
			}
		}
		return "", fmt.Errorf("%w %q in %s (lemmings runs lists them)", ErrNoSuchRun, id, s.root)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Updated.After(runs[j].Updated) })
	for _, r := range runs {
		if want == nil || want(r) {
			return r.ID, nil
		}
	}
	return "", ErrNoMatchingRun
}

// Active reports whether a process holds the run now.
func (s *Store) Active(ctx context.Context, id string) bool {
	runs, _, err := run.Runs(ctx, s.app)
	if err != nil {
		return false
	}
	for _, r := range runs {
		if r.ID == id {
			return r.Active
		}
	}
	return false
}

// RunDir is where a run keeps its event log, board and report.
func RunDir(root, id string) string { return filepath.Join(root, run.DataDir, run.RunsDir, id) }

// EventsPath is the run's event log (one JSON event per line).
func EventsPath(root, id string) string { return filepath.Join(RunDir(root, id), run.EventsFile) }

// ReportPath is the run's report, written when the run ends.
func ReportPath(root, id string) string { return filepath.Join(RunDir(root, id), "report.md") }

// ReadReport returns a run's report, or an error wrapping ErrNoReport that
// says when it will exist.
func ReadReport(root, id string) ([]byte, error) {
	if err := run.CheckRunFiles(root, id); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(ReportPath(root, id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("run %s has %w (it is written when the run ends; lemmings status %s shows where it is)", id, ErrNoReport, id)
	}
	return data, err
}

// RunEvents reads the events of the run id as ReadEvents does, refusing a
// run the repository commits (run.CheckRunFiles).
func RunEvents(root, id string, offset int64, max int) (Events, error) {
	if err := run.CheckRunFiles(root, id); err != nil {
		return Events{Next: offset}, err
	}
	return ReadEvents(EventsPath(root, id), offset, max)
}

// RequestHalt asks a running run to stop cleanly after its current node: the
// run polls for this file after every checkpoint.
func RequestHalt(root, id string) error {
	dir := RunDir(root, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, run.HaltFile), []byte("halt requested\n"), 0o600)
}

// ErrNotRunning is returned by Running for a run no process runs now.
var ErrNotRunning = errors.New("not running")

// Running returns nil when a process runs the run now, else an error
// wrapping ErrNotRunning that says how the run stands and what works
// instead: a halt of such a run would do nothing (a resume clears it).
func (s *Store) Running(ctx context.Context, id string) error {
	r, err := s.Find(ctx, id)
	if err != nil || r.Active {
		return err
	}
	hint := ""
	if next := r.Standing().Next; next != "" {
		hint = " (how to go on: " + next + ")"
	}
	return fmt.Errorf("run %s is %s, %w: nothing to halt%s", id, r.DisplayStatus(), ErrNotRunning, hint)
}

// HaltRequested reports whether a halt request waits for the run.
func HaltRequested(root, id string) bool {
	_, err := os.Stat(filepath.Join(RunDir(root, id), run.HaltFile))
	return err == nil
}

// ErrNotPaused is returned by PausedFor for a run that waits for nothing.
var ErrNotPaused = errors.New("not paused for an approval")

// PausedFor says what a paused run waits for: "milestones" or "task".
func PausedFor(snap graph.Snapshot[runstate.State]) (string, error) {
	if snap.Status != graph.StatusPaused {
		// Said in the words status uses (stopped, not the store's halted).
		// Running: whether a process holds it is not known here.
		st := snap.State
		if st.RunID == "" {
			st.RunID = snap.RunID
		}
		standing := runstate.StandingOf(runstate.Stored{Status: snap.Status, Active: true, Reason: snap.Reason, Error: snap.Error}, &st)
		hint := ""
		if standing.Next != "" {
			hint = " (how to go on: " + standing.Next + ")"
		}
		return "", fmt.Errorf("run %s is %s, %w%s", snap.RunID, standing.Status, ErrNotPaused, hint)
	}
	for _, n := range snap.Nodes {
		if n == runstate.NodeScope {
			return "milestones", nil
		}
	}
	return "task", nil
}

// Events is what ReadEvents found past an offset.
type Events struct {
	Events []graph.Event
	// Next is the offset just past the last complete line: read on from there.
	Next int64
	// Bad counts complete lines that were not JSON events (a damaged log).
	Bad int
}

// ReadEvents reads the events after offset from an event log. Only complete
// lines count: a run may be writing the last one, so an unterminated tail is
// left for the next read. max > 0 stops after that many events.
func ReadEvents(path string, offset int64, max int) (Events, error) {
	out := Events{Next: offset}
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return out, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for max <= 0 || len(out.Events) < max {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it whole, or leave it if it is not finished.
			full := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
		if errors.Is(err, io.EOF) {
			return out, nil // an unterminated tail: the run is still writing it
		}
		if err != nil {
			return out, err
		}
		out.Next += int64(len(line))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var ev graph.Event
		if json.Unmarshal(line, &ev) != nil || ev.Kind == "" {
			out.Bad++
			continue
		}
		out.Events = append(out.Events, ev)
	}
	return out, nil
}

// Elapsed is how long a run has run: from its start to its last update.
func Elapsed(s runstate.State, updated time.Time) time.Duration {
	if s.StartedAt.IsZero() || updated.Before(s.StartedAt) {
		return 0
	}
	return updated.Sub(s.StartedAt)
}

// Duration is how long a run has run: from its start to now while a
// process holds it, else to the later of its last checkpoint and its last
// event. A checkpoint is written only when a step ends, so a run cut off in
// a long step (a crash, a kill) would otherwise look as short as the steps
// it finished; the event log goes on during a step (model progress, actions).
func Duration(root string, r Run, now time.Time) time.Duration {
	if r.Active {
		return Elapsed(r.State, now)
	}
	end := r.Updated
	if t := LastEventTime(EventsPath(root, r.ID)); t.After(end) {
		end = t
	}
	return Elapsed(r.State, end)
}

// LastEventTime is the time of the last complete event of a log (zero when
// there is none). It reads the end of the file only.
func LastEventTime(path string) time.Time {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}
	}
	const tail = 64 << 10
	off := max(0, fi.Size()-tail)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return time.Time{}
	}
	lines := bytes.Split(buf, []byte("\n"))
	// The last element follows the last newline: an unfinished line (or empty).
	for i := len(lines) - 2; i >= 0; i-- {
		var ev struct {
			Time time.Time `json:"time"`
		}
		if json.Unmarshal(lines[i], &ev) == nil && !ev.Time.IsZero() {
			return ev.Time
		}
	}
	return time.Time{}
}
