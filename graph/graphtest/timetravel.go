package graphtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
)

// The time-travel operations through a store: fork and replay, Send,
// subgraphs and durability modes.

func forkOpensAnyStep(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	c := compile(t, line("a", "b", "c", "d"), graph.WithCheckpointer(cp),
		graph.WithMetadata(func(_ context.Context, s counter) map[string]string {
			return map[string]string{"n": strconv.Itoa(s.N)}
		}))
	if _, err := c.Run(ctx, "p", counter{}); err != nil {
		t.Fatal(err)
	}
	parentHist, _ := c.History(ctx, "p")
	snap, err := c.Fork(ctx, "p", 2, "f")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Status != graph.StatusPaused || snap.Step != 2 || snap.State.N != 2 || !slices.Equal(snap.Next, []string{"c"}) ||
		!slices.Equal(snap.Nodes, []string{"b"}) || !strings.Contains(snap.Reason, "fork of p at step 2") {
		t.Fatalf("fork = %+v", snap)
	}
	if run, step, ok := graph.ForkOrigin(snap.Metadata); !ok || run != "p" || step != 2 || snap.Metadata["n"] != "2" {
		t.Fatalf("fork metadata = %v", snap.Metadata)
	}
	s, err := c.Resume(ctx, "f")
	if err != nil || s.N != 4 || !slices.Equal(s.Log, []string{"a", "b", "c", "d"}) {
		t.Fatalf("Resume of the fork = %+v, %v", s, err)
	}
	h, err := c.History(ctx, "f")
	if err != nil || len(h) != 3 || h[0].Step != 2 || h[2].Step != 4 || !slices.Equal(h[1].Nodes, []string{"c"}) {
		t.Fatalf("fork history = %+v, %v", h, err)
	}
	for _, ci := range h {
		if run, step, ok := graph.ForkOrigin(ci.Metadata); !ok || run != "p" || step != 2 {
			t.Errorf("checkpoint %d of the fork lost its origin: %v", ci.Step, ci.Metadata)
		}
	}
	if h[2].Metadata["n"] != "4" {
		t.Errorf("WithMetadata stopped at the fork: %v", h[2].Metadata)
	}
	if after, _ := c.History(ctx, "p"); len(after) != len(parentHist) {
		t.Errorf("the parent changed: %d checkpoints, then %d", len(parentHist), len(after))
	}
	if _, err := c.Fork(ctx, "p", 9, "g"); !errors.Is(err, graph.ErrStepNotFound) {
		t.Errorf("fork of a step never stored: %v", err)
	}
	if _, err := c.Fork(ctx, "p", 1, "f"); !errors.Is(err, graph.ErrRunExists) {
		t.Errorf("fork onto an existing id: %v", err)
	}
	if _, err := c.Fork(ctx, "nope", 1, "g"); !errors.Is(err, graph.ErrRunNotFound) {
		t.Errorf("fork of a missing run: %v", err)
	}
	end, err := c.Fork(ctx, "p", 4, "g")
	if err != nil || end.Status != graph.StatusDone {
		t.Fatalf("fork of the last step = %+v, %v", end, err)
	}
	runs, _ := c.ListRuns(ctx)
	if len(runs) != 3 {
		t.Errorf("ListRuns = %+v", runs)
	}
}

// flagged: a routes to "yes" when Flag is set, else "no".
type flagged struct {
	Flag bool
	Log  []string `graph:"append"`
}

func forkWithUpdateAsNode(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	step := func(name string) graph.NodeFunc[flagged] {
		return func(_ context.Context, s flagged) (flagged, error) {
			s.Log = append(s.Log, name)
			return s, nil
		}
	}
	g := graph.New[flagged]().AddNode("a", step("a")).AddNode("yes", step("yes")).AddNode("no", step("no")).
		AddEdge(graph.Start, "a").
		AddConditionalEdges("a", func(s flagged) string {
			if s.Flag {
				return "yes"
			}
			return "no"
		}, "yes", "no").
		AddEdge("yes", graph.End).AddEdge("no", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp))
	if s, err := c.Run(ctx, "p", flagged{}); err != nil || !slices.Equal(s.Log, []string{"a", "no"}) {
		t.Fatalf("Run = %+v, %v", s, err)
	}
	set := graph.WithUpdate(func(s flagged) (flagged, error) { s.Flag = true; return s, nil })
	snap, err := c.Fork(ctx, "p", 1, "as-a", set, graph.AsNode("a"))
	if err != nil || snap.Step != 2 || !slices.Equal(snap.Nodes, []string{"a"}) || !slices.Equal(snap.Next, []string{"yes"}) || !snap.State.Flag {
		t.Fatalf("fork as a = %+v, %v", snap, err)
	}
	if s, err := c.Resume(ctx, "as-a"); err != nil || !slices.Equal(s.Log, []string{"a", "yes"}) {
		t.Fatalf("the fork's router did not pick yes: %+v, %v", s, err)
	}
	snap, err = c.Fork(ctx, "p", 1, "plain", set)
	if err != nil || snap.Step != 2 || !slices.Equal(snap.Nodes, []string{graph.UpdateNode}) || !slices.Equal(snap.Next, []string{"no"}) {
		t.Fatalf("fork with a plain update = %+v, %v", snap, err)
	}
	if _, err := c.Fork(ctx, "p", 1, "bad", graph.AsNode("a")); err == nil {
		t.Error("AsNode without an update was accepted")
	}
	if _, err := c.Fork(ctx, "p", 1, "bad", set, graph.AsNode("mars")); err == nil {
		t.Error("AsNode of an unknown node was accepted")
	}
}

