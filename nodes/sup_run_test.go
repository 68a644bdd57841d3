package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

func supCodeStyleOutcome(job runstate.SupervisorJob, docs []supervisors.DocSpec, dirs []supervisors.DirectiveSpec, findings []string) supervisors.Outcome {
	return supervisors.Outcome{Job: job, CodeStyle: &supervisors.CodeStyleReply{Docs: docs, Directives: dirs, Findings: findings, Summary: "scripted"},
		Response: llm.Response{Usage: llm.Usage{Calls: 1, PromptTokens: suptest.PromptTokens, CompletionTokens: suptest.CompletionToks, CostUSD: suptest.CallCost}}}
}

func supLandState(d *Deps, t *testing.T) runstate.State {
	t.Helper()
	base, err := d.Work.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := supExecState()
	s.RunID, s.BaseCommit = "sup-run", base
	s.Milestones = []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}}
	return s
}

// TestSupOwnershipRefusal: a Code Style reply that also writes under design/
// has that document discarded with a warning; its own documents are written
// (provisional) and committed once, with the job's trailer.
func TestSupOwnershipRefusal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := supDeps(t, nil, true)
	d.Supervisors = supervisors.NewJobs(ctx, nil)
	defer d.Supervisors.Close()
	s := supLandState(d, t)
	job := supervisors.StartJob(&s, supervisors.Due{Name: prompts.CodeStyle, Trigger: supervisors.TriggerInterval}, true)
	out := supCodeStyleOutcome(job, []supervisors.DocSpec{
		{Path: "conventions/errors.md", Title: "Error handling", Rules: []string{"Wrap errors with context."}},
		{Path: "design/architecture.md", Title: "Architecture", Rules: []string{"One package per concern."}},
		{Path: "docs/knowledge/conventions/../design/sneaky.md", Title: "Sneaky", Rules: []string{"Climb out."}},
		{Path: "naming", Title: "Naming", Rules: []string{"Exported names say what they are."}},
	}, []supervisors.DirectiveSpec{{Type: "cleanup", Description: "Wrap the bare errors in lib.go", Priority: "low", Files: []string{"lib.go"}}}, nil)

	warnings := supInNode(t, func(ctx context.Context) error { return d.supervisors().Land(ctx, &s, out) })
	runs := supRunLog(s, prompts.CodeStyle)
	if len(runs) != 1 {
		t.Fatalf("run log %+v", s.SupervisorRunLog)
	}
	r := runs[0]
	if r.Status != "ok" || !slices.Equal(r.Docs, []string{"conventions/errors.md", "conventions/naming.md"}) || !slices.Equal(r.Directives, []string{"d1"}) {
		t.Fatalf("run %+v", r)
	}
	for _, bad := range []string{"design/architecture.md", "design/sneaky.md"} {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "outside its directories") && strings.Contains(w, bad) }) {
			t.Errorf("no ownership warning for %s: %q", bad, warnings)
		}
		if _, err := os.Stat(filepath.Join(d.Work.Dir(), "docs/knowledge", bad)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written anyway (%v)", bad, err)
		}
	}
	if !strings.Contains(r.Warning, "design/architecture.md") {
		t.Errorf("run log warning %q", r.Warning)
	}
	store, _, err := knowledge.Open(filepath.Join(d.Work.Dir(), "docs/knowledge"))
	if err != nil {
		t.Fatal(err)
	}
	doc, ok := store.Get("conventions/errors.md")
	if !ok || doc.Status != knowledge.Provisional || doc.UpdatedBy != prompts.CodeStyle {
		t.Fatalf("conventions/errors.md = %+v", doc)
	}
	log, err := d.Work.Log(ctx, s.BaseCommit)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].Trailers[supervisors.TrailerJob] != job.ID || log[0].Trailers[TrailerRun] != "sup-run" {
		t.Fatalf("commits %+v, want one knowledge commit with the job trailer", log)
	}
	if s.SupervisorSpendUSD != suptest.CallCost || s.Usage[prompts.CodeStyle].PromptTokens != suptest.PromptTokens {
		t.Errorf("spend %v usage %+v", s.SupervisorSpendUSD, s.Usage[prompts.CodeStyle])
	}

	// The same job landed again by a resumed process: nothing written twice,
	// and the refused documents are still not reported as written.
	s2 := supLandState(d, t)
	s2.BaseCommit = s.BaseCommit
	s2.SupervisorJobs = []runstate.SupervisorJob{job}
	out.CodeStyle.Docs[0].Rules = []string{"Wrap errors with context, worded anew by the re-run."}
	if err := d.supervisors().Land(ctx, &s2, out); err != nil {
		t.Fatal(err)
	}
	if log2, _ := d.Work.Log(ctx, s.BaseCommit); len(log2) != 1 {
		t.Fatalf("%d commits after landing the job twice, want 1", len(log2))
	}
	if r2 := supRunLog(s2, prompts.CodeStyle)[0]; !slices.Equal(r2.Docs, []string{"conventions/errors.md", "conventions/naming.md"}) {
		t.Fatalf("re-landed docs %v", r2.Docs)
	}
}

