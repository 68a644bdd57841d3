package graph

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type bigState struct {
	Doc   string // large, never changes after the first node
	I     int
	Items []LoopItem `graph:"append"`
	Trail []int      // plain slice: stored whole when it changes
}

func loopGraph(steps int, rewriteAt int) *Graph[bigState] {
	return New[bigState]().
		AddNode("init", func(_ context.Context, s bigState) (bigState, error) {
			s.Doc = strings.Repeat("knowledge ", 2000)
			return s, nil
		}).
		AddNode("loop", func(_ context.Context, s bigState) (bigState, error) {
			s.I++
			s.Items = append(s.Items, LoopItem{I: s.I, S: "x"})
			if s.I == rewriteAt {
				s.Items = []LoopItem{{I: -1, S: "rewritten"}}
			}
			if s.I%100 == 0 {
				s.Trail = append(s.Trail, s.I)
			}
			return s, nil
		}).
		AddEdge(Start, "init").AddEdge("init", "loop").
		AddConditionalEdges("loop", func(s bigState) string {
			if s.I < steps {
				return "loop"
			}
			return End
		}, "loop", End)
}

func TestDeltasStoreOnlyWhatChanged(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		const steps = 3000
		c := mustCompile(t, loopGraph(steps, 0), WithCheckpointer(cp))
		if _, err := c.Run(ctx, "big", bigState{}); err != nil {
			t.Fatal(err)
		}
		h, err := c.History(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != steps+2 {
			t.Fatalf("%d checkpoints", len(h))
		}
		if h[1].Bytes < 20000 || !slices.Contains(h[1].Changed, "Doc") {
			t.Errorf("the step that wrote Doc stored %d bytes, changed %v", h[1].Bytes, h[1].Changed)
		}
		early, late := h[12], h[steps-8]
		if !slices.Equal(early.Changed, []string{"I", "Items"}) || !slices.Equal(late.Changed, []string{"I", "Items"}) {
			t.Errorf("changed fields: %v / %v", early.Changed, late.Changed)
		}
		if late.Bytes > early.Bytes+8 || late.Bytes > 200 {
			t.Errorf("a delta grew with the list: %d bytes at step %d vs %d at step %d", late.Bytes, late.Step, early.Bytes, early.Step)
		}
		snaps := 0
		for _, ci := range h {
			if ci.Snapshot {
				snaps++
			}
		}
		if snaps != 1 {
			t.Errorf("%d snapshots; with default settings and a 20 KB state, only the first", snaps)
		}
		st, err := c.State(ctx, "big")
		if err != nil || len(st.State.Items) != steps || st.State.Items[steps-1].I != steps || len(st.State.Doc) != 20000 || len(st.State.Trail) != 30 {
			t.Fatalf("state: items=%d err=%v", len(st.State.Items), err)
		}
	})
}

func TestRewrittenAppendFieldIsStoredWhole(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		c := mustCompile(t, loopGraph(20, 10), WithCheckpointer(cp))
		out, err := c.Run(ctx, "rw", bigState{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.State(ctx, "rw")
		if err != nil || !slices.Equal(st.State.Items, out.Items) || len(out.Items) != 11 || out.Items[0].I != -1 {
			t.Fatalf("stored %v, returned %v, %v", st.State.Items, out.Items, err)
		}
	})
}

func TestSnapshotsStayProportionalAndPruningIsSafe(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		const steps = 400
		c := mustCompile(t, loopGraph(steps, 0), WithCheckpointer(cp), WithSnapshotBytes(4096))
		final, err := c.Run(ctx, "p", bigState{})
		if err != nil {
			t.Fatal(err)
		}
		h, _ := c.History(ctx, "p")
		var snapSteps []int
		for _, ci := range h {
			if ci.Snapshot {
				snapSteps = append(snapSteps, ci.Step)
			}
		}
		// The state is ~20 KB, so a snapshot comes once ~20 KB of deltas were written.
		if len(snapSteps) < 2 || len(snapSteps) > 6 {
			t.Fatalf("snapshots at %v", snapSteps)
		}
		for _, step := range []int{0, 1, 5, snapSteps[1] - 1, snapSteps[1], steps/2 + 3, steps + 1} {
			s, err := c.StateAt(ctx, "p", step)
			want := max(step-1, 0)
			if err != nil || s.I != want || len(s.Items) != want {
				t.Fatalf("StateAt(%d) = I %d, %d items, %v", step, s.I, len(s.Items), err)
			}
		}
		keep := snapSteps[1] + 5
		freed, err := c.Prune(ctx, "p", keep)
		if err != nil || freed <= 0 {
			t.Fatalf("Prune = %d, %v", freed, err)
		}
		if _, err := c.StateAt(ctx, "p", snapSteps[1]-1); !errors.Is(err, ErrStepNotFound) {
			t.Errorf("a pruned step still loads: %v", err)
		}
		for step := keep; step <= steps+1; step++ {
			if s, err := c.StateAt(ctx, "p", step); err != nil || s.I != step-1 {
				t.Fatalf("after pruning, StateAt(%d) = %d, %v", step, s.I, err)
			}
		}
		// Compaction: keep only the latest state.
		if _, err := c.Prune(ctx, "p", steps+1); err != nil {
			t.Fatal(err)
		}
		h, _ = c.History(ctx, "p")
		if len(h) != 1 || h[0].Step != steps+1 || !h[0].Snapshot {
			t.Fatalf("after compaction: %+v", h)
		}
		st, err := c.State(ctx, "p")
		if err != nil || st.Status != StatusDone || !slices.Equal(st.State.Items, final.Items) || st.State.Doc != final.Doc {
			t.Fatalf("after compaction: %v %v", st.Status, err)
		}
		if fc, ok := cp.(*FileCheckpointer); ok {
			ents, _ := os.ReadDir(filepath.Join(fc.Dir(), "p"))
			if len(ents) != 2 { // lock + one segment
				t.Errorf("files after compaction: %v", ents)
			}
		}
	})
}

func TestPruneKeepsAPausedRunResumable(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		c := mustCompile(t, line("a", "b", "c"), WithCheckpointer(cp), WithInterruptBefore("c"))
		if _, err := c.Run(ctx, "x", simple{}); !errors.Is(err, ErrPaused) {
			t.Fatal(err)
		}
		if _, err := c.Prune(ctx, "x", 100); err != nil {
			t.Fatal(err)
		}
		snap, err := c.State(ctx, "x")
		if err != nil || snap.Status != StatusPaused || snap.Step != 2 || snap.Reason != "before c" {
			t.Fatalf("after prune: %+v %v", snap, err)
		}
		s, err := c.Resume(ctx, "x")
		if err != nil || !slices.Equal(s.Log, []string{"a", "b", "c"}) {
			t.Fatalf("resume after prune: %+v %v", s, err)
		}
		if err := c.DeleteRun(ctx, "x"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.State(ctx, "x"); !errors.Is(err, ErrRunNotFound) {
			t.Fatalf("deleted run: %v", err)
		}
	})
}