func replayRerunsTheRest(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var runs sync.Map
	count := func(name string) graph.NodeFunc[counter] {
		return func(ctx context.Context, s counter) (counter, error) {
			n, _ := runs.LoadOrStore(name, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			return inc(name)(ctx, s)
		}
	}
	g := graph.New[counter]().AddNode("a", count("a")).AddNode("b", count("b")).AddNode("c", count("c")).
		AddEdge(graph.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp))
	if _, err := c.Run(ctx, "p", counter{}); err != nil {
		t.Fatal(err)
	}
	s, err := c.Replay(ctx, "p", 1, "r", graph.WithDurability(graph.DurabilityAsync))
	if err != nil || !slices.Equal(s.Log, []string{"a", "b", "c"}) {
		t.Fatalf("Replay = %+v, %v", s, err)
	}
	for name, want := range map[string]int32{"a": 1, "b": 2, "c": 2} {
		n, _ := runs.Load(name)
		if got := n.(*atomic.Int32).Load(); got != want {
			t.Errorf("%s ran %d times, want %d", name, got, want)
		}
	}
	if snap, _ := c.State(ctx, "r"); snap.Status != graph.StatusDone || snap.Step != 3 {
		t.Errorf("replayed run = %+v", snap)
	}
	if s, err := c.Replay(ctx, "p", 3, "r2"); err != nil || s.N != 3 {
		t.Errorf("Replay of the last step = %+v, %v (a no-op)", s, err)
	}
}

// fan is the state of the Send tests.
type fan struct {
	Items   []string
	Item    string         // one task's input
	Results []string       `graph:"append"`
	Lengths map[string]int `graph:"merge"`
	Summary string
}

func fanGraph(work graph.NodeFunc[fan]) *graph.Graph[fan] {
	return graph.New[fan]().
		AddNode("plan", func(_ context.Context, s fan) (fan, error) {
			s.Items = []string{"alpha", "be", "gamma"}
			return s, nil
		}).
		AddNode("work", work).
		AddNode("reduce", func(_ context.Context, s fan) (fan, error) {
			s.Summary = fmt.Sprintf("%d results, %d lengths", len(s.Results), len(s.Lengths))
			return s, nil
		}).
		AddEdge(graph.Start, "plan").
		AddSend("plan", func(s fan) []graph.Send[fan] {
			var out []graph.Send[fan]
			for _, it := range s.Items {
				in := s
				in.Item = it
				out = append(out, graph.Send[fan]{Node: "work", State: in})
			}
			return out
		}, "work").
		AddEdge("work", "reduce").AddEdge("reduce", graph.End)
}

func work(_ context.Context, s fan) (fan, error) {
	s.Results = append(s.Results, "did "+s.Item)
	if s.Lengths == nil {
		s.Lengths = map[string]int{}
	}
	s.Lengths[s.Item] = len(s.Item)
	return s, nil
}

func sendFansOut(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	c := compile(t, fanGraph(work), graph.WithCheckpointer(cp), graph.WithInterruptBefore("reduce"))
	_, err := c.Run(ctx, "s", fan{})
	if !errors.Is(err, graph.ErrPaused) {
		t.Fatal(err)
	}
	snap, _ := c.State(ctx, "s")
	if snap.Step != 2 || !slices.Equal(snap.Next, []string{"reduce"}) || snap.State.Item != "" ||
		!slices.Equal(snap.State.Results, []string{"did alpha", "did be", "did gamma"}) ||
		fmt.Sprint(snap.State.Lengths) != "map[alpha:5 be:2 gamma:5]" {
		t.Fatalf("after the fan-out: %+v", snap)
	}
	h, _ := c.History(ctx, "s")
	if len(h) != 3 || !slices.Equal(h[1].Next, []string{"work", "work", "work"}) || !slices.Equal(h[2].Nodes, []string{"work[0]", "work[1]", "work[2]"}) {
		t.Fatalf("history = %+v", h)
	}
	s, err := c.Resume(ctx, "s")
	if err != nil || s.Summary != "3 results, 3 lengths" {
		t.Fatalf("Resume = %+v, %v", s, err)
	}
}

