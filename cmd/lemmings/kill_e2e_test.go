package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
)

// killPoint names a moment to SIGKILL a run: the first event the process
// writes that its matcher (fresh for each process) accepts.
type killPoint struct {
	name    string
	matcher func() func(graph.Event) bool
}

func stateless(name string, match func(graph.Event) bool) killPoint {
	return killPoint{name, func() func(graph.Event) bool { return match }}
}

func atNodeStart(node string) killPoint {
	return stateless("start of "+node, func(ev graph.Event) bool { return ev.Kind == graph.EventNodeStart && ev.Node == node })
}

func atEvent(name string, contains ...string) killPoint {
	return stateless(name+" "+strings.Join(contains, " "), func(ev graph.Event) bool {
		if ev.Kind != graph.EventCustom || ev.Name != name {
			return false
		}
		for _, c := range contains {
			if !strings.Contains(string(ev.Data), c) {
				return false
			}
		}
		return true
	})
}

// atCheckpointAfter is between steps: node's step has just been committed.
func atCheckpointAfter(node string) killPoint {
	return killPoint{"checkpoint after " + node, func() func(graph.Event) bool {
		last := ""
		return func(ev graph.Event) bool {
			if ev.Kind == graph.EventNodeStart {
				last = ev.Node
			}
			return ev.Kind == graph.EventCheckpoint && last == node
		}
	}}
}

// eventTail reads the events a run appends to its log, from an offset.
type eventTail struct {
	path string
	off  int64
	part []byte
}

func (et *eventTail) next(t *testing.T) []graph.Event {
	f, err := os.Open(et.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(et.off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	et.off += int64(len(data))
	data = append(et.part, data...)
	cut := bytes.LastIndexByte(data, '\n')
	if cut < 0 {
		et.part = data
		return nil
	}
	et.part = append([]byte(nil), data[cut+1:]...)
	var out []graph.Event
	for _, line := range bytes.Split(data[:cut], []byte("\n")) {
		var ev graph.Event
		if json.Unmarshal(line, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

func (et *eventTail) size() int64 {
	st, err := os.Stat(et.path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// A run killed with SIGKILL at many points — inside steps of every node kind
// after their side effects (work-in-progress commits, knowledge commits, the
// task commit) and before their checkpoints, between steps, and each time
// during the resume of the previous kill — ends exactly as the uninterrupted
// run: the same commits (subjects and trees) and the same report.
func TestKilledAtManyPointsThenResumedEqualsAnUninterruptedRun(t *testing.T) {
	sc := &demo.Script{SupervisorLatency: 30 * time.Millisecond}
	srv := demo.NewServer(sc)
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))

	straight := prepared(t)
	r := c.run(straight, "run", demo.Remit, "--json")
	if r.code != 0 {
		t.Fatalf("uninterrupted run exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	want := lastJSON(t, r.stdout)

	// In the order the run meets them; each kill but the first is during
	// the resume of the one before.
	points := []killPoint{
		atNodeStart("scope_agent"),
		atEvent("task_planned", `"task":"t1"`),   // inside the planner, after it took the task
		atEvent("implementation", `"task":"t1"`), // after the work-in-progress commit
		atNodeStart("qa"),
		atEvent("commit", `"task":"t1"`), // after the task's commit, before its checkpoint
		atEvent("supervisor_done"),       // after the first supervisor's knowledge commit
		atCheckpointAfter("run_supervisors"),
		atNodeStart("assessor"),
		atEvent("implementation", `"task":"t2"`, `"attempt":1`),
		atEvent("implementation", `"task":"t2"`, `"attempt":2`),
		atCheckpointAfter("mark_complete"),
		atEvent("commit", `"task":"t3"`),
		atCheckpointAfter("task_planner"),
		atEvent("supervisor_done"),
		atNodeStart("polish"),
		atNodeStart("report"),
	}
	repo := prepared(t)
	var got map[string]any
	var fired []string
	args := []string{"run", demo.Remit, "--json"}
	for i := 0; got == nil; i++ {
		if i > len(points)+3 {
			t.Fatalf("the run never finished; kills: %v", fired)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := c.command(ctx, repo, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		var tail *eventTail
		if m, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl")); len(m) == 1 {
			tail = &eventTail{path: m[0]}
			tail.off = tail.size()
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		killed := false
		if i < len(points) {
			match := points[i].matcher()
		watch:
			for {
				select {
				case <-exited:
					exited <- nil
					break watch
				case <-time.After(2 * time.Millisecond):
				}
				if tail == nil {
					if m, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "runs", "*", "events.jsonl")); len(m) == 1 {
						tail = &eventTail{path: m[0]}
					}
					continue
				}
				if slices.ContainsFunc(tail.next(t), match) {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					killed = true
					fired = append(fired, points[i].name)
					break
				}
			}
		}
		err := <-exited
		cancel()
		if !killed {
			if err != nil {
				t.Fatalf("%v: %v\n%s\n%s", args, err, out.String(), errb.String())
			}
			got = lastJSON(t, out.String())
		}
		args = []string{"resume", "--json"}
	}
	// A kill lands a little after its event; on a loaded machine the run may
	// have gone past the next point's event by then, and a point can be
	// missed. Most must be reached for the test to mean anything.
	t.Logf("killed %d times: %v", len(fired), fired)
	if len(fired) < len(points)*3/4 {
		t.Errorf("only %d of %d kill points were reached: %v", len(fired), len(points), fired)
	}
	if got["outcome"] != want["outcome"] || got["tasks_completed"] != want["tasks_completed"] {
		t.Errorf("result %v, uninterrupted %v", got, want)
	}
	wantLog := branchLog(t, straight, want["branch"].(string))
	gotLog := branchLog(t, repo, got["branch"].(string))
	if !slices.Equal(wantLog, gotLog) {
		t.Errorf("branches differ\nuninterrupted:\n%s\nkilled %d times:\n%s", strings.Join(wantLog, "\n"), len(fired), strings.Join(gotLog, "\n"))
	}
	wt := filepath.Join(repo, ".lemmings", "worktrees", got["run_id"].(string))
	if s := git(t, wt, "status", "--porcelain", "--untracked-files=all"); s != "" {
		t.Errorf("stray files in the work tree:\n%s", s)
	}
	resets := 0
	for _, ev := range readEvents(t, filepath.Join(filepath.Dir(got["report"].(string)), "events.jsonl")) {
		if ev.Kind == graph.EventCustom && ev.Name == "world_reset" {
			resets++
		}
	}
	if resets == 0 {
		t.Error("no resume reset the work tree to its checkpoint, though kills landed after commits")
	}
	wantReport := reportForComparison(t, want["report"].(string))
	gotReport := reportForComparison(t, got["report"].(string))
	if wantReport != gotReport {
		t.Errorf("reports differ\n--- uninterrupted\n%s\n--- killed %d times\n%s", wantReport, len(fired), gotReport)
	}
}
