// Package graphtest is the conformance suite of graph.Checkpointer: a store
// that passes RunCheckpointerSuite keeps runs the way the graph runtime needs
// (every step stored, records in order, runs locked to one writer, failed,
// interrupted, halted and paused runs resumable from their last checkpoint).
//
// It also runs the time-travel operations through the store: Fork and
// Replay from a stored step, Send fan-outs with a failing task, subgraphs
// whose runs live under their parent's id (ids with '/' and '@': a store must
// accept every graph.ValidRunPath), and the async and exit durability modes
// (through graph.BatchWriter when the store offers it).
//
// Both stores of package graph run through it; a new one (Postgres, say)
// proves itself with one test:
//
//	func TestPostgresCheckpointer(t *testing.T) {
//		graphtest.RunCheckpointerSuite(t, func(t *testing.T) graph.Checkpointer {
//			return newPostgresCheckpointer(t) // an empty store for each subtest
//		})
//	}
//
// The suite imports only graph and the standard library, and runs its
// subtests in parallel, each on a store of its own.
package graphtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
)

// RunCheckpointerSuite runs every conformance test against stores made by
// newStore, which must return an empty store each time it is called.
func RunCheckpointerSuite(t *testing.T, newStore func(t *testing.T) graph.Checkpointer) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, cp graph.Checkpointer)
	}{
		{"WriterIsExclusiveAndRecordsKeepTheirOrder", writerContract},
		{"RunStoresEveryStep", runStoresEveryStep},
		{"RouteErrorFailsTheRun", routeErrorFailsTheRun},
		{"FailureKeepsTheLastCheckpoint", failureKeepsTheLastCheckpoint},
		{"CancellationMarksTheRunInterrupted", cancellationMarksTheRunInterrupted},
		{"StopCheckHaltsBetweenSteps", stopCheckHaltsBetweenSteps},
		{"CancellationWithAHaltCauseHaltsTheNodeInFlight", cancellationWithAHaltCauseHaltsTheNodeInFlight},
		{"InterruptsPauseAndResume", interruptsPauseAndResume},
		{"ApprovalSurvivesAFailureOfTheApprovedNode", approvalSurvivesAFailure},
		{"ForkOpensAnyStepAsANewRun", forkOpensAnyStep},
		{"ForkWithAnUpdateAsANodeLetsItsRouterChoose", forkWithUpdateAsNode},
		{"ReplayRunsTheStepsAfterTheForkAgain", replayRerunsTheRest},
		{"SendFansOutAndJoinsWithReducers", sendFansOut},
		{"SendFailureRerunsOnlyTheUnfinishedTasks", sendFailureRerunsOnlyUnfinished},
		{"SubgraphStepsAreStoredUnderTheParent", subgraphStepsUnderParent},
		{"SubgraphInterruptPausesTheParentAndResumesInside", subgraphInterruptPausesParent},
		{"DurabilityModesStoreTheSameHistory", durabilityModesStoreTheSameHistory},
		{"ExitDurabilityWritesNothingBeforeTheEnd", exitDurabilityWritesAtTheEnd},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newStore(t))
		})
	}
}

// counter is the state of the suite's graphs.
type counter struct {
	N   int
	Log []string `graph:"append"`
}

func inc(name string) graph.NodeFunc[counter] {
	return func(_ context.Context, s counter) (counter, error) {
		s.N++
		s.Log = append(s.Log, name)
		return s, nil
	}
}

// line builds Start → names... → End.
func line(names ...string) *graph.Graph[counter] {
	g := graph.New[counter]()
	prev := graph.Start
	for _, n := range names {
		g.AddNode(n, inc(n)).AddEdge(prev, n)
		prev = n
	}
	return g.AddEdge(prev, graph.End)
}

