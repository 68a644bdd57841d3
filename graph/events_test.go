package graph

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEventsArriveInOrderAtEverySink(t *testing.T) {
	var a, b []string
	first := SinkFunc(func(e Event) { a = append(a, e.Kind+":"+e.Node) })
	second := SinkFunc(func(e Event) { b = append(b, e.Kind+":"+e.Node) })
	dir := t.TempDir()
	jl, err := OpenJSONLSink(filepath.Join(dir, "runs", "r", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	g := New[simple]().
		AddNode("a", func(ctx context.Context, s simple) (simple, error) {
			Emit(ctx, "note", map[string]int{"n": 7})
			s.N++
			return s, nil
		}).
		AddNode("b", func(_ context.Context, s simple) (simple, error) { return s, Interrupt("look") }).
		AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", End)
	c := mustCompile(t, g, WithCheckpointer(NewMemoryCheckpointer()), WithSinks(first, second, jl))
	_, err = c.Run(context.Background(), "r", simple{})
	if !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	if err := jl.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"run_start:", "checkpoint:", "node_start:a", "custom:a", "node_end:a", "checkpoint:",
		"node_start:b", "node_end:b", "checkpoint:", "interrupt:", "run_end:"}
	if !slices.Equal(a, want) || !slices.Equal(b, want) {
		t.Fatalf("events\n got %v\n and %v\nwant %v", a, b, want)
	}
	f, _ := os.Open(filepath.Join(dir, "runs", "r", "events.jsonl"))
	defer f.Close()
	var lines []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("bad JSONL line %q: %v", sc.Text(), err)
		}
		lines = append(lines, e)
	}
	if len(lines) != len(want) {
		t.Fatalf("JSONL has %d lines, want %d", len(lines), len(want))
	}
	end := lines[4]
	if end.Kind != EventNodeEnd || end.Duration <= 0 || !slices.Equal(end.Changed, []string{"N"}) || end.Step != 1 {
		t.Errorf("node_end = %+v", end)
	}
	if cp := lines[5]; cp.Kind != EventCheckpoint || cp.Bytes <= 0 || !slices.Equal(cp.Next, []string{"b"}) {
		t.Errorf("checkpoint = %+v", cp)
	}
	if cu := lines[3]; cu.Name != "note" || string(cu.Data) != `{"n":7}` || cu.RunID != "r" {
		t.Errorf("custom = %+v", cu)
	}
	if last := lines[len(lines)-1]; last.Status != StatusPaused || last.Reason != "look" {
		t.Errorf("run_end = %+v", last)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestBadSinksDoNotHurtTheRun(t *testing.T) {
	var seen []Event
	good := SinkFunc(func(e Event) { seen = append(seen, e) })
	panicky := SinkFunc(func(e Event) {
		if e.Kind == EventNodeStart {
			panic("sink bug")
		}
	})
	broken := NewJSONLSink(failingWriter{})
	c := mustCompile(t, line("a", "b"), WithCheckpointer(NewMemoryCheckpointer()), WithSinks(panicky, broken, good))
	s, err := c.Run(context.Background(), "r", simple{})
	if err != nil || s.N != 2 {
		t.Fatalf("run with bad sinks: %+v, %v", s, err)
	}
	if broken.Err() == nil || !strings.Contains(broken.Err().Error(), "disk on fire") {
		t.Errorf("JSONL sink error = %v", broken.Err())
	}
	var sinkErr, ends int
	for _, e := range seen {
		if e.Kind == EventError && strings.Contains(e.Error, "panicked") && strings.Contains(e.Error, "sink bug") {
			sinkErr++
		}
		if e.Kind == EventRunEnd {
			ends++
		}
	}
	if sinkErr != 1 || ends != 1 {
		t.Fatalf("good sink saw %d sink errors and %d run ends: %+v", sinkErr, ends, seen)
	}
}

func TestEmitOutsideARunDoesNothing(t *testing.T) {
	Emit(context.Background(), "x", func() {}) // must not panic
}

// A torn last line (a process killed while writing it) is closed before the
// next event, which then reads back whole.
func TestJSONLSinkClosesATornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "events.jsonl")
	s, err := OpenJSONLSink(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Handle(Event{Kind: EventRunStart, RunID: "r"})
	s.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"kind":"node_start","run_id":"r","no`)
	f.Close()
	s, err = OpenJSONLSink(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Handle(Event{Kind: EventRunEnd, RunID: "r", Status: StatusDone})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var ev Event
	if len(lines) != 3 || json.Unmarshal([]byte(lines[2]), &ev) != nil || ev.Kind != EventRunEnd {
		t.Fatalf("the event after a torn line must read back on a line of its own:\n%s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("event log mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("its folder's mode %v, want 0700", fi.Mode().Perm())
	}
}
