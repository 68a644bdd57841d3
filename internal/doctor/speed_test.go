package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/run"
)

// The speed line says what a run's replies will take, and warns under 5
// tokens/s with a fix.
func TestTheSpeedCheckWarnsOfASlowModel(t *testing.T) {
	t.Parallel()
	check := func(steps ...llmtest.Step) *Check {
		t.Helper()
		srv := demo.NewServer(&demo.Script{}, steps...)
		defer srv.Close()
		cfg := demo.Config(srv.URL())
		router, err := llm.NewRouter(run.RouterConfigFrom(cfg, false))
		if err != nil {
			t.Fatal(err)
		}
		defer router.Close()
		c := speedCheck(context.Background(), router, cfg)
		if c == nil {
			t.Fatal("no speed check")
		}
		return c
	}
	if fast := check(); fast.Status != "ok" || !strings.Contains(fast.Detail, "an action reply (~300 tokens) takes") {
		t.Errorf("a fast model: %+v", fast)
	}
	slow := check(llmtest.Step{Name: "slow-doctor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: demo.DoctorReply, CompletionTokens: 30, EvalDuration: 15 * time.Second},
		Match: func(c llmtest.Call) bool { return c.Role() == prompts.Doctor }})
	if slow.Status != "warn" || !strings.Contains(slow.Detail, "2.0 tokens/s") || !strings.Contains(slow.Fix, "smaller model") {
		t.Errorf("a slow model: %+v", slow)
	}
}

func TestFailedCountsTheFailures(t *testing.T) {
	t.Parallel()
	if n := Failed([]Check{{Status: "ok"}, {Status: "fail"}, {Status: "warn"}, {Status: "fail"}}); n != 2 {
		t.Errorf("%d", n)
	}
}