// supInNode runs fn inside a one-node graph, so what it emits is recorded,
// and returns the messages of its warning events.
func supInNode(t *testing.T, fn func(ctx context.Context) error) []string {
	t.Helper()
	var warnings []string
	g := graph.New[runstate.State]()
	g.AddNode("sup_node", func(ctx context.Context, s runstate.State) (runstate.State, error) { return s, fn(ctx) })
	g.AddEdge(graph.Start, "sup_node")
	g.AddEdge("sup_node", graph.End)
	app, err := g.Compile(graph.WithSinks(graph.SinkFunc(func(ev graph.Event) {
		if ev.Kind != graph.EventCustom || ev.Name != "warning" {
			return
		}
		var d struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		warnings = append(warnings, d.Message)
	})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Run(context.Background(), "sup-node", runstate.State{}); err != nil {
		t.Fatal(err)
	}
	return warnings
}

// TestSupFailedCallsAreWarnings: a call error or a malformed reply lands as a
// warning and a log entry; nothing else changes.
func TestSupFailedCallsAreWarnings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := supDeps(t, nil, true)
	d.Supervisors = supervisors.NewJobs(ctx, nil)
	defer d.Supervisors.Close()
	cases := []struct {
		err    error
		status string
	}{
		{&llm.StructuredError{Raw: "not json", Problem: "no JSON value", Attempts: 2}, "discarded"},
		{&llm.Error{Kind: llm.KindAuth, Status: 401}, "skipped"},
		{&llm.Error{Kind: llm.KindServer, Status: 503, Retriable: true}, "skipped"},
	}
	for _, tc := range cases {
		s := supLandState(d, t)
		job := supervisors.StartJob(&s, supervisors.Due{Name: prompts.Design, Trigger: supervisors.TriggerTaskAbort}, false)
		warnings := supInNode(t, func(ctx context.Context) error {
			return d.supervisors().Land(ctx, &s, supervisors.Outcome{Job: job, Err: tc.err})
		})
		r := supRunLog(s, prompts.Design)
		if len(r) != 1 || r[0].Status != tc.status || len(s.SupervisorJobs) != 0 || len(s.PendingDirectives) != 0 {
			t.Errorf("%v: run log %+v jobs %v", tc.err, r, s.SupervisorJobs)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "supervisor design "+tc.status) {
			t.Errorf("%v: warnings %q", tc.err, warnings)
		}
	}
}

// TestSupReplySchemas: the replies keep their documented output keys, and a reply
// that breaks the schema is rejected (then discarded by land).
func TestSupReplySchemas(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"code_style":   {"conventions_updated", "directives", "summary"},
		"design":       {"design_updates", "directives", "summary"},
		"internaliser": {"knowledge_items", "summary"},
	}
	schemas := map[string]func() (json.RawMessage, error){
		"code_style": llm.SchemaFor[supervisors.CodeStyleReply], "design": llm.SchemaFor[supervisors.DesignReply], "internaliser": llm.SchemaFor[supervisors.InternaliserReply],
	}
	for name, keys := range want {
		raw, err := schemas[name]()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if !strings.Contains(string(raw), `"`+k+`"`) {
				t.Errorf("%s schema lacks %q: %s", name, k, raw)
			}
		}
	}
	for _, k := range []string{"type", "description", "rationale", "priority", "files", "category", "content", "source_task", "confidence", "needs_user_review"} {
		raw, _ := llm.SchemaFor[supervisors.CodeStyleReply]()
		raw2, _ := llm.SchemaFor[supervisors.InternaliserReply]()
		if !strings.Contains(string(raw)+string(raw2), `"`+k+`"`) {
			t.Errorf("no %q field in the directive or knowledge item schema", k)
		}
	}

	bad := []string{
		`{"conventions_updated":[],"docs":[],"directives":[{"type":"refactor","description":"x","priority":"low"}],"findings":[],"summary":"s"}`,
		`{"summary":"missing everything else"}`,
		`definitely not JSON`,
	}
	for _, reply := range bad {
		m := &supFakeModel{answer: func(llm.Request) (string, error) { return reply, nil }}
		out := supervisors.Call(context.Background(), m, runstate.SupervisorJob{ID: "code_style-1-1", Supervisor: prompts.CodeStyle}, llm.Request{Role: supervisors.Role, Label: prompts.CodeStyle, Messages: []llm.Message{{Role: "user", Content: "review"}}})
		var se *llm.StructuredError
		if !errors.As(out.Err, &se) {
			t.Errorf("reply %s: err %v, want a StructuredError", reply, out.Err)
		}
		if n := len(m.requests(prompts.CodeStyle)); n != 2 {
			t.Errorf("reply %s: %d calls, want the call and one re-ask", reply, n)
		}
	}
}

