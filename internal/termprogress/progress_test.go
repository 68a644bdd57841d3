package termprogress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/graph"
)

// A replayed log reads as lemmings printed it: one line per event a person
// acts on, each with the time since the run's start.
func TestAReplayPrintsTheWorkflowsLines(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int, p events.Payload) graph.Event {
		ev := events.Event("r1", p)
		ev.Time = start.Add(time.Duration(s) * time.Second)
		return ev
	}
	evs := []graph.Event{
		{Kind: graph.EventRunStart, Time: start},
		at(1, events.Progress{Done: 1, Failed: 0, Planned: 2, Milestone: 1, Milestones: 2, CostUSD: 0.5}),
		at(2, events.TaskPlanned{Task: "t2", Title: "Add TopWords"}),
		at(3, events.Action{Task: "t2", N: 1, Action: "edit", Path: "topwords.go", Result: "edited"}),
		at(4, events.Check{Task: "t2", Paths: []string{"topwords.go", "topwords_test.go"}, Problem: "topwords.go:3: undefined: x"}),
		at(5, events.Gate{Task: "t2", Gate: "test", ExitCode: 1}),
		at(6, events.QA{Task: "t2", Feedback: "the tests fail"}),
		at(7, events.Commit{Task: "t2", SHA: "0123456789abcdef"}),
		at(8, events.CLIRun{CLI: "qwen", ExitCode: 2, ToolCalls: 3, InputTokens: 1234567, OutputTokens: 89, CostUSD: 0.25, DurationMS: 1500}),
		at(9, events.Warning{Message: "index not updated"}),
		{Kind: graph.EventRunEnd, Time: start.Add(10 * time.Second), Status: "done", Reason: "the work passed"},
	}
	var out bytes.Buffer
	p := NewReplay(&out, false)
	for _, ev := range evs {
		p.Handle(ev)
	}
	p.Close()
	want := []string{
		"[0:00:02] task t2 Add TopWords",
		"[0:00:03]   t2 #1 edit topwords.go → edited",
		"[0:00:04]   check topwords.go, topwords_test.go FAILED: topwords.go:3: undefined: x",
		"[0:00:05]   gate test FAILED (exit 1)",
		"[0:00:06]   QA failed t2: the tests fail",
		"[0:00:07]   commit 0123456789 t2",
		"[0:00:08]   cli qwen EXIT 2: 3 tool calls, 1234567/89 tokens, $0.2500, 1.5s",
		"[0:00:09] warning: index not updated",
		"[0:00:10] run ended: done — the work passed",
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// With --json every event is its line, untouched.
func TestJSONOutputIsTheEventsAsTheyCame(t *testing.T) {
	var out bytes.Buffer
	p := NewReplay(&out, true)
	ev := events.Event("r1", events.Warning{Message: "x"})
	p.Handle(ev)
	if !strings.Contains(out.String(), `"name":"warning"`) || !strings.Contains(out.String(), `"data":{"message":"x"}`) {
		t.Errorf("%s", out.String())
	}
}
