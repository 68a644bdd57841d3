package graph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Crash tests of the time-travel operations and the durability modes: the
// child process (TestCrashChild) runs one of these modes and is SIGKILLed.

// crashChildModes runs the child's body for the modes of this file; false
// for the others.
func crashChildModes(t *testing.T, mode, dir string) bool {
	cp, err := NewFileCheckpointer(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	switch mode {
	case "async", "exit":
		c, err := counterGraph(dir, 0).Compile(WithCheckpointer(cp), WithRecursionLimit(1<<30), WithDefaultDurability(Durability(mode)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Resume(ctx, "crash")
		if errors.Is(err, ErrRunNotFound) {
			_, err = c.Run(ctx, "crash", crashState{})
		}
		t.Fatalf("the child was meant to be killed, but its run returned: %v", err)
	case "fork":
		c, err := counterGraph(dir, time.Millisecond).Compile(WithCheckpointer(cp), WithRecursionLimit(1<<30))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.State(ctx, "crash"); errors.Is(err, ErrRunNotFound) {
			if _, err := c.Fork(ctx, "base", 50, "crash"); err != nil {
				t.Fatal(err)
			}
		}
		_, err = c.Resume(ctx, "crash")
		t.Fatalf("the child was meant to be killed, but its run returned: %v", err)
	case "subgraph":
		c, err := subgraphParent(dir, 1_000_000_000).Compile(WithCheckpointer(cp))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Resume(ctx, "crash")
		if errors.Is(err, ErrRunNotFound) {
			_, err = c.Run(ctx, "crash", crashState{})
		}
		t.Fatalf("the child was meant to be killed, but its run returned: %v", err)
	case "sendfan":
		c, err := sendFanGraph(dir, true).Compile(WithCheckpointer(cp))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Run(ctx, "crash", crashState{})
		t.Fatalf("the child was meant to be killed, but its run returned: %v", err)
	default:
		return false
	}
	return true
}

// sendFanGraph: fork ⇒ task × 5 (Send, task 2 hangs when block) → join.
func sendFanGraph(dir string, block bool) *Graph[crashState] {
	return New[crashState]().
		AddNode("fork", func(_ context.Context, s crashState) (crashState, error) { return s, nil }).
		AddNode("task", func(_ context.Context, s crashState) (crashState, error) {
			effect(dir, "task"+strconv.Itoa(s.N))
			if s.N == 2 && block {
				time.Sleep(time.Hour) // killed here; a sleep, see fanGraph
			}
			s.Log = append(s.Log, s.N*10)
			return s, nil
		}).
		AddNode("join", func(_ context.Context, s crashState) (crashState, error) { s.N = len(s.Log); return s, nil }).
		AddEdge(Start, "fork").
		AddSend("fork", func(s crashState) []Send[crashState] {
			var out []Send[crashState]
			for i := range 5 {
				out = append(out, Send[crashState]{Node: "task", State: crashState{N: i}})
			}
			return out
		}, "task").
		AddEdge("task", "join").AddEdge("join", End)
}

// effects counts the lines of dir/effects.
func effects(t *testing.T, dir string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "effects"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range strings.Fields(string(data)) {
		seen[l]++
	}
	return seen
}

func maxEffect(seen map[string]int) int {
	m := 0
	for l := range seen {
		if n, err := strconv.Atoi(l); err == nil && n > m {
			m = n
		}
	}
	return m
}

// TestKill9UnderAsyncDurabilityLosesAtMostTheQueue: what the async mode may
// lose to a crash is the records still queued (at most AsyncQueueDepth) and
// the step in flight; what it keeps is a prefix of the run, each step once.
func TestKill9UnderAsyncDurabilityLosesAtMostTheQueue(t *testing.T) {
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
	const kills = 5
	last, worst, total := 0, 0, 0
	for k := 0; k < kills; k++ {
		child := startChild(t, "async", dir)
		waitFor(t, "the child to get ahead", func() bool {
			snap, err := c.State(ctx, "crash")
			return err == nil && snap.Step > last+200
		})
		kill(t, child)
		snap, err := c.State(ctx, "crash")
		if err != nil || snap.Step < last {
			t.Fatalf("after kill %d: %+v, %v", k, snap, err)
		}
		for i, v := range snap.State.Log {
			if v != i+1 {
				t.Fatalf("Log[%d] = %d: a step was lost from the middle or repeated", i, v)
			}
		}
		ran := maxEffect(effects(t, dir))
		lost := ran - snap.Step
		if lost > AsyncQueueDepth+1 {
			t.Fatalf("kill %d: %d steps ran, %d stored: lost %d, more than the queue (%d) and the step in flight", k, ran, snap.Step, lost, AsyncQueueDepth)
		}
		worst, total, last = max(worst, lost), total+lost, snap.Step
	}
	t.Logf("async: %d kills, steps lost per kill: worst %d, mean %.1f (bound %d)", kills, worst, float64(total)/kills, AsyncQueueDepth+1)
}

// TestKill9UnderExitDurabilityLosesTheCall: the exit mode stores nothing
// until the call ends, so a crash loses every step of the call.
func TestKill9UnderExitDurabilityLosesTheCall(t *testing.T) {
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
	child := startChild(t, "exit", dir)
	waitFor(t, "the child to run 200 steps", func() bool { return maxEffect(effects(t, dir)) > 200 })
	if _, err := c.State(ctx, "crash"); !errors.Is(err, ErrRunNotFound) {
		t.Fatalf("State while an exit-mode call runs: %v, want nothing stored", err)
	}
	kill(t, child)
	if _, err := c.State(ctx, "crash"); !errors.Is(err, ErrRunNotFound) {
		t.Fatalf("State after the kill: %v, want the call lost", err)
	}
	// The id is free again: nothing of the killed call was stored.
	if _, err := mustCompile(t, line("a"), WithCheckpointer(cp)).Run(ctx, "crash", simple{}); err != nil {
		t.Fatalf("Run after the lost call: %v", err)
	}
	t.Logf("exit: the kill lost all %d steps of the call", maxEffect(effects(t, dir)))
}

// TestKill9DuringAForkedRun: a fork is a run like any other; killed while it
// runs, it resumes from its last checkpoint with every step once.
func TestKill9DuringAForkedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir, baseDir := t.TempDir(), t.TempDir()
	cp, err := NewFileCheckpointer(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base := mustCompile(t, counterGraph(baseDir, 0), WithCheckpointer(cp), WithRecursionLimit(100))
	var re *RecursionError
	if _, err := base.Run(ctx, "base", crashState{}); !errors.As(err, &re) {
		t.Fatalf("base run: %v", err)
	}
	c := mustCompile(t, counterGraph(dir, 0), WithCheckpointer(cp))
	last := 50
	const kills = 4
	for k := 0; k < kills; k++ {
		child := startChild(t, "fork", dir)
		waitFor(t, fmt.Sprintf("the fork to pass step %d", last+10), func() bool {
			snap, err := c.State(ctx, "crash")
			return err == nil && snap.Step > last+10
		})
		time.Sleep(time.Duration(k) * 3 * time.Millisecond)
		kill(t, child)
		snap, err := c.State(ctx, "crash")
		if err != nil || snap.Step <= last || snap.Status != StatusRunning {
			t.Fatalf("after kill %d: %+v, %v", k, snap, err)
		}
		last = snap.Step
	}
	snap, _ := c.State(ctx, "crash")
	for i, v := range snap.State.Log {
		if v != i+1 {
			t.Fatalf("Log[%d] = %d: a step was lost or repeated", i, v)
		}
	}
	if run, step, ok := ForkOrigin(snap.Metadata); !ok || run != "base" || step != 50 {
		t.Fatalf("the fork's origin after the kills: %v", snap.Metadata)
	}
	seen := effects(t, dir)
	extra := 0
	for n := 51; n <= snap.State.N; n++ {
		if seen[strconv.Itoa(n)] == 0 {
			t.Fatalf("step %d is committed but never ran", n)
		}
		extra += seen[strconv.Itoa(n)] - 1
	}
	if seen["50"] != 0 || extra > kills {
		t.Fatalf("the fork ran step 50 %d times and repeated %d steps for %d kills", seen["50"], extra, kills)
	}
	if h, _ := c.History(ctx, "crash"); h[0].Step != 50 || len(h) != snap.Step-49 {
		t.Fatalf("the fork's history: first step %d, %d checkpoints for step %d", h[0].Step, len(h), snap.Step)
	}
	if b, _ := base.State(ctx, "base"); b.Step != 100 || b.Status != StatusFailed {
		t.Fatalf("the base run changed: %+v", b)
	}
}

// TestKill9DuringASendFanOutRerunsOnlyTheUnfinishedTask: the finished Send
// tasks of a step are stored as they finish; after a kill only the task cut
// off runs again.
func TestKill9DuringASendFanOutRerunsOnlyTheUnfinishedTask(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	cp, err := NewFileCheckpointer(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	child := startChild(t, "sendfan", dir)
	waitForWrites(t, cp, "crash", 4, "four tasks to be recorded")
	kill(t, child)
	c := mustCompile(t, sendFanGraph(dir, false), WithCheckpointer(cp))
	snap, err := c.State(ctx, "crash")
	if err != nil || snap.Step != 1 || !slices.Equal(snap.Pending, []string{"task[0]", "task[1]", "task[3]", "task[4]"}) {
		t.Fatalf("State after the kill: %+v, %v", snap, err)
	}
	s, err := c.Resume(ctx, "crash")
	if err != nil || !slices.Equal(s.Log, []int{0, 10, 20, 30, 40}) || s.N != 5 {
		t.Fatalf("Resume: %+v, %v", s, err)
	}
	seen := effects(t, dir)
	for i := range 5 {
		want := 1
		if i == 2 {
			want = 2
		}
		if got := seen["task"+strconv.Itoa(i)]; got != want {
			t.Errorf("task %d ran %d times, want %d: %v", i, got, want, seen)
		}
	}
}

// subgraphParent: Start → sub → done → End, where sub is a counter loop of
// limit steps, compiled with a recursion limit that lets it finish.
func subgraphParent(dir string, limit int) *Graph[crashState] {
	sub, err := New[crashState]().
		AddNode("work", func(_ context.Context, s crashState) (crashState, error) {
			s.N++
			s.Log = append(s.Log, s.N)
			effect(dir, strconv.Itoa(s.N))
			return s, nil
		}).
		AddEdge(Start, "work").
		AddConditionalEdges("work", func(s crashState) string {
			if s.N < limit {
				return "work"
			}
			return End
		}, "work", End).
		Compile(WithRecursionLimit(1 << 30))
	if err != nil {
		panic(err)
	}
	return New[crashState]().
		AddSubgraph("sub", SubgraphOf(sub)).
		AddNode("done", func(_ context.Context, s crashState) (crashState, error) { s.N = -s.N; return s, nil }).
		AddEdge(Start, "sub").AddEdge("sub", "done").AddEdge("done", End)
}

// TestKill9InsideASubgraphResumesInsideIt: the subgraph's steps are
// checkpointed as they happen; after a kill the parent's Resume continues the
// subgraph's run, with every step once.
func TestKill9InsideASubgraphResumesInsideIt(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	cp, err := NewFileCheckpointer(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	child := startChild(t, "subgraph", dir)
	sub := mustCompile(t, New[crashState]().AddNode("work", func(_ context.Context, s crashState) (crashState, error) { return s, nil }).
		AddEdge(Start, "work").AddEdge("work", End), WithCheckpointer(cp))
	var at int
	waitFor(t, "the subgraph to run 100 steps", func() bool {
		snap, err := sub.State(ctx, "crash/sub@1")
		at = snap.Step
		return err == nil && snap.Step > 100
	})
	kill(t, child)
	if snap, err := sub.State(ctx, "crash/sub@1"); err != nil || snap.Step < at {
		t.Fatalf("the subgraph's run after the kill: %+v, %v", snap, err)
	} else {
		at = snap.Step // the limit must lie ahead of what the killed process did
	}
	parent := mustCompile(t, subgraphParent(dir, at+50), WithCheckpointer(cp))
	if snap, _ := parent.State(ctx, "crash"); snap.Status != StatusRunning || snap.Step != 0 || !slices.Equal(snap.Next, []string{"sub"}) {
		t.Fatalf("parent after the kill: %+v", snap)
	}
	s, err := parent.Resume(ctx, "crash")
	if err != nil || s.N != -(at+50) {
		t.Fatalf("Resume = N %d, %v; want the subgraph to finish its %d steps", s.N, err, at+50)
	}
	for i, v := range s.Log {
		if v != i+1 {
			t.Fatalf("Log[%d] = %d: a subgraph step was lost or repeated", i, v)
		}
	}
	seen := effects(t, dir)
	extra := 0
	for n := 1; n <= at+50; n++ {
		if seen[strconv.Itoa(n)] == 0 {
			t.Fatalf("step %d of the subgraph never ran", n)
		}
		extra += seen[strconv.Itoa(n)] - 1
	}
	if extra > 1 {
		t.Fatalf("%d subgraph steps ran twice: only the one in flight at the kill may", extra)
	}
}
