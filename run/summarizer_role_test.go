package run_test

import (
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
)

// A summarizer model the server lacks (the default, qwen2.5-coder:1.5b, beside --model qwen15; here a name the demo server lacks) is
// said once at the start, and the primary's model writes the summaries: no failed call per task.
func TestASummarizerTheServerLacksGivesWayToThePrimary(t *testing.T) {
	var warn strings.Builder
	r := runLoop(t, runSetup{opts: func(o *run.Options) {
		s := o.Config.Roles[config.RoleSummarizer]
		s.Model = "qwen2.5-coder:0.5b"
		o.Config.Roles[config.RoleSummarizer] = s
		o.Warn = &warn
	}})
	if r.err != nil || r.result.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("run: %v %q", r.err, r.result.State.StopReason)
	}
	want := "warning: the summarizer qwen2.5-coder:0.5b is not available (model_not_found"
	if strings.Count(warn.String(), want) != 1 || !strings.Contains(warn.String(), "the primary model "+demo.PrimaryModel+" writes the task summaries") {
		t.Errorf("warnings:\n%s", warn.String())
	}
	calls := r.calls(prompts.Summarizer)
	if len(calls) == 0 {
		t.Fatal("no summary was asked for: the test no longer covers the summarizer")
	}
	for _, c := range calls {
		if c.Model != demo.PrimaryModel {
			t.Errorf("a summary went to %q", c.Model)
		}
	}
	for _, w := range r.custom("warning") {
		if strings.Contains(w["message"].(string), "summarizer unavailable") {
			t.Errorf("a summary failed: %v", w["message"])
		}
	}
}
