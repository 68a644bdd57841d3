package termprogress

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
)

func custom(at time.Time, node, name string, data map[string]any) graph.Event {
	raw, _ := json.Marshal(data)
	return graph.Event{Kind: graph.EventCustom, Node: node, Name: name, Time: at, Data: raw}
}

// A stored log of a long model call reads as the call went: the call's
// progress every 15 s of it (not every second it was recorded), and its
// end with the tokens and their rate.
func TestALogShowsALongCallsProgressAtAReadablePace(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := []graph.Event{{Kind: graph.EventRunStart, Time: start}, {Kind: graph.EventNodeStart, Node: "scope_agent", Time: start}}
	evs = append(evs, custom(start, "scope_agent", "llm_start", map[string]any{"label": "scope_agent", "model": "m", "prompt_tokens": 7200}))
	for s := 1; s <= 64; s++ {
		evs = append(evs, custom(start.Add(time.Duration(s)*time.Second), "scope_agent", "llm_progress",
			map[string]any{"label": "scope_agent", "tokens": 4 * s, "tokens_per_s": 4.0, "text": "tok "}))
	}
	evs = append(evs, custom(start.Add(65*time.Second), "scope_agent", "llm_call",
		map[string]any{"label": "scope_agent", "provider": "ollama", "completion_tokens": 256, "elapsed_ms": 65000, "tokens_per_s": 4.0}))
	var out bytes.Buffer
	p := NewReplay(&out, false)
	for _, ev := range evs {
		p.Handle(ev)
	}
	log := out.String()
	if n := strings.Count(log, "tokens so far"); n < 3 || n > 5 {
		t.Errorf("%d progress lines for a 65 s call, want one every 15 s:\n%s", n, log)
	}
	for _, want := range []string{"[0:00:15]   scope_agent: 60 tokens so far, 4.0 tok/s", "[0:01:05]   scope_agent: 256 tokens in 1m5s (4.0 tok/s)"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "tok tok") {
		t.Errorf("the streamed text is printed without --verbose:\n%s", log)
	}
}

// Every line starts with the time since the run's start in one width, from
// the first second to hours in.
func TestEveryProgressLineHasTheSameClockWidth(t *testing.T) {
	for _, d := range []time.Duration{0, 999 * time.Millisecond, 59 * time.Second, 61 * time.Minute, 9*time.Hour + 59*time.Minute + 59*time.Second, -time.Second} {
		if got := clockOf(d); !regexp.MustCompile(`^\d:\d\d:\d\d$`).MatchString(got) {
			t.Errorf("clockOf(%s) = %q", d, got)
		}
	}
	if got := clockOf(6*time.Minute + 32*time.Second); got != "0:06:32" {
		t.Errorf("clockOf(6m32s) = %q", got)
	}
}

// A call that has streamed one token so far says "1 token", with no rate:
// one token has none yet.
func TestOneTokenSoFarHasNoRate(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := []graph.Event{{Kind: graph.EventRunStart, Time: start}, {Kind: graph.EventNodeStart, Node: "implementor", Time: start},
		custom(start, "implementor", "llm_start", map[string]any{"label": "implementor", "model": "m"}),
		custom(start.Add(20*time.Second), "implementor", "llm_progress", map[string]any{"label": "implementor", "tokens": 1, "tokens_per_s": 0.0})}
	var out bytes.Buffer
	p := NewReplay(&out, false)
	for _, ev := range evs {
		p.Handle(ev)
	}
	if !strings.Contains(out.String(), "implementor: 1 token so far\n") {
		t.Errorf("progress of one token:\n%s", out.String())
	}
}