// TestSupInputLeavesDeniedFilesOut: the files changed are read from the work
// tree for the supervisor, except deny-listed ones, whose content never goes
// into the prompt.
func TestSupInputLeavesDeniedFilesOut(t *testing.T) {
	t.Parallel()
	d := supDeps(t, nil, true)
	for p, body := range map[string]string{
		".env":             "OPENROUTER_API_KEY=" + suptest.SecretKey + "\n",
		"certs/server.pem": "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n",
		"app.go":           "package app\n\nfunc Run() {}\n",
	} {
		if err := d.Work.FS().WriteFile(p, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	s := supExecState()
	s.Remit = "build the app"
	s.DoneList = []runstate.DoneEntry{{TaskID: "t1", Title: "config", QA: "passed", Files: []string{".env", "certs/server.pem", "app.go"}}}
	s.TasksCompleted = 1
	job := supervisors.StartJob(&s, supervisors.Due{Name: prompts.CodeStyle, Trigger: supervisors.TriggerInterval}, false)
	var all strings.Builder
	for _, sec := range d.supervisors().Input(&s, job) {
		all.WriteString("## " + sec.Title + "\n" + sec.Body + "\n")
	}
	files := llmtest.Section(all.String(), prompts.SecFilesChanged)
	if !strings.Contains(files, "### app.go") || !strings.Contains(files, "func Run()") {
		t.Fatalf("app.go missing from FILES CHANGED:\n%s", files)
	}
	for _, leak := range []string{suptest.SecretKey, "BEGIN PRIVATE KEY", "### .env", "### certs/server.pem"} {
		if strings.Contains(all.String(), leak) {
			t.Errorf("supervisor input contains %q:\n%s", leak, all.String())
		}
	}
}

// TestSupBootstrapInput: on an empty store the supervisor is told to
// establish, and sees a sample of the code even with nothing changed.
func TestSupBootstrapInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := &supFakeModel{answer: supAnswerEmptySupervisor}
	d := supDeps(t, m, true)
	d.Supervisors = supervisors.NewJobs(ctx, m)
	defer d.Supervisors.Close()
	d.Settings.Supervisors.Blocking = true
	s := supExecState()
	s.RunID = "sup-run"
	s.BaseCommit, _ = d.Work.Head(ctx)
	supervisors.AddTrigger(&s, supervisors.TriggerMilestoneComplete)
	out, err := d.supervisors().Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.SupervisorRunLog) != 3 || !out.SupervisorRunLog[0].Bootstrap {
		t.Fatalf("run log %+v", out.SupervisorRunLog)
	}
	for _, name := range supervisors.Order {
		reqs := m.requests(name)
		if len(reqs) != 1 {
			t.Fatalf("%s: %d calls", name, len(reqs))
		}
		sys, user := reqs[0].Messages[0].Content, reqs[0].Messages[len(reqs[0].Messages)-1].Content
		if !strings.Contains(sys, prompts.MarkerBootstrap) {
			t.Errorf("%s not told it bootstraps:\n%s", name, sys)
		}
		if !strings.Contains(user, "## "+prompts.SecCodeSample) || !strings.Contains(user, "func Greet(") {
			t.Errorf("%s sees no code sample:\n%s", name, user)
		}
		if n := llm.CountTokens(sys + user); n > d.Settings.Supervisors.InputTokens {
			t.Errorf("%s prompt %d tokens over the %d budget", name, n, d.Settings.Supervisors.InputTokens)
		}
	}
}

