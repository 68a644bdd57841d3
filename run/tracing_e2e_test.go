package run_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/tracing"
	"github.com/lemmings-dev/lemmings/tracing/otlptest"
)

// The demo's run, paused for the milestones and resumed: one trace whose
// root is the first process's run span, the resume's span under it, every
// node step under the span of the process that ran it, and the model calls,
// gates and commits under their steps.
func TestADemoRunIsOneTraceAcrossAPauseAndItsResume(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	cfg := demo.Config(srv.URL())
	cfg.Tracing.Enabled, cfg.Tracing.Endpoint = true, rcv.URL()
	// A real gate, but not a Go build: it fails t2's first attempt (the
	// scripted TopWords sorts ascending) in milliseconds.
	cfg.Gates = []config.Gate{{Name: "test", Command: `! grep -qF 'counts[ws[i]] < counts[ws[j]]' topwords.go 2>/dev/null`, Timeout: time.Minute}}
	repo := filepath.Join(t.TempDir(), "repo")
	if err := demo.PrepareRepo(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := run.Start(ctx, run.Options{RepoDir: repo, Remit: demo.Remit, Config: cfg, Approve: "milestones"})
	if !errors.Is(err, graph.ErrPaused) {
		t.Fatalf("start: %v (%s)", err, first.Status)
	}
	res, err := run.Resume(ctx, run.Options{RepoDir: repo, RunID: first.RunID, Config: cfg, Decision: &runstate.Approval{Kind: "milestones", Approved: true}})
	if err != nil || res.Status != graph.StatusDone {
		t.Fatalf("resume: %v (%s)", err, res.Status)
	}

	spans := rcv.Spans()
	tr, err := otlptest.NewTree(spans)
	if err != nil {
		t.Fatal(err)
	}
	root, resumes := tr.Root, tr.Named("lemmings resume")
	if root.Name != "lemmings run" || len(resumes) != 1 || resumes[0].ParentID != root.SpanID {
		t.Fatalf("not a run span with one resume under it:\n%s", tr.Shape(1))
	}
	resumed := resumes[0]
	if root.Attrs[tracing.AttrRunID] != first.RunID || root.Attrs[tracing.AttrRunStatus] != "paused" || resumed.Attrs[tracing.AttrRunStatus] != "done" ||
		!strings.HasPrefix(root.Attrs[tracing.AttrRemit].(string), "Make the test suite pass") {
		t.Errorf("run spans: %v / %v", root.Attrs, resumed.Attrs)
	}
	store, err := run.Store(repo)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := store.State(ctx, first.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "00-" + root.TraceID + "-" + root.SpanID + "-01"; snap.Metadata[tracing.MetaTraceparent] != want {
		t.Errorf("checkpoint traceparent %q, want %q", snap.Metadata[tracing.MetaTraceparent], want)
	}

	steps := map[string]bool{}
	for _, s := range spans {
		if s.TraceID != root.TraceID || s.Attrs[tracing.AttrRunID] != first.RunID {
			t.Errorf("span %s: trace %s, run %v", s.Name, s.TraceID, s.Attrs[tracing.AttrRunID])
		}
		parent := tr.ByID[s.ParentID]
		switch {
		case s.Attrs[tracing.AttrNode] != nil:
			steps[s.Name] = true
			if parent != root && parent != resumed {
				t.Errorf("step %s under %s", s.Name, parent.Name)
			}
		case strings.HasPrefix(s.Name, "chat "):
			if parent.Attrs[tracing.AttrNode] == nil && parent != root && parent != resumed {
				t.Errorf("model call under %s", parent.Name)
			}
			if s.Attrs["gen_ai.input.messages"] != nil {
				t.Errorf("model span %s records the prompt without tracing.prompts", s.Name)
			}
			if s.Attrs["gen_ai.operation.name"] != "chat" || s.Attrs["gen_ai.usage.input_tokens"].(int64) <= 0 || s.Attrs["gen_ai.usage.output_tokens"].(int64) <= 0 ||
				s.Attrs["gen_ai.request.model"] != strings.TrimPrefix(s.Name, "chat ") || s.Attrs["gen_ai.response.finish_reasons"] == nil {
				t.Errorf("model span %s: %v", s.Name, s.Attrs)
			}
		case strings.HasPrefix(s.Name, "gate "):
			// The report runs the gates once more on the final tree when it
			// changed after the last task (no success without evidence).
			if parent.Name != runstate.NodeQA && parent.Name != runstate.NodeImplementor && parent.Name != runstate.NodeReport {
				t.Errorf("gate under %s", parent.Name)
			}
		case s.Name == "git commit":
			if parent.Attrs[tracing.AttrNode] == nil {
				t.Errorf("commit under %s", parent.Name)
			}
		}
	}
	for _, want := range []string{runstate.NodeScope, runstate.NodePlanner, runstate.NodeImplementor, runstate.NodeQA, runstate.NodeComplete, runstate.NodeReport} {
		if !steps[want] {
			t.Errorf("no %s step in the trace:\n%s", want, tr.Shape(2))
		}
	}
	// Each task's commit is a span under its mark_complete step, with the
	// task's id and the commit that is on the branch.
	commits := map[string]bool{}
	for _, s := range tr.Named("git commit") {
		if tr.ByID[s.ParentID].Name == runstate.NodeComplete {
			commits[fmt.Sprint(s.Attrs[tracing.AttrTaskID], " ", s.Attrs["vcs.ref.head.revision"])] = true
		}
	}
	for _, e := range res.State.DoneList {
		if !commits[e.TaskID+" "+e.Commit] {
			t.Errorf("no commit span of task %s at %s under mark_complete (have %v)", e.TaskID, e.Commit, commits)
		}
	}
	if len(res.State.DoneList) != 4 {
		t.Errorf("%d tasks done, want the demo's 4", len(res.State.DoneList))
	}
	var failedGate bool
	for _, s := range spans {
		failedGate = failedGate || (strings.HasPrefix(s.Name, "gate ") && s.StatusCode == "STATUS_CODE_ERROR" && s.Attrs[tracing.AttrTaskID] == "t2")
	}
	if !failedGate {
		t.Errorf("the trace lacks t2's failing go test gate:\n%s", tr.Shape(3))
	}
}

// A run kept in a shared store (what a worker on another machine resumes
// from) carries its trace context in that store's checkpoints: the part that
// takes the run over joins the same trace under its root.
func TestARunInASharedStoreCarriesItsTraceToWhoeverResumesIt(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	srv := demo.NewServer(&demo.Script{}, llmtest.Step{Name: "writer", Times: -1,
		Match:   func(c llmtest.Call) bool { return c.Role() == prompts.Implementor },
		Respond: fileWriter})
	defer srv.Close()
	cfg := demo.Config(srv.URL())
	cfg.Supervisors.Enabled = false
	cfg.Gates = []config.Gate{{Name: "check", Command: "true", Timeout: time.Minute}}
	cfg.Tracing.Enabled, cfg.Tracing.Endpoint = true, rcv.URL()
	repo := filepath.Join(t.TempDir(), "repo")
	if err := demo.PrepareRepo(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	shared := &run.Backend{Checkpointer: graph.NewMemoryCheckpointer()}
	ctx := context.Background()
	first, err := run.Start(ctx, run.Options{RepoDir: repo, PlanFile: writePlan(t, 1), Config: cfg, Approve: "tasks", Backend: shared})
	if !errors.Is(err, graph.ErrPaused) {
		t.Fatalf("start: %v (%s)", err, first.Status)
	}
	store, err := run.StoreOn(shared.Checkpointer)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := store.State(ctx, first.RunID)
	if err != nil {
		t.Fatal(err)
	}
	parent := snap.Metadata[tracing.MetaTraceparent]
	res, err := run.Resume(ctx, run.Options{RepoDir: repo, RunID: first.RunID, Config: cfg, Backend: shared, Decision: &runstate.Approval{Kind: "task", Approved: true}})
	if err != nil || res.Status != graph.StatusDone {
		t.Fatalf("resume: %v (%s)", err, res.Status)
	}
	tr, err := otlptest.NewTree(rcv.Spans())
	if err != nil {
		t.Fatal(err)
	}
	resumes := tr.Named("lemmings resume")
	if want := "00-" + tr.Root.TraceID + "-" + tr.Root.SpanID + "-01"; parent != want || len(resumes) != 1 || resumes[0].ParentID != tr.Root.SpanID {
		t.Fatalf("stored traceparent %q (root %s); the trace:\n%s", parent, want, tr.Shape(1))
	}
}
