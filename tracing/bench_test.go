package tracing_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/tracing"
	"github.com/lemmings-dev/lemmings/tracing/otlptest"
)

// chain is graph's Chain100 workload: 100 trivial nodes in a line.
func chain(b *testing.B, sinks ...graph.Sink) *graph.Compiled[state] {
	g := graph.New[state]()
	prev := graph.Start
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("n%03d", i)
		g.AddNode(name, func(_ context.Context, s state) (state, error) { s.N++; return s, nil })
		g.AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.End)
	c, err := g.Compile(graph.WithSinks(sinks...))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func runChain(b *testing.B, c *graph.Compiled[state], ctx context.Context) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s, err := c.Run(ctx, fmt.Sprintf("run-%d", i), state{}); err != nil || s.N != 100 {
			b.Fatalf("run: %v (N=%d)", err, s.N)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/step")
}

// BenchmarkChain100TracingOff: what a run pays with tracing off — no sink,
// nothing attached (the same as graph's BenchmarkChain100).
func BenchmarkChain100TracingOff(b *testing.B) {
	runChain(b, chain(b), context.Background())
}

// BenchmarkChain100TracingOn: each run its own trace, as each lemmings run
// is — the exporter opened, a span per step, the batch sent over OTLP/HTTP
// to an endpoint on loopback that discards it, and the flush at the end.
func BenchmarkChain100TracingOn(b *testing.B) {
	d := otlptest.NewDiscard()
	defer d.Close()
	cfg := tracing.Config{Enabled: true, Endpoint: d.URL(), Getenv: func(string) string { return "" }}
	var tr *tracing.Run // this iteration's: the graph is compiled once
	c := chain(b, graph.SinkFunc(func(e graph.Event) { tr.Handle(e) }))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("run-%d", i)
		var err error
		tr, err = tracing.Start(context.Background(), cfg, tracing.RunInfo{RunID: id}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if s, err := c.Run(tr.Attach(context.Background()), id, state{}); err != nil || s.N != 100 {
			b.Fatalf("run: %v (N=%d)", err, s.N)
		}
		if err := tr.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/step")
	b.ReportMetric(float64(d.Bytes())/float64(b.N*100), "export-bytes/step")
}