// TestSupModesLandWhereTheyShould: blocking mode lands results inside
// run_supervisors; background mode returns at once with the jobs in flight,
// and the next planning round lands them.
func TestSupModesLandWhereTheyShould(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, blocking := range []bool{true, false} {
		m := &supFakeModel{answer: supAnswerEmptySupervisor}
		d := supDeps(t, m, true)
		d.Supervisors = supervisors.NewJobs(ctx, m)
		d.Settings.Supervisors.Blocking = blocking
		s := supExecState()
		s.RunID = "sup-run"
		s.BaseCommit, _ = d.Work.Head(ctx)
		s.TasksCompleted = 3
		supervisors.CountTask(&s)
		s.Supervisors[prompts.Internaliser] = runstate.SupervisorTrack{TasksSinceRun: 3}
		out, err := d.supervisors().Run(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if blocking {
			if len(out.SupervisorJobs) != 0 || len(out.SupervisorRunLog) != 1 {
				t.Fatalf("blocking: jobs %v log %+v, want the result landed in the step", out.SupervisorJobs, out.SupervisorRunLog)
			}
		} else {
			if len(out.SupervisorJobs) != 1 || len(out.SupervisorRunLog) != 0 {
				t.Fatalf("background: jobs %v log %+v, want the job in flight", out.SupervisorJobs, out.SupervisorRunLog)
			}
			if _, ok := d.Supervisors.Wait(ctx, out.SupervisorJobs[0].ID); !ok {
				t.Fatal("job never finished")
			}
			if err := d.supervisors().LandFinished(ctx, &out); err != nil {
				t.Fatal(err)
			}
			if len(out.SupervisorJobs) != 0 || len(out.SupervisorRunLog) != 1 {
				t.Fatalf("background after landing: jobs %v log %+v", out.SupervisorJobs, out.SupervisorRunLog)
			}
		}
		d.Supervisors.Close()
	}
}

// TestSupRelaunchAfterRestart: a job the state lists but this process never
// started (a resume) is launched again and lands once.
func TestSupRelaunchAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := &supFakeModel{answer: supAnswerEmptySupervisor}
	d := supDeps(t, m, true)
	d.Supervisors = supervisors.NewJobs(ctx, m)
	defer d.Supervisors.Close()
	s := supExecState()
	s.RunID = "sup-run"
	s.BaseCommit, _ = d.Work.Head(ctx)
	s.SupervisorJobs = []runstate.SupervisorJob{{ID: "internaliser-3-1", Supervisor: prompts.Internaliser, Trigger: supervisors.TriggerInterval, AtTask: 3}}
	if err := d.supervisors().LandFinished(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.SupervisorJobs) != 1 || !d.Supervisors.Known("internaliser-3-1") {
		t.Fatalf("job not relaunched: %v", s.SupervisorJobs)
	}
	if err := d.supervisors().Await(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if err := d.supervisors().Await(ctx, &s); err != nil { // nothing left: nothing landed twice
		t.Fatal(err)
	}
	if n := len(m.requests(prompts.Internaliser)); n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
	if len(s.SupervisorJobs) != 0 || len(s.SupervisorRunLog) != 1 || s.SupervisorRunLog[0].JobID != "internaliser-3-1" {
		t.Fatalf("jobs %v log %+v", s.SupervisorJobs, s.SupervisorRunLog)
	}

	// A process without supervisors (offline) records the job as skipped.
	d.Supervisors = nil
	s.SupervisorJobs = []runstate.SupervisorJob{{ID: "design-4-1", Supervisor: prompts.Design, Trigger: supervisors.TriggerTaskAbort, AtTask: 4}}
	if err := d.supervisors().LandFinished(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.SupervisorJobs) != 0 || s.SupervisorRunLog[1].Status != "skipped" {
		t.Fatalf("offline: jobs %v log %+v", s.SupervisorJobs, s.SupervisorRunLog)
	}
}

// TestSupBudgetWarnsOnce: jobs landing after the budget was crossed do not
// repeat the warning; a failed job's cost counts too.
func TestSupBudgetWarnsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := supDeps(t, nil, true)
	d.Supervisors = supervisors.NewJobs(ctx, nil)
	defer d.Supervisors.Close()
	d.Settings.Supervisors.BudgetUSD = 0.03
	s := supLandState(d, t)
	supervisors.AddTrigger(&s, supervisors.TriggerMilestoneComplete)
	var outs []supervisors.Outcome
	for _, ds := range supervisors.DueNow(s, d.Settings.Supervisors) {
		job := supervisors.StartJob(&s, ds, false)
		out := supCodeStyleOutcome(job, nil, nil, nil)
		out.CodeStyle = nil
		out.Err = &llm.StructuredError{Raw: "x", Problem: "not JSON", Attempts: 2}
		outs = append(outs, out)
	}
	warnings := supInNode(t, func(ctx context.Context) error {
		for _, out := range outs {
			if err := d.supervisors().Land(ctx, &s, out); err != nil {
				return err
			}
		}
		return nil
	})
	n := 0
	for _, w := range warnings {
		if strings.Contains(w, "budget of $0.03 reached") {
			n++
		}
	}
	if n != 1 || s.SupervisorSpendUSD < 3*suptest.CallCost-1e-9 {
		t.Fatalf("%d budget warnings (spend %v): %q", n, s.SupervisorSpendUSD, warnings)
	}
	if got := supDueNames(s, d.Settings); len(got) != 0 {
		t.Fatalf("due with the budget spent: %v", got)
	}
}

