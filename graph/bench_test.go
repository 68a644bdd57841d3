package graph

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// ChainState is the state of the Chain100 workload.
type ChainState struct {
	N   int
	Log []string `graph:"append"`
}

func chain100(b *testing.B, opts ...CompileOption) *Compiled[ChainState] {
	g := New[ChainState]()
	prev := Start
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("n%03d", i)
		entry := "step " + name
		g.AddNode(name, func(_ context.Context, s ChainState) (ChainState, error) {
			s.N++
			s.Log = append(s.Log, entry)
			return s, nil
		})
		g.AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, End)
	c, err := g.Compile(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// benchSeq keeps run ids unique across the calls of one benchmark function
// (the testing package calls it again with a larger b.N, on the same store).
var benchSeq atomic.Int64

func runChain(b *testing.B, c *Compiled[ChainState]) {
	ctx := context.Background()
	seq := benchSeq.Add(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := c.Run(ctx, fmt.Sprintf("run-%d-%d", seq, i), ChainState{})
		if err != nil || s.N != 100 {
			b.Fatalf("run: %v (N=%d)", err, s.N)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/step")
}

// BenchmarkChain100: 100 nodes in a line, no checkpointer; one op is one run.
func BenchmarkChain100(b *testing.B) { runChain(b, chain100(b)) }

// BenchmarkChain100Memory: the same with the in-memory checkpointer.
func BenchmarkChain100Memory(b *testing.B) {
	runChain(b, chain100(b, WithCheckpointer(NewMemoryCheckpointer())))
}

// BenchmarkChain100Durable: the same with the file checkpointer on a temp
// dir, default sync policy (one fsync when each run ends).
func BenchmarkChain100Durable(b *testing.B) {
	dir := b.TempDir()
	cp, err := NewFileCheckpointer(dir)
	if err != nil {
		b.Fatal(err)
	}
	runChain(b, chain100(b, WithCheckpointer(cp)))
	b.ReportMetric(float64(dirSize(b, dir))/float64(b.N*101), "disk-bytes/step")
}

func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// LoopItem is the element the Loop10k workload appends.
type LoopItem struct {
	I int
	S string
}

// LoopState is the state of the Loop10k workload.
type LoopState struct {
	I     int
	Items []LoopItem `graph:"append"`
}

// BenchmarkLoop10k: one node routing back to itself 10,000 times, appending a
// small struct each time, file checkpointer. Reports µs per step overall and
// for the first and last 1,000 steps, and bytes on disk per step.
func BenchmarkLoop10k(b *testing.B) {
	const steps = 10000
	dir := b.TempDir()
	cp, err := NewFileCheckpointer(dir)
	if err != nil {
		b.Fatal(err)
	}
	var marks [4]time.Time // as the node starts steps 1, 1001, 9000 and 10000
	g := New[LoopState]().
		AddNode("loop", func(_ context.Context, s LoopState) (LoopState, error) {
			switch s.I {
			case 0:
				marks[0] = time.Now()
			case 1000:
				marks[1] = time.Now()
			case steps - 1000:
				marks[2] = time.Now()
			case steps - 1:
				marks[3] = time.Now()
			}
			s.I++
			s.Items = append(s.Items, LoopItem{I: s.I, S: "item"})
			return s, nil
		}).
		AddEdge(Start, "loop").
		AddConditionalEdges("loop", func(s LoopState) string {
			if s.I < steps {
				return "loop"
			}
			return End
		}, "loop", End)
	c, err := g.Compile(WithCheckpointer(cp), WithRecursionLimit(steps+1))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var first, last time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := c.Run(ctx, fmt.Sprintf("loop-%d", i), LoopState{})
		if err != nil || len(s.Items) != steps {
			b.Fatalf("run: %v (%d items)", err, len(s.Items))
		}
		first += marks[1].Sub(marks[0])
		last += marks[3].Sub(marks[2])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*steps), "µs/step")
	b.ReportMetric(float64(first.Microseconds())/float64(b.N*1000), "first1000-µs/step")
	b.ReportMetric(float64(last.Microseconds())/float64(b.N*999), "last1000-µs/step")
	b.ReportMetric(float64(dirSize(b, dir))/float64(b.N*(steps+1)), "disk-bytes/step")
}
