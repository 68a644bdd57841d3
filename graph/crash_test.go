package graph

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash tests re-run this test binary as a child process that advances a
// run, SIGKILL it at some instant, and check from the parent what survived.

const crashEnv = "GRAPH_CRASH_CHILD" // mode:dir

type crashState struct {
	N   int
	Log []int `graph:"append"`
}

// effect appends one line to dir/effects: what a node did to the world.
func effect(dir, line string) {
	f, err := os.OpenFile(filepath.Join(dir, "effects"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		panic(err)
	}
	f.Write([]byte(line + "\n"))
	f.Close()
}

func counterGraph(dir string, pause time.Duration) *Graph[crashState] {
	return New[crashState]().
		AddNode("work", func(_ context.Context, s crashState) (crashState, error) {
			s.N++
			s.Log = append(s.Log, s.N)
			effect(dir, strconv.Itoa(s.N))
			if pause > 0 {
				time.Sleep(pause)
			}
			return s, nil
		}).
		AddEdge(Start, "work").
		AddConditionalEdges("work", func(s crashState) string {
			if s.N < 1_000_000_000 {
				return "work"
			}
			return End
		}, "work", End)
}

func fanGraph(dir string, block bool) *Graph[crashState] {
	branch := func(name string, v int) NodeFunc[crashState] {
		return func(_ context.Context, s crashState) (crashState, error) {
			effect(dir, name)
			if name == "b" && block {
				// The child is killed here. A sleep, not select {}: with every
				// goroutine blocked on channels the runtime aborts the process
				// for deadlock (without -race) before the SIGKILL arrives.
				time.Sleep(time.Hour)
			}
			s.Log = append(s.Log, v)
			return s, nil
		}
	}
	return New[crashState]().
		AddNode("fork", func(_ context.Context, s crashState) (crashState, error) { s.N = 1; return s, nil }).
		AddNode("a", branch("a", 1)).AddNode("b", branch("b", 2)).AddNode("c", branch("c", 3)).
		AddNode("join", func(_ context.Context, s crashState) (crashState, error) { s.N = len(s.Log); return s, nil }).
		AddEdge(Start, "fork").AddEdge("fork", "a").AddEdge("fork", "b").AddEdge("fork", "c").
		AddEdge("a", "join").AddEdge("b", "join").AddEdge("c", "join").AddEdge("join", End)
}

// TestCrashChild is the child's body; it does nothing in a normal test run.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		t.Skip("runs only as the child of a crash test")
	}
	mode, dir, _ := strings.Cut(spec, ":")
	if crashChildModes(t, mode, dir) {
		return
	}
	cp, err := NewFileCheckpointer(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	var g *Graph[crashState]
	switch mode {
	case "fast":
		g = counterGraph(dir, 0)
	case "slow":
		g = counterGraph(dir, 20*time.Millisecond)
	case "fan":
		g = fanGraph(dir, true)
	}
	c, err := g.Compile(WithCheckpointer(cp), WithRecursionLimit(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.Resume(ctx, "crash")
	if errors.Is(err, ErrRunNotFound) {
		_, err = c.Run(ctx, "crash", crashState{})
	}
	t.Fatalf("the child was meant to be killed, but its run returned: %v", err)
}

func startChild(t *testing.T, mode, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+mode+":"+dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v", err)
	}
}

// waitFor polls cond until it holds or five seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestKill9KeepsEveryCommittedStep(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	cp, err := NewFileCheckpointer(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, counterGraph(dir, 0), WithCheckpointer(cp))
	ctx := context.Background()
	const kills = 8
	lastStep := 0
	for k := 0; k < kills; k++ {
		child := startChild(t, "fast", dir)
		// Read from this process while the child writes: every read must succeed
		// and see a consistent, growing run.
		waitFor(t, fmt.Sprintf("child %d to commit steps past %d", k, lastStep), func() bool {
			snap, err := c.State(ctx, "crash")
			if errors.Is(err, ErrRunNotFound) {
				return false
			}
			if err != nil {
				t.Fatalf("State while the child writes: %v", err)
			}
			if len(snap.State.Log) != snap.State.N || snap.Step < lastStep {
				t.Fatalf("inconsistent read: step %d (before %d), N %d, %d entries", snap.Step, lastStep, snap.State.N, len(snap.State.Log))
			}
			return snap.Step > lastStep+20
		})
		if runs, err := c.ListRuns(ctx); err != nil || len(runs) != 1 || !runs[0].Active || runs[0].Status != StatusRunning {
			t.Fatalf("ListRuns while the child writes: %+v, %v", runs, err)
		}
		if _, err := c.Resume(ctx, "crash"); !errors.Is(err, ErrRunLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", child.Process.Pid)) {
			t.Fatalf("Resume while the child holds the run: %v", err)
		}
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		kill(t, child)
		snap, err := c.State(ctx, "crash")
		if err != nil {
			t.Fatalf("State after kill %d: %v", k, err)
		}
		if snap.Step < lastStep || snap.Status != StatusRunning {
			t.Fatalf("after kill %d: step %d < %d or status %s", k, snap.Step, lastStep, snap.Status)
		}
		if runs, _ := c.ListRuns(ctx); runs[0].Active {
			t.Fatal("a killed writer still counts as active: its lock outlived it")
		}
		lastStep = snap.Step
	}
	// The committed state is exactly the steps 1..N, each once.
	snap, err := c.State(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range snap.State.Log {
		if v != i+1 {
			t.Fatalf("Log[%d] = %d: a step was lost or repeated", i, v)
		}
	}
	// Every committed step ran once; only a step in flight at a kill ran twice.
	data, _ := os.ReadFile(filepath.Join(dir, "effects"))
	seen := map[int]int{}
	for _, l := range strings.Fields(string(data)) {
		n, _ := strconv.Atoi(l)
		seen[n]++
	}
	extra := 0
	for n := 1; n <= snap.State.N; n++ {
		if seen[n] == 0 {
			t.Fatalf("step %d is committed but never ran", n)
		}
		extra += seen[n] - 1
	}
	if extra > kills {
		t.Fatalf("%d repeated executions for %d kills: finished nodes ran again", extra, kills)
	}
	h, err := c.History(ctx, "crash")
	if err != nil || len(h) != snap.Step+1 {
		t.Fatalf("History: %d entries for step %d, %v", len(h), snap.Step, err)
	}
	t.Logf("%d kills, %d committed steps, %d repeated node executions", kills, snap.Step, extra)
}

func TestKill9DuringFanOutRerunsOnlyTheUnfinishedBranch(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	cp, err := NewFileCheckpointer(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	child := startChild(t, "fan", dir)
	waitForWrites(t, cp, "crash", 2, "branches a and c to be recorded")
	kill(t, child)
	c := mustCompile(t, fanGraph(dir, false), WithCheckpointer(cp))
	snap, err := c.State(ctx, "crash")
	if err != nil || !slices.Equal(snap.Pending, []string{"a", "c"}) || snap.Step != 1 {
		t.Fatalf("State after the kill: %+v, %v", snap, err)
	}
	runs, err := c.ListRuns(ctx)
	if err != nil || len(runs) != 1 || runs[0].Step != 1 || runs[0].Status != StatusRunning || runs[0].Active {
		t.Fatalf("ListRuns after the kill: %+v, %v", runs, err)
	}
	s, err := c.Resume(ctx, "crash")
	if err != nil || !slices.Equal(s.Log, []int{1, 2, 3}) || s.N != 3 {
		t.Fatalf("Resume: %+v, %v", s, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "effects"))
	got := strings.Fields(string(data))
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b", "b", "c"}) {
		t.Fatalf("executions %v: only b, cut off by the kill, may run twice", got)
	}
}

// waitForWrites waits until run id has n node writes stored: the branches or
// tasks a killed step finished before it was cut off.
func waitForWrites(t *testing.T, cp Checkpointer, id string, n int, what string) {
	t.Helper()
	waitFor(t, what, func() bool {
		recs, err := cp.Tail(context.Background(), id)
		got := 0
		for _, r := range recs {
			if r.Kind == RecordWrite {
				got++
			}
		}
		return err == nil && got == n
	})
}