// TestSupAssessorSeesSupervisorFindings: the Assessor's prompt carries the
// supervisor run log and the pending directives as evidence of drift.
func TestSupAssessorSeesSupervisorFindings(t *testing.T) {
	t.Parallel()
	m := &supFakeModel{answer: supAnswerAssessor("aligned")}
	d := supDeps(t, m, false)
	s := supExecState()
	s.Milestones = []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}}
	s.SupervisorRunLog = []runstate.SupervisorRun{{Supervisor: prompts.Design, Trigger: supervisors.TriggerTaskAbort, AtTask: 4, Status: "ok", Summary: "the storage layer bypasses the entity API", Directives: []string{"d1"}}}
	supervisors.AddDirectives(&s, prompts.Design, []runstate.Directive{{Type: runstate.DirFunctional, Priority: runstate.PrioNormal, Description: "Route storage through the entity API"}}, 10, supNow)
	if _, err := d.Assessor(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests(runstate.NodeAssessor)
	if len(reqs) != 1 {
		t.Fatalf("%d assessor calls", len(reqs))
	}
	sec := llmtest.Section(reqs[0].Messages[len(reqs[0].Messages)-1].Content, prompts.SecFindings)
	for _, want := range []string{"design (task_abort, after task 4): the storage layer bypasses the entity API; 1 directives", "pending normal functional directive: Route storage through the entity API"} {
		if !strings.Contains(sec, want) {
			t.Errorf("SUPERVISOR FINDINGS lacks %q:\n%s", want, sec)
		}
	}
}

// TestSupBlockingStepRerunCommitsOnce: in blocking mode a run_supervisors
// step that committed its documents but died before its checkpoint runs again
// on resume with the same input; the documents are not committed twice.
func TestSupBlockingStepRerunCommitsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	calls := 0
	m := &supFakeModel{answer: func(req llm.Request) (string, error) {
		if req.Label != prompts.CodeStyle {
			return supAnswerEmptySupervisor(req)
		}
		calls++ // a real model words its second answer differently
		return suptest.JSON(map[string]any{"conventions_updated": []string{suptest.ConventionPath}, "directives": []any{}, "findings": []string{}, "summary": "s",
			"docs": []any{map[string]any{"path": suptest.ConventionPath, "title": "Output file names", "rules": []string{fmt.Sprintf("Name files after their task (answer %d).", calls)}}}}), nil
	}}
	d := supDeps(t, m, true)
	d.Settings.Supervisors.Blocking = true
	s := supLandState(d, t)
	supervisors.AddTrigger(&s, supervisors.TriggerMilestoneComplete)
	for process := 1; process <= 2; process++ {
		d.Supervisors = supervisors.NewJobs(ctx, m) // a new process
		out, err := d.supervisors().Run(ctx, s)
		d.Supervisors.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r := supRunLog(out, prompts.CodeStyle); len(r) != 1 || !slices.Equal(r[0].Docs, []string{suptest.ConventionPath}) {
			t.Fatalf("process %d: run %+v", process, r)
		}
	}
	log, err := d.Work.Log(ctx, s.BaseCommit)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 {
		t.Fatalf("%d commits after the step ran twice, want 1", len(log))
	}
}

