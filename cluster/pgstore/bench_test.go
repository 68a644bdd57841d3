package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/pgtest"
)

var seq atomic.Int64

type loopState struct {
	I     int
	Items []string `graph:"append"`
}

// BenchmarkDurabilityPostgres: one node looping 1,000 times per run on the
// PostgreSQL store (local server, fsync off as the tests run it: the cost is
// the round trips), in each durability mode. Reports the cost per step, the
// run's creation (a connection of its own) and end included.
func BenchmarkDurabilityPostgres(b *testing.B) {
	const steps = 1000
	db, err := pgstore.Open(context.Background(), pgtest.New(b), pgstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	g := graph.New[loopState]().
		AddNode("loop", func(_ context.Context, s loopState) (loopState, error) {
			s.I++
			s.Items = append(s.Items, "item")
			return s, nil
		}).
		AddEdge(graph.Start, "loop").
		AddConditionalEdges("loop", func(s loopState) string {
			if s.I < steps {
				return "loop"
			}
			return graph.End
		}, "loop", graph.End)
	for _, d := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
		b.Run(string(d), func(b *testing.B) {
			c, err := g.Compile(graph.WithCheckpointer(db.Checkpointer()), graph.WithDefaultDurability(d))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := fmt.Sprintf("bench-%s-%d", d, seq.Add(1))
				if s, err := c.Run(context.Background(), id, loopState{}); err != nil || s.I != steps {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*steps), "µs/step")
		})
	}
}
