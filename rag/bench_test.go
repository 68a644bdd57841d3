package rag

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Benchmarks on GOROOT/src/net/http with the offline embedder:
//
//	go test -run '^$' -bench . -benchtime 3x ./rag/
//
// files/s, chunks/s and the latencies are wall-clock; cpu_files/s and
// cpu_ms/query use the process's CPU time (all threads) instead, which holds
// steady when other work shares the machine.

func BenchmarkIndexNetHTTP(b *testing.B) {
	root := filepath.Join(goroot(b), "src", "net", "http")
	var files, chunks int
	var size int64
	var wall, cpu time.Duration
	for b.Loop() {
		dir := b.TempDir()
		cpu0, t0 := cpuTime(), time.Now()
		ix, err := Open(dir, NewOfflineEmbedder())
		if err != nil {
			b.Fatal(err)
		}
		st, err := ix.Update(context.Background(), root, UpdateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ix.Close()
		wall += time.Since(t0)
		cpu += cpuTime() - cpu0
		files += st.FilesIndexed
		chunks += st.Chunks
		size = dirSize(b, dir)
	}
	b.ReportMetric(float64(files)/wall.Seconds(), "files/s")
	b.ReportMetric(float64(chunks)/wall.Seconds(), "chunks/s")
	b.ReportMetric(float64(files)/cpu.Seconds(), "cpu_files/s")
	b.ReportMetric(float64(size)/(1<<20), "index_MB")
	b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak_RSS_MB")
}

func BenchmarkReindexUnchanged(b *testing.B) {
	root := filepath.Join(goroot(b), "src", "net", "http")
	ix, _ := netHTTPIndex(b, NewOfflineEmbedder())
	embedded := 0
	for b.Loop() {
		st, err := ix.Update(context.Background(), root, UpdateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		embedded += st.ChunksEmbedded
	}
	b.ReportMetric(float64(embedded), "chunks_embedded")
}

func BenchmarkOpenNetHTTP(b *testing.B) {
	dir := b.TempDir()
	ix, err := Open(dir, NewOfflineEmbedder())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Update(context.Background(), filepath.Join(goroot(b), "src", "net", "http"), UpdateOptions{}); err != nil {
		b.Fatal(err)
	}
	ix.Close()
	for b.Loop() {
		ix, err := Open(dir, NewOfflineEmbedder())
		if err != nil || ix.Len() == 0 {
			b.Fatal(err)
		}
		ix.Close()
	}
}

// BenchmarkSearch runs 100 queries per iteration (the labelled questions,
// cycled) and reports the latency percentiles of single queries.
func BenchmarkSearch(b *testing.B) {
	ix, _ := netHTTPIndex(b, NewOfflineEmbedder())
	var qs []string
	for _, set := range []string{"nethttp.json", "nethttp_heldout.json"} {
		for _, c := range loadEval(b, set) {
			qs = append(qs, c.Q)
		}
	}
	for _, m := range []Method{Hybrid, Vector, Keyword} {
		b.Run(string(m), func(b *testing.B) {
			var lat []time.Duration
			cpu0 := cpuTime()
			for b.Loop() {
				for i := range 100 {
					t0 := time.Now()
					if _, err := ix.SearchWith(context.Background(), qs[i%len(qs)], 5, Filter{}, m); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
			}
			cpu := cpuTime() - cpu0
			slices.Sort(lat)
			b.ReportMetric(ms(lat[len(lat)/2]), "p50_ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99_ms")
			b.ReportMetric(ms(cpu)/float64(len(lat)), "cpu_ms/query")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func dirSize(tb testing.TB, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// peakRSS reads the process's high-water resident set size (VmHWM).
func peakRSS(tb testing.TB) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
