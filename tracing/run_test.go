package tracing_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/tracing"
	"github.com/lemmings-dev/lemmings/tracing/otlptest"
	"github.com/lemmings-dev/lemmings/workspace"
)

// A secret that the redactor knows (a made-up Slack token, split so that no
// scanner takes this file for a leak): it must never reach a trace backend.
const secret = "xox" + "b-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"

type state struct {
	N int
}

// world is what the tested nodes work on: a scripted model behind the real
// router, and a real git worktree.
type world struct {
	router *llm.Router
	wt     *workspace.Worktree
	box    *sandbox.Box
}

func newWorld(t *testing.T, promptLog ...bool) *world {
	t.Helper()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	srv.Script(llmtest.Step{Name: "plan", Reply: llmtest.Reply{Content: `{"plan":"write f.txt"}`, PromptTokens: 120, CompletionTokens: 9}},
		llmtest.Step{Name: "down", Reply: llmtest.Reply{Status: 400, Body: `{"error":"model not found"}`}})
	temp := 0.2
	rc := llm.RouterConfig{Roles: map[string]llm.RoleSpec{
		"primary": {Provider: llm.ProviderOllama, Model: "tiny:1b", BaseURL: srv.URL(), Temperature: &temp, NumCtx: 4096},
	}, Retry: llm.RetryPolicy{MaxAttempts: 1}}
	if len(promptLog) > 0 && promptLog[0] {
		rc.PromptLog = filepath.Join(t.TempDir(), "prompts.jsonl") // the router redacts once, for the log and the trace
	}
	router, err := llm.NewRouter(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = router.Close() })
	box, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close() })
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo, err := workspace.OpenRepo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.CreateWorktree(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	return &world{router: router, wt: wt, box: box}
}

