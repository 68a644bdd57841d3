package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// TestUnreachableFixFitsTheCause: the advice for a local server that cannot
// be reached follows why (a name that does not resolve is not fixed by
// starting a server; a configured address is not fixed by setting one).
// doctor measures the primary model's speed with one short call and says
// what a run's replies will take; under 5 tokens/s it warns, with a fix.
func TestDoctorMeasuresThePrimaryModelsSpeed(t *testing.T) {
	speed := func(steps ...llmtest.Step) map[string]any {
		t.Helper()
		srv := demo.NewServer(&demo.Script{}, steps...)
		defer srv.Close()
		c := newCLI(t)
		c.config(scriptedConfig(srv.URL(), "blocking"))
		r := c.run(prepared(t), "--json", "doctor", "--no-supervisors")
		for _, l := range jsonLines(t, r.stdout) {
			if l["check"] == "speed" {
				return l
			}
		}
		t.Fatalf("no speed line:\n%s\n%s", r.stdout, r.stderr)
		return nil
	}
	fast := speed()
	if fast["status"] != "ok" || !regexp.MustCompile(`^qwen2\.5-coder:14b: generates \d+\.\d tokens/s \(\d+ tokens in [\d.]+s\), reads the prompt at \d+\.\d tokens/s \(\d+ tokens in [\d.]+s\); the call took [\d.]+s, its first token after [\d.]+s \(loading the model included\): an action reply \(~300 tokens\) takes ~\d+s, a code reply \(~1500\) ~\d+s$`).MatchString(fmt.Sprint(fast["detail"])) {
		t.Errorf("a fast model: %v", fast)
	}
	// Each rate agrees with its own tokens and seconds: a reply generated in
	// 0.21 s of a call that took 1.5 s (loading, prompt) is 100 tokens/s.
	loaded := speed(llmtest.Step{Name: "loading-doctor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: demo.DoctorReply, CompletionTokens: 21, EvalDuration: 210 * time.Millisecond, Latency: 1500 * time.Millisecond},
		Match: func(c llmtest.Call) bool { return c.Role() == prompts.Doctor }})
	rates := regexp.MustCompile(`([\d.]+) tokens/s \((\d+) tokens in ([\d.]+)s\)`).FindAllStringSubmatch(fmt.Sprint(loaded["detail"]), -1)
	if len(rates) != 2 || !strings.Contains(fmt.Sprint(loaded["detail"]), "generates 100.0 tokens/s (21 tokens in 0.21s)") ||
		!regexp.MustCompile(`the call took 1\.[5-9]s`).MatchString(fmt.Sprint(loaded["detail"])) {
		t.Errorf("a model that loads first: %v", loaded)
	}
	for _, m := range rates {
		rate, _ := strconv.ParseFloat(m[1], 64)
		tokens, _ := strconv.ParseFloat(m[2], 64)
		secs, _ := strconv.ParseFloat(m[3], 64)
		if got := tokens / secs; math.Abs(got-rate) > rate*0.1 {
			t.Errorf("%q: %v tokens in %vs is %.1f tokens/s, not %v", m[0], tokens, secs, got, rate)
		}
	}
	slow := speed(llmtest.Step{Name: "slow-doctor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: demo.DoctorReply, CompletionTokens: 30, EvalDuration: 15 * time.Second},
		Match: func(c llmtest.Call) bool { return c.Role() == prompts.Doctor }})
	if slow["status"] != "warn" || !strings.Contains(fmt.Sprint(slow["detail"]), "2.0 tokens/s") || !strings.Contains(fmt.Sprint(slow["detail"]), "a run will be slow") ||
		!strings.Contains(fmt.Sprint(slow["fix"]), "smaller model") {
		t.Errorf("a slow model: %v", slow)
	}
}
