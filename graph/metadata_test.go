package graph

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
)

// A checkpoint whose metadata cannot be made (the push of the step's work
// failed) is not stored: the run fails at the step before, and a resume runs
// the step again and stores it with its metadata.
func TestCheckedMetadataFailureStoresNoCheckpoint(t *testing.T) {
	stores(t, func(t *testing.T, cp Checkpointer) {
		ctx := context.Background()
		var refuse atomic.Bool
		pushFailed := errors.New("push refused")
		c := mustCompile(t, line("a", "b", "c"), WithCheckpointer(cp),
			WithCheckedMetadata(func(_ context.Context, s simple) (map[string]string, error) {
				if refuse.Load() && s.N == 2 {
					return nil, pushFailed
				}
				return map[string]string{"n": strconv.Itoa(s.N)}, nil
			}))
		refuse.Store(true)
		_, err := c.Run(ctx, "m", simple{})
		if !errors.Is(err, pushFailed) {
			t.Fatalf("Run: %v, want the metadata error", err)
		}
		snap, err := c.State(ctx, "m")
		if err != nil || snap.Status != StatusFailed || snap.Step != 1 || snap.Metadata["n"] != "1" || !slices.Equal(snap.Next, []string{"b"}) {
			t.Fatalf("State = %+v, %v; want failed at step 1, b next", snap, err)
		}
		refuse.Store(false)
		s, err := c.Resume(ctx, "m")
		if err != nil || !slices.Equal(s.Log, []string{"a", "b", "c"}) {
			t.Fatalf("Resume = %+v, %v", s, err)
		}
		h, _ := c.History(ctx, "m")
		if len(h) != 4 || h[2].Metadata["n"] != "2" {
			t.Fatalf("history %+v: want step 2 stored once, with its metadata", h)
		}
	})
}

func TestCheckedMetadataMustTakeTheStateType(t *testing.T) {
	_, err := line("a").Compile(WithCheckpointer(NewMemoryCheckpointer()),
		WithCheckedMetadata(func(context.Context, int) (map[string]string, error) { return nil, nil }))
	if err == nil {
		t.Fatal("Compile accepted a metadata function of another state type")
	}
}