func sendFailureRerunsOnlyUnfinished(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var fail atomic.Bool
	fail.Store(true)
	var mu sync.Mutex
	ran := map[string]int{}
	c := compile(t, fanGraph(func(ctx context.Context, s fan) (fan, error) {
		mu.Lock()
		ran[s.Item]++
		mu.Unlock()
		if s.Item == "be" && fail.Load() {
			return s, errors.New("be is unavailable")
		}
		return work(ctx, s)
	}), graph.WithCheckpointer(cp))
	_, err := c.Run(ctx, "sf", fan{})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "work" {
		t.Fatalf("err = %v", err)
	}
	snap, _ := c.State(ctx, "sf")
	if snap.Status != graph.StatusFailed || snap.Step != 1 || !slices.Equal(snap.Pending, []string{"work[0]", "work[2]"}) {
		t.Fatalf("State = %+v", snap)
	}
	fail.Store(false)
	s, err := c.Resume(ctx, "sf")
	if err != nil || !slices.Equal(s.Results, []string{"did alpha", "did be", "did gamma"}) || s.Summary != "3 results, 3 lengths" {
		t.Fatalf("Resume = %+v, %v", s, err)
	}
	if ran["alpha"] != 1 || ran["gamma"] != 1 || ran["be"] != 2 {
		t.Fatalf("task runs %v: only be may run again", ran)
	}
}

// review is a subgraph over its own state.
type review struct {
	Draft  string
	Notes  []string `graph:"append"`
	Passed bool
}

func reviewGraph(cp graph.Checkpointer, checks *atomic.Int32, opts ...graph.CompileOption) *graph.Compiled[review] {
	g := graph.New[review]().
		AddNode("check", func(_ context.Context, s review) (review, error) {
			checks.Add(1)
			s.Notes = append(s.Notes, "checked "+s.Draft)
			return s, nil
		}).
		AddNode("approve", func(_ context.Context, s review) (review, error) {
			s.Passed = true
			s.Notes = append(s.Notes, "approved")
			return s, nil
		}).
		AddEdge(graph.Start, "check").AddEdge("check", "approve").AddEdge("approve", graph.End)
	c, err := g.Compile(opts...)
	if err != nil {
		panic(err)
	}
	return c
}

func withReview(sub *graph.Compiled[review]) *graph.Graph[counter] {
	return graph.New[counter]().
		AddNode("write", inc("write")).
		AddSubgraph("review", graph.SubgraphMap(sub,
			func(p counter) review { return review{Draft: "v" + strconv.Itoa(p.N)} },
			func(p counter, r review) counter {
				p.Log = append(p.Log, r.Notes...)
				if r.Passed {
					p.N += 100
				}
				return p
			})).
		AddNode("ship", inc("ship")).
		AddEdge(graph.Start, "write").AddEdge("write", "review").AddEdge("review", "ship").AddEdge("ship", graph.End)
}