func compile[S any](t *testing.T, g *graph.Graph[S], opts ...graph.CompileOption) *graph.Compiled[S] {
	t.Helper()
	c, err := g.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writerContract(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	if _, err := cp.Open(ctx, "w", false); !errors.Is(err, graph.ErrRunNotFound) {
		t.Fatalf("Open of a missing run without create: %v, want ErrRunNotFound", err)
	}
	w, err := cp.Open(ctx, "w", true)
	if err != nil {
		t.Fatal(err)
	}
	recs := []graph.Record{
		{Kind: graph.RecordSnapshot, Step: 0, Data: []byte("s0")},
		{Kind: graph.RecordDelta, Step: 1, Data: []byte("d1")},
		{Kind: graph.RecordDelta, Step: 2, Data: []byte("d2")},
		{Kind: graph.RecordSnapshot, Step: 3, Data: []byte("s3")},
		{Kind: graph.RecordStatus, Step: 3, Data: []byte("paused")},
	}
	for _, r := range recs {
		if err := w.Append(ctx, r); err != nil {
			t.Fatalf("Append %+v: %v", r, err)
		}
	}
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Open(ctx, "w", false); !errors.Is(err, graph.ErrRunLocked) {
		t.Errorf("second writer: %v, want ErrRunLocked", err)
	}
	if err := cp.Delete(ctx, "w"); !errors.Is(err, graph.ErrRunLocked) {
		t.Errorf("Delete of a held run: %v, want ErrRunLocked", err)
	}
	all, err := cp.Records(ctx, "w")
	if err != nil || !sameRecords(all, recs) {
		t.Fatalf("Records = %+v, %v; want the appended records in order", all, err)
	}
	tail, err := cp.Tail(ctx, "w")
	if err != nil || !sameRecords(tail, recs[3:]) {
		t.Fatalf("Tail = %+v, %v; want the last snapshot and what follows", tail, err)
	}
	runs, err := cp.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != "w" || !runs[0].Active || runs[0].Last.Kind != graph.RecordStatus {
		t.Fatalf("Runs while held = %+v, %v", runs, err)
	}
	if _, err := w.Prune(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if tail, err := cp.Tail(ctx, "w"); err != nil || !sameRecords(tail, recs[3:]) {
		t.Fatalf("Tail after Prune = %+v, %v; the last snapshot and what follows must stay", tail, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Open(ctx, "w", true); !errors.Is(err, graph.ErrRunExists) {
		t.Errorf("Open with create of a stored run: %v, want ErrRunExists", err)
	}
	if runs, _ := cp.Runs(ctx); len(runs) != 1 || runs[0].Active {
		t.Errorf("Runs after Close = %+v, want the run, not active", runs)
	}
	w, err = cp.Open(ctx, "w", false)
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cp.Delete(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if runs, err := cp.Runs(ctx); err != nil || len(runs) != 0 {
		t.Errorf("Runs after Delete = %+v, %v", runs, err)
	}
	if _, err := cp.Tail(ctx, "w"); !errors.Is(err, graph.ErrRunNotFound) {
		t.Errorf("Tail of a deleted run: %v, want ErrRunNotFound", err)
	}
}

func sameRecords(got, want []graph.Record) bool {
	return slices.EqualFunc(got, want, func(a, b graph.Record) bool {
		return a.Kind == b.Kind && a.Step == b.Step && string(a.Data) == string(b.Data)
	})
}

func runStoresEveryStep(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	c := compile(t, line("a", "b", "c"), graph.WithCheckpointer(cp),
		graph.WithMetadata(func(_ context.Context, s counter) map[string]string {
			return map[string]string{"n": strconv.Itoa(s.N / 2)}
		}))
	s, err := c.Run(ctx, "r1", counter{})
	if err != nil || s.N != 3 || !slices.Equal(s.Log, []string{"a", "b", "c"}) {
		t.Fatalf("Run = %+v, %v", s, err)
	}
	snap, err := c.State(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Status != graph.StatusDone || snap.Step != 3 || snap.State.N != 3 || len(snap.Next) != 0 || !slices.Equal(snap.Nodes, []string{"c"}) {
		t.Fatalf("State = %+v", snap)
	}
	h, err := c.History(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{graph.Start}, {"a"}, {"b"}, {"c"}}
	if len(h) != len(want) {
		t.Fatalf("History has %d checkpoints, want %d: %+v", len(h), len(want), h)
	}
	for i, ci := range h {
		if ci.Step != i || !slices.Equal(ci.Nodes, want[i]) {
			t.Errorf("checkpoint %d = %+v", i, ci)
		}
	}
	if !h[0].Snapshot || h[1].Snapshot || !slices.Equal(h[1].Changed, []string{"N", "Log"}) || !slices.Equal(h[1].Next, []string{"b"}) {
		t.Errorf("checkpoint 1 = %+v", h[1])
	}
	if snap.Metadata["n"] != "1" || h[1].Metadata["n"] != "0" || h[2].Metadata["n"] != "1" || h[3].Metadata["n"] != "1" {
		t.Errorf("metadata: run %v, per checkpoint %v %v %v", snap.Metadata, h[1].Metadata, h[2].Metadata, h[3].Metadata)
	}
	runs, err := c.ListRuns(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != "r1" || runs[0].Status != graph.StatusDone || runs[0].Step != 3 || runs[0].Active {
		t.Fatalf("ListRuns = %+v, %v", runs, err)
	}
	if _, err := c.Resume(ctx, "r1"); !errors.Is(err, graph.ErrRunFinished) {
		t.Errorf("Resume of a finished run: %v", err)
	}
	if _, err := c.Run(ctx, "r1", counter{}); !errors.Is(err, graph.ErrRunExists) {
		t.Errorf("Run over an existing id: %v", err)
	}
	if _, err := c.Resume(ctx, "nope"); !errors.Is(err, graph.ErrRunNotFound) {
		t.Errorf("Resume of an unknown id: %v", err)
	}
	if _, err := c.State(ctx, "nope"); !errors.Is(err, graph.ErrRunNotFound) {
		t.Errorf("State of an unknown id: %v", err)
	}
	if _, err := c.Run(ctx, "../etc", counter{}); !errors.Is(err, graph.ErrInvalidRunID) {
		t.Errorf("Run with a path as id: %v", err)
	}
}

func routeErrorFailsTheRun(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	g := graph.New[counter]().AddNode("a", inc("a")).AddEdge(graph.Start, "a").
		AddConditionalEdges("a", func(counter) string { return "mars" }, "a", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp))
	_, err := c.Run(ctx, "r", counter{})
	var re *graph.RouteError
	if !errors.As(err, &re) || re.Node != "a" || re.Destination != "mars" {
		t.Fatalf("err = %v", err)
	}
	snap, _ := c.State(ctx, "r")
	if snap.Status != graph.StatusFailed || snap.Step != 0 || !strings.Contains(snap.Error, `"mars"`) {
		t.Fatalf("State = %+v", snap)
	}
}

func failureKeepsTheLastCheckpoint(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var boom atomic.Bool
	boom.Store(true)
	g := graph.New[counter]().AddNode("a", inc("a")).
		AddNode("b", func(_ context.Context, s counter) (counter, error) {
			if boom.Load() {
				var m map[string]int
				m["x"] = 1 // nil map write: a panic the runtime turns into a failure
			}
			s.N += 10
			return s, nil
		}).AddEdge(graph.Start, "a").AddEdge("a", "b").AddEdge("b", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp))
	s, err := c.Run(ctx, "p", counter{})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "b" || !strings.Contains(ne.Err.Error(), "nil map") {
		t.Fatalf("err = %v", err)
	}
	if s.N != 1 {
		t.Errorf("returned state N=%d, want the last committed (1)", s.N)
	}
	snap, err := c.State(ctx, "p")
	if err != nil || snap.Status != graph.StatusFailed || snap.Step != 1 || snap.State.N != 1 || !slices.Equal(snap.Next, []string{"b"}) {
		t.Fatalf("State = %+v, %v", snap, err)
	}
	boom.Store(false)
	s, err = c.Resume(ctx, "p")
	if err != nil || s.N != 11 || !slices.Equal(s.Log, []string{"a"}) {
		t.Fatalf("Resume after the fix = %+v, %v (a must not run again)", s, err)
	}
}

func cancellationMarksTheRunInterrupted(t *testing.T, cp graph.Checkpointer) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var bRuns atomic.Int32
	g := graph.New[counter]().AddNode("a", inc("a")).
		AddNode("b", func(ctx context.Context, s counter) (counter, error) {
			if bRuns.Add(1) == 1 {
				cancel()
				<-ctx.Done()
				return s, ctx.Err()
			}
			s.N += 100
			return s, nil
		}).AddEdge(graph.Start, "a").AddEdge("a", "b").AddEdge("b", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp))
	if _, err := c.Run(ctx, "c", counter{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	snap, _ := c.State(context.Background(), "c")
	if snap.Status != graph.StatusInterrupted || snap.Step != 1 || !slices.Equal(snap.Next, []string{"b"}) {
		t.Fatalf("State = %+v", snap)
	}
	s, err := c.Resume(context.Background(), "c")
	if err != nil || s.N != 101 || bRuns.Load() != 2 {
		t.Fatalf("Resume = %+v, %v (b ran %d times)", s, err, bRuns.Load())
	}
}

// A context cancelled with a cause that wraps ErrHalted (a halt request or a
// time limit reaching a node in flight) stores the run as halted with that
// cause as its reason; the cut-off node runs again on Resume.
func cancellationWithAHaltCauseHaltsTheNodeInFlight(t *testing.T, cp graph.Checkpointer) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var bRuns atomic.Int32
	g := graph.New[counter]().AddNode("a", inc("a")).
		AddNode("b", func(ctx context.Context, s counter) (counter, error) {
			if bRuns.Add(1) == 1 {
				cancel(fmt.Errorf("%w: reached the wall-time limit of 1h", graph.ErrHalted))
				<-ctx.Done()
				return s, ctx.Err()
			}
			s.N += 100
			return s, nil
		}).AddEdge(graph.Start, "a").AddEdge("a", "b").AddEdge("b", graph.End)
	var ends []graph.Event
	c := compile(t, g, graph.WithCheckpointer(cp), graph.WithSinks(graph.SinkFunc(func(ev graph.Event) {
		if ev.Kind == graph.EventRunEnd {
			ends = append(ends, ev)
		}
	})))
	_, err := c.Run(ctx, "hc", counter{})
	if !errors.Is(err, graph.ErrHalted) || !strings.Contains(err.Error(), "wall-time limit") {
		t.Fatalf("err = %v", err)
	}
	snap, _ := c.State(context.Background(), "hc")
	if snap.Status != graph.StatusHalted || snap.Reason != "reached the wall-time limit of 1h" || !slices.Equal(snap.Next, []string{"b"}) {
		t.Fatalf("State = %+v", snap)
	}
	if len(ends) != 1 || ends[0].Status != graph.StatusHalted || ends[0].Reason != snap.Reason {
		t.Fatalf("run_end events = %+v", ends)
	}
	s, err := c.Resume(context.Background(), "hc")
	if err != nil || s.N != 101 || bRuns.Load() != 2 {
		t.Fatalf("Resume = %+v, %v (b ran %d times)", s, err, bRuns.Load())
	}
}

func stopCheckHaltsBetweenSteps(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var stop atomic.Bool
	g := graph.New[counter]().AddNode("a", func(_ context.Context, s counter) (counter, error) {
		s.N++
		if s.N == 3 {
			stop.Store(true)
		}
		return s, nil
	}).AddEdge(graph.Start, "a").AddConditionalEdges("a", func(s counter) string {
		if s.N < 5 {
			return "a"
		}
		return graph.End
	}, "a", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp), graph.WithStopCheck(func(id string) bool { return id == "h" && stop.Load() }))
	s, err := c.Run(ctx, "h", counter{})
	if !errors.Is(err, graph.ErrHalted) || s.N != 3 {
		t.Fatalf("Run = %+v, %v", s, err)
	}
	if snap, _ := c.State(ctx, "h"); snap.Status != graph.StatusHalted || snap.Step != 3 {
		t.Fatalf("State = %+v", snap)
	}
	stop.Store(false)
	if s, err = c.Resume(ctx, "h"); err != nil || s.N != 5 {
		t.Fatalf("Resume = %+v, %v", s, err)
	}
}

func interruptsPauseAndResume(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var askRuns atomic.Int32
	g := graph.New[counter]().AddNode("plan", inc("plan")).
		AddNode("ask", func(_ context.Context, s counter) (counter, error) {
			askRuns.Add(1)
			s.Log = append(s.Log, "ask")
			return s, graph.Interrupt("need approval")
		}).
		AddNode("apply", inc("apply")).AddNode("report", inc("report")).
		AddEdge(graph.Start, "plan").AddEdge("plan", "ask").AddEdge("ask", "apply").AddEdge("apply", "report").AddEdge("report", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp), graph.WithInterruptBefore("plan"), graph.WithInterruptAfter("apply"))

	_, err := c.Run(ctx, "i", counter{})
	if !errors.Is(err, graph.ErrPaused) || !strings.Contains(err.Error(), "before plan") {
		t.Fatalf("pause before: %v", err)
	}
	snap, _ := c.State(ctx, "i")
	if snap.Status != graph.StatusPaused || snap.Step != 0 || snap.Reason != "before plan" || !slices.Equal(snap.Next, []string{"plan"}) {
		t.Fatalf("State = %+v", snap)
	}
	_, err = c.Resume(ctx, "i")
	if !errors.Is(err, graph.ErrPaused) || !strings.Contains(err.Error(), "need approval") {
		t.Fatalf("node interrupt: %v", err)
	}
	snap, _ = c.State(ctx, "i")
	if snap.Step != 2 || !slices.Equal(snap.State.Log, []string{"plan", "ask"}) || !slices.Equal(snap.Next, []string{"apply"}) {
		t.Fatalf("the interrupting node's state was not committed: %+v", snap)
	}
	_, err = c.Resume(ctx, "i", graph.WithUpdate(func(s counter) (counter, error) {
		s.Log = append(s.Log, "approved")
		return s, nil
	}))
	if !errors.Is(err, graph.ErrPaused) || !strings.Contains(err.Error(), "after apply") {
		t.Fatalf("pause after: %v", err)
	}
	s, err := c.Resume(ctx, "i")
	if err != nil || !slices.Equal(s.Log, []string{"plan", "ask", "approved", "apply", "report"}) || askRuns.Load() != 1 {
		t.Fatalf("final = %+v, %v (ask ran %d times)", s, err, askRuns.Load())
	}
	h, _ := c.History(ctx, "i")
	var nodes []string
	for _, ci := range h {
		nodes = append(nodes, strings.Join(ci.Nodes, "+"))
	}
	if strings.Join(nodes, " ") != "__start__ plan ask __update__ apply report" {
		t.Errorf("history = %v", nodes)
	}
}

func approvalSurvivesAFailure(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var fail atomic.Bool
	fail.Store(true)
	g := graph.New[counter]().AddNode("a", inc("a")).
		AddNode("deploy", func(_ context.Context, s counter) (counter, error) {
			if fail.Load() {
				return s, errors.New("deploy failed")
			}
			s.Log = append(s.Log, "deploy")
			return s, nil
		}).AddEdge(graph.Start, "a").AddEdge("a", "deploy").AddEdge("deploy", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp), graph.WithInterruptBefore("deploy"))
	if _, err := c.Run(ctx, "ap", counter{}); !errors.Is(err, graph.ErrPaused) {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx, "ap"); err == nil || errors.Is(err, graph.ErrPaused) {
		t.Fatalf("approved deploy should run and fail: %v", err)
	}
	fail.Store(false)
	s, err := c.Resume(ctx, "ap")
	if err != nil || !slices.Equal(s.Log, []string{"a", "deploy"}) {
		t.Fatalf("retry of an approved node asked again or failed: %+v, %v", s, err)
	}
}
