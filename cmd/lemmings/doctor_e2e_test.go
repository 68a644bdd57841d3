package main

import (
	"fmt"
	"regexp"
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
	if fast["status"] != "ok" || !regexp.MustCompile(`^qwen2\.5-coder:14b: \d+\.\d tokens/s \(\d+ tokens in .*: an action reply \(~300 tokens\) takes ~\d+s, a code reply \(~1500\) ~\d+s$`).MatchString(fmt.Sprint(fast["detail"])) {
		t.Errorf("a fast model: %v", fast)
	}
	slow := speed(llmtest.Step{Name: "slow-doctor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: demo.DoctorReply, CompletionTokens: 30, EvalDuration: 15 * time.Second},
		Match: func(c llmtest.Call) bool { return c.Role() == prompts.Doctor }})
	if slow["status"] != "warn" || !strings.Contains(fmt.Sprint(slow["detail"]), "2.0 tokens/s") || !strings.Contains(fmt.Sprint(slow["detail"]), "a run will be slow") ||
		!strings.Contains(fmt.Sprint(slow["fix"]), "smaller model") {
		t.Errorf("a slow model: %v", slow)
	}
}
