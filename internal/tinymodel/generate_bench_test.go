package tinymodel

import (
	"os"
	"testing"
)

// BenchmarkGenerate measures writing the two GGUF files and three Modelfiles.
func BenchmarkGenerate(b *testing.B) {
	dir := b.TempDir()
	var size int64
	for b.Loop() {
		s, err := Generate(dir, 1)
		if err != nil {
			b.Fatal(err)
		}
		info, err := os.Stat(s.ChatGGUF)
		if err != nil {
			b.Fatal(err)
		}
		size = info.Size()
	}
	b.ReportMetric(float64(size), "gguf-bytes")
}
