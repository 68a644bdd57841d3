package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/inspect"
)

// A run's page follows a model call in flight: the stream carries each
// progress event with the text that arrived (for the "now" line, not the
// timeline), and the timeline keeps the call's other events.
func TestTheRunPageFollowsAModelCallInFlight(t *testing.T) {
	f := newFixture(t, withPaused)
	events := inspect.EventsPath(f.repo, f.paused)
	before, _ := os.ReadFile(events)
	at := time.Now().UTC().Format(time.RFC3339Nano)
	fh, _ := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"kind":"custom","step":9,"node":"implementor","name":"llm_start","time":"` + at + `","data":{"label":"implementor","model":"m","prompt_tokens":1800}}` + "\n")
	fh.WriteString(`{"kind":"custom","step":9,"node":"implementor","name":"llm_progress","time":"` + at + `","data":{"label":"implementor","tokens":12,"tokens_per_s":3,"text":"func Hamming("}}` + "\n")
	fh.Close()

	_, page := f.get("/runs/" + f.paused)
	mustContain(t, page, `id="now"`, `id="stream"`, "implementor asks m (prompt ~1800 tokens)")
	if strings.Contains(page, "12 tokens, 3.0 tok/s") {
		t.Error("the timeline has a row for every progress event")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/runs/"+f.paused+"/events?from="+itoa(len(before)), nil)
	resp, err := f.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var got []map[string]any
	for len(got) < 2 && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatal(err)
			}
			got = append(got, m)
		}
	}
	if len(got) != 2 || got[0]["kind"] != "llm_start" || got[0]["row"] != true {
		t.Fatalf("stream: %v", got)
	}
	if p := got[1]; p["kind"] != "llm_progress" || p["row"] != false || p["stream"] != "func Hamming(" || p["text"] != "implementor: 12 tokens, 3.0 tok/s" {
		t.Errorf("progress event on the stream: %v", p)
	}
}

// A run cut off inside a long step (a kill during a model call) lasted until
// its last event, not its last checkpoint: the runs page says so.
func TestTheDurationOfACutOffRunCountsToItsLastEvent(t *testing.T) {
	f := newFixture(t, withPaused)
	store, _ := inspect.Open(f.repo)
	r, err := store.Find(context.Background(), f.paused)
	if err != nil {
		t.Fatal(err)
	}
	later := r.State.StartedAt.Add(5*time.Minute + 7*time.Second).Format(time.RFC3339Nano)
	fh, _ := os.OpenFile(inspect.EventsPath(f.repo, f.paused), os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"kind":"custom","step":3,"node":"task_planner","name":"llm_progress","time":"` + later + `","data":{"tokens":900}}` + "\n")
	fh.Close()
	_, body := f.get("/")
	row := regexp.MustCompile(`(?s)<tr data-run="` + f.paused + `">.*?</tr>`).FindString(body)
	if !strings.Contains(row, "5m7s") {
		t.Errorf("the run's duration is not counted to its last event:\n%s", row)
	}
}

// A resume of a crashed run is a row of the run's timeline in status's
// words, with where the cut-off step's edits are kept.
func TestTheTimelineMarksAResumeAndItsRescue(t *testing.T) {
	f := newFixture(t, withPaused)
	at := time.Now().UTC().Format(time.RFC3339Nano)
	fh, _ := os.OpenFile(inspect.EventsPath(f.repo, f.paused), os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"kind":"custom","step":0,"name":"world_reset","time":"` + at + `","data":{"to":"4910ae7b576a54285c20ae4e543d2f289f1bce83","from":"4910ae7b57 with uncommitted changes","step":6,"rescue":"lemmings/r-rescue"}}` + "\n")
	fh.WriteString(`{"kind":"run_start","step":6,"time":"` + at + `","status":"running","next":["implementor"]}` + "\n")
	fh.Close()
	_, page := f.get("/runs/" + f.paused)
	mustContain(t, page, "resumed at step 6 (status: crashed)",
		"work tree put back at 4910ae7b57: the step that was cut off runs again; what it had left is on branch lemmings/r-rescue")
}
