package inspect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/run"
)

func TestReadEventsLeavesAnUnterminatedLastLineForLater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	complete := `{"kind":"run_start","run_id":"r","step":0}` + "\n" + `not json` + "\n" + `{"kind":"node_start","node":"qa","step":1}` + "\n"
	partial := `{"kind":"node_end","node":"q`
	if err := os.WriteFile(path, []byte(complete+partial), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEvents(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 2 || got.Events[1].Node != "qa" || got.Bad != 1 || got.Next != int64(len(complete)) {
		t.Fatalf("first read: %d events, %d bad, next %d (want 2, 1, %d)", len(got.Events), got.Bad, got.Next, len(complete))
	}
	// The writer finishes the line: the next read starts where the last stopped.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`a","step":1}` + "\n")
	f.Close()
	got, err = ReadEvents(path, got.Next, 0)
	if err != nil || len(got.Events) != 1 || got.Events[0].Kind != "node_end" || got.Events[0].Node != "qa" {
		t.Fatalf("second read: %+v %v", got, err)
	}
	// A long line (bigger than the read buffer) comes through whole.
	long := `{"kind":"custom","name":"note","data":{"text":"` + strings.Repeat("x", 200<<10) + `"}}` + "\n"
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(long)
	f.Close()
	got, err = ReadEvents(path, got.Next, 0)
	if err != nil || len(got.Events) != 1 || len(got.Events[0].Data) < 200<<10 {
		t.Fatalf("long line: %d events, %v", len(got.Events), err)
	}
}

func TestReadEventsStopsAtMax(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	os.WriteFile(path, []byte(strings.Repeat(`{"kind":"checkpoint"}`+"\n", 5)), 0o644)
	got, _ := ReadEvents(path, 0, 2)
	if len(got.Events) != 2 || got.Next != int64(2*len(`{"kind":"checkpoint"}`+"\n")) {
		t.Fatalf("max 2: %d events, next %d", len(got.Events), got.Next)
	}
}

func TestADamagedRunIsListedWithItsError(t *testing.T) {
	root := t.TempDir()
	bad := filepath.Join(root, run.DataDir, run.CheckpointsDir, "20260101-000000-bad000")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "0000000000000000.seg"), []byte("this is not a checkpoint segment at all, just text"), 0o644)
	store, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := store.List(context.Background())
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(runs) != 1 || runs[0].Err == nil || runs[0].DisplayStatus() != "damaged" {
		t.Fatalf("runs = %+v", runs)
	}
	if r := store.Get(context.Background(), "20260101-000000-bad000"); r.Err == nil {
		t.Fatal("Get of a damaged run: no error")
	}
}

func TestReportAndHaltFiles(t *testing.T) {
	root := t.TempDir()
	if _, err := ReadReport(root, "r1"); err == nil || !strings.Contains(err.Error(), "no report yet") {
		t.Fatalf("missing report: %v", err)
	}
	if HaltRequested(root, "r1") {
		t.Fatal("halt requested before any request")
	}
	if err := RequestHalt(root, "r1"); err != nil || !HaltRequested(root, "r1") {
		t.Fatalf("halt: %v", err)
	}
}

// BenchmarkReadEvents reads a 10,000-event log (what a run page and the
// event stream do).
func BenchmarkReadEvents(b *testing.B) {
	path := filepath.Join(b.TempDir(), "events.jsonl")
	line := `{"kind":"custom","run_id":"20260101-000000-abcdef","step":12,"node":"implementor","name":"llm_call","time":"2026-01-01T00:00:00Z","data":{"label":"implementor","prompt_tokens":1234,"completion_tokens":56}}` + "\n"
	os.WriteFile(path, []byte(strings.Repeat(line, 10000)), 0o644)
	b.SetBytes(int64(len(line) * 10000))
	for b.Loop() {
		got, err := ReadEvents(path, 0, 0)
		if err != nil || len(got.Events) != 10000 {
			b.Fatalf("%d events, %v", len(got.Events), err)
		}
	}
}