func subgraphStepsUnderParent(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var checks atomic.Int32
	c := compile(t, withReview(reviewGraph(nil, &checks)), graph.WithCheckpointer(cp))
	s, err := c.Run(ctx, "p", counter{})
	if err != nil || s.N != 102 || !slices.Equal(s.Log, []string{"write", "checked v1", "approved", "ship"}) {
		t.Fatalf("Run = %+v, %v", s, err)
	}
	h, err := c.History(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ci := range h {
		got = append(got, fmt.Sprintf("%s:%d:%s", ci.Namespace, ci.Step, strings.Join(ci.Nodes, "+")))
	}
	want := ":0:__start__ :1:write review@2:0:__start__ review@2:1:check review@2:2:approve :2:review :3:ship"
	if strings.Join(got, " ") != want {
		t.Fatalf("history:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	sub := reviewGraph(cp, &checks, graph.WithCheckpointer(cp))
	child, err := sub.State(ctx, graph.SubgraphRunID("p", "review", 2, -1))
	if err != nil || child.Status != graph.StatusDone || !child.State.Passed {
		t.Fatalf("the subgraph's run: %+v, %v", child, err)
	}
	runs, _ := c.ListRuns(ctx)
	if len(runs) != 1 || runs[0].ID != "p" {
		t.Fatalf("ListRuns lists subgraph runs: %+v", runs)
	}
	if err := c.DeleteRun(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.State(ctx, graph.SubgraphRunID("p", "review", 2, -1)); !errors.Is(err, graph.ErrRunNotFound) {
		t.Fatalf("the subgraph's run outlived its parent: %v", err)
	}
}

func subgraphInterruptPausesParent(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var checks atomic.Int32
	sub := reviewGraph(nil, &checks, graph.WithInterruptBefore("approve"))
	c := compile(t, withReview(sub), graph.WithCheckpointer(cp))
	_, err := c.Run(ctx, "p", counter{})
	if !errors.Is(err, graph.ErrPaused) || !strings.Contains(err.Error(), "in subgraph review: before approve") {
		t.Fatalf("Run: %v", err)
	}
	snap, _ := c.State(ctx, "p")
	if snap.Status != graph.StatusPaused || snap.Step != 1 || !slices.Equal(snap.Next, []string{"review"}) || snap.Reason != "in subgraph review: before approve" {
		t.Fatalf("parent = %+v", snap)
	}
	child, err := sub.State(ctx, graph.SubgraphRunID("p", "review", 2, -1))
	if err == nil {
		t.Fatal("a subgraph compiled without a checkpointer read the parent's store")
	}
	subOnStore := reviewGraph(nil, &checks, graph.WithCheckpointer(cp))
	child, err = subOnStore.State(ctx, graph.SubgraphRunID("p", "review", 2, -1))
	if err != nil || child.Status != graph.StatusPaused || child.Step != 1 || !slices.Equal(child.Next, []string{"approve"}) {
		t.Fatalf("subgraph run = %+v, %v", child, err)
	}
	if h, _ := c.History(ctx, "p"); len(h) != 4 || h[3].Namespace != "review@2" || h[3].Step != 1 {
		t.Fatalf("history of the paused parent: %+v", h)
	}
	s, err := c.Resume(ctx, "p")
	if err != nil || s.N != 102 || !slices.Equal(s.Log, []string{"write", "checked v1", "approved", "ship"}) {
		t.Fatalf("Resume = %+v, %v", s, err)
	}
	if checks.Load() != 1 {
		t.Fatalf("check ran %d times: the subgraph started over instead of resuming", checks.Load())
	}
}

func durabilityModesStoreTheSameHistory(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	for _, d := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
		g := line("a", "b", "c", "d")
		c := compile(t, g, graph.WithCheckpointer(cp), graph.WithInterruptAfter("b"), graph.WithDefaultDurability(d))
		id := "d-" + string(d)
		if _, err := c.Run(ctx, id, counter{}); !errors.Is(err, graph.ErrPaused) {
			t.Fatalf("%s: %v", d, err)
		}
		if snap, err := c.State(ctx, id); err != nil || snap.Step != 2 || snap.Status != graph.StatusPaused {
			t.Fatalf("%s: paused state = %+v, %v: a pause must be stored in every mode", d, snap, err)
		}
		s, err := c.Resume(ctx, id)
		if err != nil || s.N != 4 {
			t.Fatalf("%s: Resume = %+v, %v", d, s, err)
		}
		h, err := c.History(ctx, id)
		if err != nil || len(h) != 5 || h[4].Status != graph.StatusDone {
			t.Fatalf("%s: history = %+v, %v", d, h, err)
		}
	}
	c := compile(t, line("a"), graph.WithCheckpointer(cp))
	if _, err := c.Run(ctx, "bad", counter{}, graph.WithDurability("sometimes")); err == nil {
		t.Error("an unknown durability was accepted")
	}
}

func exitDurabilityWritesAtTheEnd(t *testing.T, cp graph.Checkpointer) {
	ctx := context.Background()
	var seen []int // records stored while each node ran
	look := func(name string) graph.NodeFunc[counter] {
		return func(ctx context.Context, s counter) (counter, error) {
			recs, err := cp.Records(ctx, "x")
			if err != nil && !errors.Is(err, graph.ErrRunNotFound) {
				return s, err
			}
			seen = append(seen, len(recs))
			return inc(name)(ctx, s)
		}
	}
	g := graph.New[counter]().AddNode("a", look("a")).AddNode("b", look("b")).AddNode("c", look("c")).
		AddEdge(graph.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.End)
	c := compile(t, g, graph.WithCheckpointer(cp), graph.WithInterruptAfter("b"))
	if _, err := c.Run(ctx, "x", counter{}, graph.WithDurability(graph.DurabilityExit)); !errors.Is(err, graph.ErrPaused) {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{0, 0}) {
		t.Fatalf("records in the store while the nodes ran: %v, want none before the call ended", seen)
	}
	recs, _ := cp.Records(ctx, "x")
	if len(recs) != 3 {
		t.Fatalf("%d records after the pause, want the 3 checkpoints", len(recs))
	}
	if _, err := c.Resume(ctx, "x", graph.WithDurability(graph.DurabilityExit)); err != nil {
		t.Fatal(err)
	}
	if seen[2] != 3 {
		t.Fatalf("records while c ran: %d, want the 3 of the first call only", seen[2])
	}
	if snap, _ := c.State(ctx, "x"); snap.Status != graph.StatusDone || snap.Step != 3 {
		t.Fatalf("State = %+v", snap)
	}
}