// app is a small workflow doing what lemmings' steps do: plan (a structured
// model call, then a failing one), check (a failing gate, then a passing
// one), commit (a real git commit, then an empty one).
func (w *world) app(t *testing.T, tr *tracing.Run) *graph.Compiled[state] {
	g := graph.New[state]().
		AddNode("plan", func(ctx context.Context, s state) (state, error) {
			type plan struct {
				Plan string `json:"plan"`
			}
			if _, _, err := llm.Structured[plan](ctx, w.router, llm.Request{Role: "primary", Label: "task_planner",
				Messages: []llm.Message{{Role: "system", Content: "You plan."}, {Role: "user", Content: "token " + secret + " plan it"}}}); err != nil {
				t.Errorf("plan call: %v", err)
			}
			if _, err := w.router.Chat(ctx, llm.Request{Role: "primary", Label: "qa", Messages: []llm.Message{{Role: "user", Content: "again"}}}); err == nil {
				t.Error("the failing call succeeded")
			}
			graph.Emit(ctx, "assessment", map[string]any{"verdict": "aligned", "notes": "key " + secret})
			return s, nil
		}).
		AddNode("check", func(ctx context.Context, s state) (state, error) {
			workspace.RunGates(ctx, w.box, w.wt.Dir(), []workspace.Gate{{Name: "vet", Command: "exit 3"}}, 0)
			workspace.RunGate(ctx, w.box, w.wt.Dir(), workspace.Gate{Name: "test", Command: "true"}, 0)
			return s, nil
		}).
		AddNode("commit", func(ctx context.Context, s state) (state, error) {
			if err := os.WriteFile(filepath.Join(w.wt.Dir(), "f.txt"), []byte("x\n"), 0o644); err != nil {
				return s, err
			}
			if _, err := w.wt.Commit(ctx, "Write f.txt\n\nbody", nil); err != nil {
				return s, err
			}
			if _, err := w.wt.Commit(ctx, "nothing", nil); err != workspace.ErrNothingToCommit {
				t.Errorf("empty commit: %v", err)
			}
			s.N++
			return s, nil
		}).
		AddEdge(graph.Start, "plan").AddEdge("plan", "check").AddEdge("check", "commit").AddEdge("commit", graph.End)
	var sinks []graph.Sink
	if tr != nil {
		sinks = append(sinks, tr)
	}
	app, err := g.Compile(graph.WithSinks(sinks...), graph.WithCheckpointer(graph.NewMemoryCheckpointer()))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func start(t *testing.T, rcv *otlptest.Receiver, cfg tracing.Config, info tracing.RunInfo, warn *bytes.Buffer) *tracing.Run {
	t.Helper()
	cfg.Enabled = true
	cfg.Endpoint = rcv.URL()
	cfg.Getenv = func(string) string { return "" }
	tr, err := tracing.Start(context.Background(), cfg, info, warn)
	if err != nil || tr == nil {
		t.Fatalf("Start: %v, %v", tr, err)
	}
	return tr
}

func TestARunIsOneTraceOfNodeModelGateAndCommitSpans(t *testing.T) {
	t.Run("the router keeps a prompt log", func(t *testing.T) { checkRunTrace(t, true) })
	t.Run("the router keeps none", func(t *testing.T) { checkRunTrace(t, false) })
}

func checkRunTrace(t *testing.T, promptLog bool) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	w := newWorld(t, promptLog)
	var warn bytes.Buffer
	tr := start(t, rcv, tracing.Config{Prompts: true}, tracing.RunInfo{RunID: "r1", Remit: "add a flag, token " + secret}, &warn)
	tr.SetTask("t1", "Write f.txt")
	ctx := tr.Attach(context.Background())
	if _, err := w.app(t, tr).Run(ctx, "r1", state{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(ctx); err != nil {
		t.Fatalf("Close: %v (%s)", err, warn.String())
	}
	spans := rcv.Spans()
	tree := treeOf(t, spans)
	if got, want := tree.Shape(0), `lemmings run
  plan
    chat tiny:1b
    chat tiny:1b
  check
    gate vet
    gate test
  commit
    git commit
    git commit
`; got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	root := tree.Root
	if root.Attrs[tracing.AttrRunID] != "r1" || root.Attrs[tracing.AttrRunStatus] != "done" || root.StatusCode != "STATUS_CODE_OK" {
		t.Errorf("run span: %+v", root)
	}
	if tr.Traceparent() != "00-"+root.TraceID+"-"+root.SpanID+"-01" {
		t.Errorf("traceparent %q is not the root span's (%s %s)", tr.Traceparent(), root.TraceID, root.SpanID)
	}
	if root.Resource["service.name"] != "lemmings" {
		t.Errorf("resource: %v", root.Resource)
	}
	for _, s := range spans {
		if s.TraceID != root.TraceID || s.Attrs[tracing.AttrRunID] != "r1" {
			t.Errorf("span %s: trace %s run %v", s.Name, s.TraceID, s.Attrs[tracing.AttrRunID])
		}
		if s.Name != "lemmings run" && (s.Attrs[tracing.AttrTaskID] != "t1" || s.Attrs[tracing.AttrTaskTitle] != "Write f.txt") {
			t.Errorf("span %s lacks the task: %v", s.Name, s.Attrs)
		}
		for k, v := range s.Attrs {
			if strings.Contains(anyString(v), secret) {
				t.Errorf("span %s attribute %s carries the secret", s.Name, k)
			}
		}
		for _, e := range s.Events {
			if strings.Contains(anyString(e.Attrs), secret) {
				t.Errorf("event %s of %s carries the secret", e.Name, s.Name)
			}
		}
	}
	plan := tree.Child(root, "plan")
	call, failed := tree.Children(plan)[0], tree.Children(plan)[1]
	wantAttrs := map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "ollama", "gen_ai.request.model": "tiny:1b",
		"gen_ai.response.model": "tiny:1b", "gen_ai.usage.input_tokens": int64(120), "gen_ai.usage.output_tokens": int64(9),
		"gen_ai.output.type": "json", "gen_ai.request.temperature": 0.2, "server.address": "127.0.0.1",
		"lemmings.role": "primary", "lemmings.label": "task_planner", "gen_ai.request.stream": true,
	}
	for k, v := range wantAttrs {
		if call.Attrs[k] != v {
			t.Errorf("model span %s = %#v (%T), want %#v", k, call.Attrs[k], call.Attrs[k], v)
		}
	}
	if fr, _ := call.Attrs["gen_ai.response.finish_reasons"].([]any); len(fr) != 1 || fr[0] != "stop" {
		t.Errorf("finish reasons %v", call.Attrs["gen_ai.response.finish_reasons"])
	}
	if call.Kind != "SPAN_KIND_CLIENT" || !strings.Contains(anyString(call.Attrs["gen_ai.input.messages"]), `"role":"user","parts":[{"type":"text","content":"token [REDACTED`) ||
		!strings.Contains(anyString(call.Attrs["gen_ai.output.messages"]), `write f.txt`) {
		t.Errorf("model span kind %s, messages %v / %v", call.Kind, call.Attrs["gen_ai.input.messages"], call.Attrs["gen_ai.output.messages"])
	}
	if failed.StatusCode != "STATUS_CODE_ERROR" || failed.Attrs["error.type"] == nil || anyString(failed.Attrs["gen_ai.response.finish_reasons"]) != "[error]" {
		t.Errorf("failed call span: %s %v", failed.StatusCode, failed.Attrs)
	}
	if len(plan.Events) != 1 || plan.Events[0].Name != "assessment" || !strings.Contains(anyString(plan.Events[0].Attrs), "aligned") {
		t.Errorf("plan events: %+v", plan.Events)
	}
	gates := tree.Children(tree.Child(root, "check"))
	if gates[0].StatusCode != "STATUS_CODE_ERROR" || gates[0].Attrs["process.exit.code"] != int64(3) || gates[0].Attrs["lemmings.gate.passed"] != false ||
		gates[1].StatusCode != "STATUS_CODE_UNSET" || gates[1].Attrs["lemmings.gate.passed"] != true {
		t.Errorf("gate spans: %+v / %+v", gates[0], gates[1])
	}
	commits := tree.Children(tree.Child(root, "commit"))
	head, err := w.wt.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if commits[0].Attrs["vcs.ref.head.revision"] != head || commits[0].Attrs["lemmings.commit.message"] != "Write f.txt" ||
		commits[0].Attrs["vcs.ref.head.name"] != "lemmings/r1" || commits[1].Attrs["lemmings.commit.empty"] != true || commits[1].StatusCode == "STATUS_CODE_ERROR" {
		t.Errorf("commit spans: %+v / %+v", commits[0].Attrs, commits[1].Attrs)
	}
	for _, s := range spans {
		if s.End.Before(s.Start) {
			t.Errorf("span %s ends before it starts", s.Name)
		}
		if p := tree.ByID[s.ParentID]; p != nil && s.Name != "lemmings run" && (s.Start.Before(p.Start) || s.End.After(p.End)) {
			t.Errorf("span %s [%v, %v] outside its parent %s [%v, %v]", s.Name, s.Start, s.End, p.Name, p.Start, p.End)
		}
	}
}

func TestPromptsStayOutOfTheTraceUnlessLogged(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	w := newWorld(t)
	tr := start(t, rcv, tracing.Config{}, tracing.RunInfo{RunID: "r1"}, &bytes.Buffer{})
	if _, err := w.app(t, tr).Run(tr.Attach(context.Background()), "r1", state{}); err != nil {
		t.Fatal(err)
	}
	_ = tr.Close(context.Background())
	calls := 0
	for _, s := range rcv.Spans() {
		if strings.HasPrefix(s.Name, "chat ") {
			calls++
			if s.Attrs["gen_ai.input.messages"] != nil || s.Attrs["gen_ai.output.messages"] != nil {
				t.Errorf("span %s records the prompt with log.prompts off", s.Name)
			}
		}
	}
	if calls != 2 {
		t.Errorf("%d model spans, want 2", calls)
	}
}

func TestAResumeContinuesTheRunsTraceUnderItsRoot(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	first := start(t, rcv, tracing.Config{}, tracing.RunInfo{RunID: "r1"}, &bytes.Buffer{})
	parent := first.Traceparent()
	first.Handle(graph.Event{Kind: graph.EventRunEnd, Status: graph.StatusPaused, Reason: "approve the milestones", Time: time.Now()})
	_ = first.Close(context.Background())

	second := start(t, rcv, tracing.Config{}, tracing.RunInfo{RunID: "r1", Traceparent: parent}, &bytes.Buffer{})
	if second.Traceparent() != parent {
		t.Errorf("the resume keeps %q, want the root's %q", second.Traceparent(), parent)
	}
	second.Handle(graph.Event{Kind: graph.EventNodeStart, Node: "scope_agent", Step: 3, Time: time.Now()})
	second.Handle(graph.Event{Kind: graph.EventNodeEnd, Node: "scope_agent", Step: 3, Time: time.Now()})
	second.Handle(graph.Event{Kind: graph.EventRunEnd, Status: graph.StatusDone, Time: time.Now()})
	_ = second.Close(context.Background())

	tree := treeOf(t, rcv.Spans())
	if got, want := tree.Shape(0), "lemmings run\n  lemmings resume\n    scope_agent\n"; got != want {
		t.Fatalf("tree:\n%s\nwant:\n%s", got, want)
	}
	if tree.Root.Attrs[tracing.AttrRunStatus] != "paused" || tree.Root.Attrs[tracing.AttrReason] != "approve the milestones" {
		t.Errorf("paused root: %v", tree.Root.Attrs)
	}
	if r := tree.Child(tree.Root, "lemmings resume"); r.Attrs[tracing.AttrResumed] != true || r.Attrs[tracing.AttrRunStatus] != "done" {
		t.Errorf("resume span: %v", r.Attrs)
	}

	// A damaged record starts a new trace, and says so.
	var warn bytes.Buffer
	third := start(t, rcv, tracing.Config{}, tracing.RunInfo{RunID: "r1", Traceparent: "00-not-a-trace"}, &warn)
	if third.TraceID() == tree.Root.TraceID || !strings.Contains(warn.String(), "not a W3C traceparent") {
		t.Errorf("damaged traceparent: trace %s, warning %q", third.TraceID(), warn.String())
	}
	_ = third.Close(context.Background())
}

func TestAnUnreachableBackendCostsAWarningNotTheRun(t *testing.T) {
	rcv := otlptest.NewReceiver()
	rcv.Fail(400, "") // a permanent refusal: no retries
	defer rcv.Close()
	w := newWorld(t)
	var warn bytes.Buffer
	tr := start(t, rcv, tracing.Config{}, tracing.RunInfo{RunID: "r1"}, &warn)
	s, err := w.app(t, tr).Run(tr.Attach(context.Background()), "r1", state{})
	if err != nil || s.N != 1 {
		t.Fatalf("run: %+v, %v", s, err)
	}
	t0 := time.Now()
	err = tr.Close(context.Background())
	if err == nil || !strings.Contains(warn.String(), "did not all reach "+rcv.URL()+"/v1/traces") || !strings.Contains(warn.String(), "not delivered") {
		t.Errorf("Close: %v, warning %q", err, warn.String())
	}
	if d := time.Since(t0); d > 7*time.Second {
		t.Errorf("Close took %v", d)
	}
	if rcv.Requests() == 0 {
		t.Error("nothing was sent")
	}
}

func TestWhereSpansGo(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		name     string
		cfg      tracing.Config
		env      func(string) string
		endpoint string // "" : tracing off
		warning  string
		err      string
	}{
		{name: "off by default", cfg: tracing.Config{}, env: env()},
		{name: "the default endpoint", cfg: tracing.Config{Enabled: true}, env: env(), endpoint: "http://localhost:4318/v1/traces"},
		{name: "the config's base URL gets the traces path", cfg: tracing.Config{Enabled: true, Endpoint: "http://collector:4318/"}, env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:4318"), endpoint: "http://collector:4318/v1/traces"},
		{name: "a full traces URL is kept", cfg: tracing.Config{Enabled: true, Endpoint: "https://cloud.example/api/public/otel/v1/traces"}, env: env(), endpoint: "https://cloud.example/api/public/otel/v1/traces"},
		{name: "the traces variable is used as it is", cfg: tracing.Config{Enabled: true}, env: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/x", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://o:1"), endpoint: "http://t:9/x"},
		{name: "the generic variable gets the traces path", cfg: tracing.Config{Enabled: true}, env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://o:1"), endpoint: "http://o:1/v1/traces"},
		{name: "OTEL_SDK_DISABLED wins", cfg: tracing.Config{Enabled: true}, env: env("OTEL_SDK_DISABLED", "true")},
		{name: "offline keeps spans on this machine", cfg: tracing.Config{Enabled: true, Offline: true, Endpoint: "https://cloud.example"}, env: env(), warning: "tracing off for this run: it is offline"},
		{name: "offline to loopback is fine", cfg: tracing.Config{Enabled: true, Offline: true, Endpoint: "http://127.0.0.1:4318"}, env: env(), endpoint: "http://127.0.0.1:4318/v1/traces"},
		{name: "offline to localhost is fine", cfg: tracing.Config{Enabled: true, Offline: true}, env: env(), endpoint: "http://localhost:4318/v1/traces"},
		{name: "gRPC is not spoken", cfg: tracing.Config{Enabled: true}, env: env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), endpoint: "http://localhost:4318/v1/traces", warning: "OTLP over HTTP only"},
		{name: "an endpoint that is no URL", cfg: tracing.Config{Enabled: true}, env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4317"), err: `OTEL_EXPORTER_OTLP_ENDPOINT is "localhost:4317/v1/traces": not an http:// or https:// URL`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Getenv = c.env
			var warn bytes.Buffer
			tr, err := tracing.Start(context.Background(), c.cfg, tracing.RunInfo{RunID: "r"}, &warn)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				defer cancel()
				_ = tr.Close(ctx) // nothing listens at most of these endpoints
			}()
			if tr.Endpoint() != c.endpoint {
				t.Errorf("endpoint %q, want %q", tr.Endpoint(), c.endpoint)
			}
			if (c.warning == "") != (warn.Len() == 0) || !strings.Contains(warn.String(), c.warning) {
				t.Errorf("warning %q, want %q", warn.String(), c.warning)
			}
		})
	}
}

