package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/internal/phoenix"
	"github.com/lemmings-dev/lemmings/tracing"
	"github.com/lemmings-dev/lemmings/tracing/otlptest"
)

// TestTracesInPhoenix runs the demo's remit with the built binary, paused for
// the milestones and resumed, sending its trace to a real Arize Phoenix
// through the standard OTEL_EXPORTER_OTLP_ENDPOINT; then reads the trace back
// through Phoenix's REST API and looks at it in Phoenix's UI with headless
// Chromium. make test-traces runs it (LEMMINGS_TEST_PHOENIX=1);
// LEMMINGS_SCREENSHOTS=dir also saves the screenshot docs/observability.md
// shows.
func TestTracesInPhoenix(t *testing.T) {
	ph := phoenix.Start(t)
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	// The standard variables: where spans go, and the Phoenix project
	// they land in (a resource attribute).
	const project = "lemmings-e2e"
	c := newCLI(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+ph.URL, "OTEL_RESOURCE_ATTRIBUTES=openinference.project.name="+project)
	// A real gate that fails t2's first attempt in milliseconds (no Go build).
	c.config(scriptedConfig(srv.URL(), "background") + `gates:
  - name: test
    command: "! grep -qF 'counts[ws[i]] < counts[ws[j]]' topwords.go 2>/dev/null"
tracing:
  enabled: true
  prompts: true
`)
	repo := prepared(t)
	first := c.run(repo, "run", demo.Remit, "--approve", "milestones")
	if first.code != exitPaused {
		t.Fatalf("run --approve milestones: exit %d\n%s\n%s", first.code, first.stdout, first.stderr)
	}
	second := c.run(repo, "resume", "--approve")
	if second.code != 0 {
		t.Fatalf("resume --approve: exit %d\n%s\n%s", second.code, second.stdout, second.stderr)
	}
	runs, err := os.ReadDir(filepath.Join(repo, ".lemmings", "runs"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	runID := runs[0].Name()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stored []phoenix.Span
	prev := -1
	stored, err = ph.WaitSpans(ctx, project, func(spans []phoenix.Span) bool {
		// Phoenix stores in the background: wait for the report step and
		// for two reads in a row to agree.
		done := false
		for _, s := range spans {
			done = done || s.Name == "report"
		}
		settled := done && len(spans) == prev
		prev = len(spans)
		return settled
	})
	if err != nil {
		t.Fatal(err)
	}
	spans := make([]otlptest.Span, len(stored))
	byID := map[string]phoenix.Span{}
	for i, s := range stored {
		spans[i] = s.Span
		byID[s.SpanID] = s
	}
	tr, err := otlptest.NewTree(spans)
	if err != nil {
		t.Fatal(err)
	}
	root := tr.Root
	resumes := tr.Named("lemmings resume")
	if root.Name != "lemmings run" || root.Attrs[tracing.AttrRunID] != runID || len(resumes) != 1 || resumes[0].ParentID != root.SpanID {
		t.Fatalf("not one run span %s with its resume under it:\n%s", runID, tr.Shape(1))
	}
	// Both parts say where their trace went.
	for _, out := range []string{first.stdout, second.stdout} {
		if want := "trace " + root.TraceID + " → " + ph.URL + "/v1/traces"; !strings.Contains(out, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, out)
		}
	}
	if root.Attrs[tracing.AttrRunStatus] != "paused" || resumes[0].Attrs[tracing.AttrRunStatus] != "done" || resumes[0].StatusCode != "STATUS_CODE_OK" {
		t.Errorf("run %v, resume %v %s", root.Attrs, resumes[0].Attrs, resumes[0].StatusCode)
	}
	var models, gates, commits, failedGates int
	var call *otlptest.Span
	for _, s := range spans {
		if s.Attrs[tracing.AttrRunID] != runID {
			t.Errorf("span %s lacks the run id: %v", s.Name, s.Attrs)
		}
		parent := tr.ByID[s.ParentID]
		switch {
		case strings.HasPrefix(s.Name, "chat "):
			models++
			if byID[s.SpanID].PhoenixKind != "LLM" {
				t.Errorf("Phoenix took %s for a %s span, not a model call", s.Name, byID[s.SpanID].PhoenixKind)
			}
			in, _ := s.Attrs["gen_ai.usage.input_tokens"].(int64)
			out, _ := s.Attrs["gen_ai.usage.output_tokens"].(int64)
			if in <= 0 || out <= 0 || s.Attrs["gen_ai.operation.name"] != "chat" || s.Attrs["gen_ai.request.model"] == nil ||
				s.Attrs["gen_ai.provider.name"] == nil || s.Attrs["gen_ai.response.finish_reasons"] == nil {
				t.Errorf("model span %s: %v", s.Name, s.Attrs)
			}
			if call == nil && parent.Name == "implementor" && s.Attrs[tracing.AttrTaskID] == "t1" {
				call = tr.ByID[s.SpanID]
			}
		case strings.HasPrefix(s.Name, "gate "):
			gates++
			if s.StatusCode == "STATUS_CODE_ERROR" {
				failedGates++
			}
		case s.Name == "git commit":
			commits++
			if parent.Attrs[tracing.AttrNode] == nil {
				t.Errorf("commit under %s", parent.Name)
			}
		}
	}
	if models < 10 || gates < 4 || failedGates == 0 || commits < 4 || call == nil {
		t.Errorf("%d model calls, %d gates (%d failed), %d commits, t1's implementor call %v:\n%s", models, gates, failedGates, commits, call != nil, tr.Shape(2))
	}
	if call == nil {
		return
	}

	// The trace in Phoenix's UI, t1's first implementor call selected.
	projectID, err := ph.ProjectID(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	page := ph.TraceURL(projectID, root.TraceID, byID[call.SpanID].NodeID)
	text, err := phoenix.RenderedText(context.Background(), page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lemmings run", "lemmings resume", "scope_agent", "implementor", "chat qwen2.5-coder:14b", "gate test", "git commit", "t1: Fix MeanWordLength"} {
		if !strings.Contains(text, want) {
			t.Errorf("Phoenix's trace page (%s) does not show %q", page, want)
		}
	}
	if dir := os.Getenv("LEMMINGS_SCREENSHOTS"); dir != "" {
		png := filepath.Join(dir, "phoenix-trace.png")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := phoenix.Screenshot(context.Background(), page, png); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot of %s in %s", page, png)
	}
}
