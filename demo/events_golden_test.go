package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden events.jsonl files")

// The demo's events.jsonl, with what differs from run to run (times,
// durations, speeds, commits, the run id, paths) replaced, is the event log's
// format: a change to how any event is written shows here as a diff.
func TestTheEventLogKeepsItsFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		// The whole workflow: both milestones, QA sending a task back,
		// supervisors in the step, polish, the report.
		{"events-full-pipeline.jsonl", Options{Blocking: true, Pipeline: "full"}},
		// The pipeline the remit's shape picks (pipeline.mode auto).
		{"events-blocking-supervisors.jsonl", Options{Blocking: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			o := tc.opts
			o.Dir, o.Warn = dir, io.Discard
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			data, err := os.ReadFile(filepath.Join(res.RunDir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			got := normalizeEvents(data, res.RunID, dir)
			golden := filepath.Join("testdata", "golden", tc.name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./demo -run TestTheEventLogKeepsItsFormat -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
				for i := 0; i < len(gl) || i < len(wl); i++ {
					var g, w []byte
					if i < len(gl) {
						g = gl[i]
					}
					if i < len(wl) {
						w = wl[i]
					}
					if !bytes.Equal(g, w) {
						t.Fatalf("events.jsonl line %d differs from %s:\n got: %s\nwant: %s", i+1, golden, g, w)
					}
				}
			}
		})
	}
}

var (
	evTime     = regexp.MustCompile(`"(time|at|started_at|created|updated)":"[^"]*"`)
	evNumber   = regexp.MustCompile(`"(duration_ns|elapsed_ms|elapsed|tokens_per_s|wait_ms|ms|bytes|seconds|wall_ms|duration_ms|duration)":-?[0-9.e+-]+`)
	evHash     = regexp.MustCompile(`(^|[^0-9A-Za-z.])([0-9a-f]{7,40})\b`)
	evDuration = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(ns|µs|ms|s)\b`)
)

// normalizeEvents replaces what a run cannot repeat and keeps every byte
// else, key order included. Of a call's llm_progress events it keeps the
// first (the first token): the later ones come once a second of streaming,
// as many as the machine's load makes it.
func normalizeEvents(data []byte, runID, dir string) []byte {
	data = firstProgressOnly(data)
	data = bytes.ReplaceAll(data, []byte(runID), []byte("RUN"))
	data = bytes.ReplaceAll(data, []byte(filepath.Dir(dir)), []byte("TMP"))
	data = evTime.ReplaceAll(data, []byte(`"$1":"T"`))
	// 1, not 0: a number written only when it is not zero stays written.
	data = evNumber.ReplaceAll(data, []byte(`"$1":1`))
	// A commit's hash (short or whole) has letters and digits; a number
	// or a word has not both.
	data = evHash.ReplaceAllFunc(data, func(m []byte) []byte {
		sub := evHash.FindSubmatch(m)
		if !bytes.ContainsAny(sub[2], "0123456789") || !bytes.ContainsAny(sub[2], "abcdef") {
			return m
		}
		return append(append([]byte(nil), sub[1]...), "HASH"...)
	})
	data = evDuration.ReplaceAll(data, []byte("D"))
	return data
}

// firstProgressOnly drops each llm_progress line after the first since its
// call's llm_start.
func firstProgressOnly(data []byte) []byte {
	var out [][]byte
	seen := map[string]bool{} // label → its call's first progress kept
	for _, line := range bytes.Split(data, []byte("\n")) {
		var ev struct {
			Name string
			Data struct{ Label string }
		}
		if json.Unmarshal(line, &ev) == nil {
			switch ev.Name {
			case "llm_start":
				seen[ev.Data.Label] = false
			case "llm_progress":
				if seen[ev.Data.Label] {
					continue
				}
				seen[ev.Data.Label] = true
			}
		}
		out = append(out, line)
	}
	return bytes.Join(out, []byte("\n"))
}