func TestANilRunDoesNothing(t *testing.T) {
	var tr *tracing.Run
	ctx := tr.Attach(context.Background())
	tr.Handle(graph.Event{Kind: graph.EventRunStart})
	tr.SetTask("t1", "x")
	tr.ObserveCall(ctx, llm.CallRecord{})
	tr.ObserveGate(ctx, workspace.GateRecord{})
	tr.ObserveCommit(ctx, workspace.CommitRecord{})
	if tr.Traceparent() != "" || tr.TraceID() != "" || tr.Close(ctx) != nil || tracing.FromContext(ctx) != nil {
		t.Error("a nil run did something")
	}
}

// Model output, file names and errors are not always valid UTF-8, and one
// invalid byte in a span makes the exporter drop its whole batch.
func TestBytesThatAreNotUTF8NeverCostTheBatch(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	var warn bytes.Buffer
	tr := start(t, rcv, tracing.Config{Prompts: true}, tracing.RunInfo{RunID: "r1", Remit: "fix caf\xe9"}, &warn)
	tr.SetTask("t1", "rename r\xe9sum\xe9.txt")
	ctx := tr.Attach(context.Background())
	now := time.Now()
	tr.Handle(graph.Event{Kind: graph.EventNodeStart, Node: "implementor", Step: 1, Time: now})
	tr.Handle(graph.Event{Kind: graph.EventCustom, Name: "warning", Node: "implementor", Step: 1, Error: "bad \xff byte", Time: now})
	tr.ObserveCall(ctx, llm.CallRecord{Start: now, End: now, Model: "m\xff", Provider: "ollama",
		Request:  llm.Request{Messages: []llm.Message{{Role: "user", Content: "see \xfe"}}},
		Response: llm.Response{Content: "ok \xff", DoneReason: "st\xffop", ToolCalls: []llm.ToolCall{{Name: "edit", Arguments: []byte("{\"path\":\"\xff\"")}}}})
	tr.ObserveGate(ctx, workspace.GateRecord{Start: now, Result: workspace.GateResult{Name: "t\xffst", Command: "cat \xff"}})
	tr.ObserveCommit(ctx, workspace.CommitRecord{Start: now, End: now, Message: "add r\xe9sum\xe9", SHA: "abc"})
	tr.Handle(graph.Event{Kind: graph.EventNodeEnd, Node: "implementor", Step: 1, Error: "open \xff: no such file", Time: now})
	tr.Handle(graph.Event{Kind: graph.EventRunEnd, Status: graph.StatusFailed, Error: "x\xff", Time: now})
	if err := tr.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	spans := rcv.Spans()
	if len(spans) != 5 {
		t.Fatalf("%d spans delivered, want 5 (%s)", len(spans), warn.String())
	}
	var all strings.Builder
	for _, s := range spans {
		fmt.Fprintln(&all, s.Name, s.StatusMessage, s.Attrs, s.Events)
	}
	for _, want := range []string{"fix caf\uFFFD", "r\uFFFDsum\uFFFD.txt", "chat m\uFFFD", `ok \ufffd`, "gate t\uFFFDst", "cat \uFFFD", "open \uFFFD"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no %q in the spans:\n%s", want, all.String())
		}
	}
}
