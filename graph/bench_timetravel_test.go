package graph

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Benchmarks of the durability modes, fork, Send and subgraphs.

func benchStores(b *testing.B, f func(b *testing.B, cp Checkpointer, dir string)) {
	b.Run("memory", func(b *testing.B) { f(b, NewMemoryCheckpointer(), "") })
	b.Run("file", func(b *testing.B) {
		dir := b.TempDir()
		cp, err := NewFileCheckpointer(dir)
		if err != nil {
			b.Fatal(err)
		}
		f(b, cp, dir)
	})
}

var modes = []Durability{DurabilitySync, DurabilityAsync, DurabilityExit}

// BenchmarkDurabilityChain100: the Chain100 workload (one op is a run of 100
// steps, its creation and its end included) in each durability mode.
func BenchmarkDurabilityChain100(b *testing.B) {
	benchStores(b, func(b *testing.B, cp Checkpointer, _ string) {
		for _, d := range modes {
			b.Run(string(d), func(b *testing.B) {
				runChain(b, chain100(b, WithCheckpointer(cp), WithDefaultDurability(d)))
			})
		}
	})
}

// BenchmarkDurabilityLoop2k: one node looping 2,000 times per run (so the
// run's creation and end weigh little): the cost of a step in each mode.
func BenchmarkDurabilityLoop2k(b *testing.B) {
	const steps = 2000
	benchStores(b, func(b *testing.B, cp Checkpointer, _ string) {
		for _, d := range modes {
			b.Run(string(d), func(b *testing.B) {
				g := New[LoopState]().
					AddNode("loop", func(_ context.Context, s LoopState) (LoopState, error) {
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
				c, err := g.Compile(WithCheckpointer(cp), WithRecursionLimit(steps+1), WithDefaultDurability(d))
				if err != nil {
					b.Fatal(err)
				}
				seq := benchSeq.Add(1)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := c.Run(context.Background(), fmt.Sprintf("loop-%d-%d", seq, i), LoopState{}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			})
		}
	})
}

// BenchmarkFork: fork step 5,000 of a stored 10,000-step run, with a state
// update as a node (one op is one Fork; the fork is not run).
func BenchmarkFork(b *testing.B) {
	const steps = 10000
	benchStores(b, func(b *testing.B, cp Checkpointer, _ string) {
		g := New[LoopState]().
			AddNode("loop", func(_ context.Context, s LoopState) (LoopState, error) {
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
		seq := benchSeq.Add(1)
		base := fmt.Sprintf("base-%d", seq)
		if _, err := c.Run(ctx, base, LoopState{}); err != nil {
			b.Fatal(err)
		}
		update := WithUpdate(func(s LoopState) (LoopState, error) { s.I += 100; return s, nil })
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.Fork(ctx, base, steps/2, fmt.Sprintf("f-%d-%d", seq, i), update, AsNode("loop")); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/fork")
	})
}

type fanState struct {
	Item int
	Out  []int `graph:"append"`
}

// BenchmarkSendFanOut100: one step fans out 100 Send tasks, then a join;
// one op is one run. Reports the cost per task.
func BenchmarkSendFanOut100(b *testing.B) {
	const tasks = 100
	benchStores(b, func(b *testing.B, cp Checkpointer, _ string) {
		g := New[fanState]().
			AddNode("split", func(_ context.Context, s fanState) (fanState, error) { return s, nil }).
			AddNode("task", func(_ context.Context, s fanState) (fanState, error) {
				s.Out = append(s.Out, s.Item*2)
				return s, nil
			}).
			AddNode("join", func(_ context.Context, s fanState) (fanState, error) { return s, nil }).
			AddEdge(Start, "split").
			AddSend("split", func(s fanState) []Send[fanState] {
				out := make([]Send[fanState], tasks)
				for i := range out {
					out[i] = Send[fanState]{Node: "task", State: fanState{Item: i}}
				}
				return out
			}, "task").
			AddEdge("task", "join").AddEdge("join", End)
		c, err := g.Compile(WithCheckpointer(cp))
		if err != nil {
			b.Fatal(err)
		}
		seq := benchSeq.Add(1)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s, err := c.Run(context.Background(), fmt.Sprintf("fan-%d-%d", seq, i), fanState{})
			if err != nil || len(s.Out) != tasks {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks), "ns/task")
	})
}

// BenchmarkSubgraph10: a parent of three nodes whose middle one is a
// subgraph of 10 steps; one op is one run. Reports the cost per subgraph
// step (its run's creation and end included).
func BenchmarkSubgraph10(b *testing.B) {
	benchStores(b, func(b *testing.B, cp Checkpointer, _ string) {
		sg := New[ChainState]()
		prev := Start
		for i := range 10 {
			name := fmt.Sprintf("s%d", i)
			sg.AddNode(name, func(_ context.Context, s ChainState) (ChainState, error) {
				s.N++
				return s, nil
			}).AddEdge(prev, name)
			prev = name
		}
		sub, err := sg.AddEdge(prev, End).Compile()
		if err != nil {
			b.Fatal(err)
		}
		step := func(_ context.Context, s ChainState) (ChainState, error) { s.N++; return s, nil }
		c, err := New[ChainState]().AddNode("a", step).AddSubgraph("sub", SubgraphOf(sub)).AddNode("b", step).
			AddEdge(Start, "a").AddEdge("a", "sub").AddEdge("sub", "b").AddEdge("b", End).
			Compile(WithCheckpointer(cp))
		if err != nil {
			b.Fatal(err)
		}
		seq := benchSeq.Add(1)
		t0 := time.Now()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s, err := c.Run(context.Background(), fmt.Sprintf("sub-%d-%d", seq, i), ChainState{})
			if err != nil || s.N != 12 {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(time.Since(t0).Nanoseconds())/float64(b.N*10), "ns/substep")
	})
}
