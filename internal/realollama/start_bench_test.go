package realollama

import (
	"testing"
	"time"
)

// BenchmarkRealOllamaStart measures what Start costs a test: generating the models,
// starting the server until /api/version answers, creating the three models, and stopping.
func BenchmarkRealOllamaStart(b *testing.B) {
	var ready, create time.Duration
	for b.Loop() {
		s := Start(b)
		ready += s.Timings.Ready
		create += s.Timings.Create
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ready.Milliseconds())/float64(b.N), "ready-ms/op")
	b.ReportMetric(float64(create.Milliseconds())/float64(b.N), "create-ms/op")
}