// TestSupUncomposablePromptIsSkipped: a supervisor whose required input does
// not fit its budget is skipped with a warning; the run goes on. A long remit
// is clipped to fit the default budget.
func TestSupUncomposablePromptIsSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := &supFakeModel{answer: supAnswerEmptySupervisor}
	d := supDeps(t, m, true)
	d.Settings.Supervisors.Blocking = true
	s := supLandState(d, t)
	s.Remit = strings.Repeat("Make every statistic exact and documented. ", 2000) // ~22k tokens
	supervisors.AddTrigger(&s, supervisors.TriggerTaskAbort)

	d.Settings.Supervisors.InputTokens = 40
	var out runstate.State
	warnings := supInNode(t, func(ctx context.Context) error {
		d.Supervisors = supervisors.NewJobs(ctx, m)
		defer d.Supervisors.Close()
		var err error
		out, err = d.supervisors().Run(ctx, s)
		return err
	})
	if n := len(m.requests(prompts.Design)); n != 0 {
		t.Fatalf("%d calls with a prompt over budget", n)
	}
	r := supRunLog(out, prompts.Design)
	if len(r) != 1 || r[0].Status != "skipped" || len(out.SupervisorJobs) != 0 {
		t.Fatalf("run log %+v jobs %v", r, out.SupervisorJobs)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "supervisor design skipped: compose design prompt") {
		t.Fatalf("warnings %q", warnings)
	}

	d.Settings.Supervisors.InputTokens = DefaultSettings().Supervisors.InputTokens
	d.Supervisors = supervisors.NewJobs(ctx, m)
	defer d.Supervisors.Close()
	out, err := d.supervisors().Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if r := supRunLog(out, prompts.Design); len(r) != 1 || r[0].Status != "ok" {
		t.Fatalf("with the default budget: %+v", r)
	}
	req := m.requests(prompts.Design)[0]
	if n := llm.CountTokens(req.Messages[0].Content + req.Messages[len(req.Messages)-1].Content); n > d.Settings.Supervisors.InputTokens {
		t.Fatalf("prompt of %d tokens over the budget", n)
	}
}

// TestSupKnowledgePromotion: a provisional document that guided enough
// completed tasks becomes established (committed); a failed task resets its
// count. A hand-written status in another case counts as what it says.
func TestSupKnowledgePromotion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := supDeps(t, nil, true)
	const p = "conventions/file-names.md"
	doc := "# Output file names\n\n_Last updated by: user, t0_\n_Status: Provisional_\n\n## Rules\n\n1. Name each output file after its task.\n"
	if err := d.Work.FS().WriteFile("docs/knowledge/"+p, []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Work.Commit(ctx, "seed a convention", nil); err != nil {
		t.Fatal(err)
	}
	s := supLandState(d, t)
	status := func() knowledge.Status {
		store, _, err := knowledge.Open(filepath.Join(d.Work.Dir(), "docs/knowledge"))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := store.Get(p)
		if !ok {
			t.Fatalf("%s missing", p)
		}
		return got.EffectiveStatus()
	}
	task := func(id string) *runstate.Task {
		return &runstate.Task{ID: id, Milestone: "m1", KnowledgeInjected: []string{p}}
	}

	afterTaskOf(d).countKnowledgeUse(ctx, &s, task("t1"))
	afterTaskOf(d).countKnowledgeUse(ctx, &s, task("t2"))
	forgetKnowledgeUse(&s, task("t3")) // t3 failed with the doc in its prompt
	if s.KnowledgeUses[p] != 0 || status() != knowledge.Provisional {
		t.Fatalf("after a failure: uses %v, status %s", s.KnowledgeUses, status())
	}
	for _, id := range []string{"t4", "t5"} {
		afterTaskOf(d).countKnowledgeUse(ctx, &s, task(id))
	}
	if status() != knowledge.Provisional {
		t.Fatal("promoted before 3 clean uses in a row")
	}
	afterTaskOf(d).countKnowledgeUse(ctx, &s, task("t6"))
	if status() != knowledge.Established {
		t.Fatalf("not established after 3 clean uses (uses %v)", s.KnowledgeUses)
	}
	log, err := d.Work.Log(ctx, s.BaseCommit)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(log); n != 1 || !strings.HasPrefix(log[0].Subject, "knowledge: established") {
		t.Fatalf("commits %+v, want the promotion", log)
	}
	if _, ok := s.KnowledgeUses[p]; ok {
		t.Fatalf("count kept after promotion: %v", s.KnowledgeUses)
	}
}
