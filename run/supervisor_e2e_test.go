package run

// End-to-end tests of the supervisor layer: the real workflow (Start and
// Resume, git worktree, gates, checkpoints) against llmtest servers — the
// Ollama API for the loop, the OpenAI-compatible API standing in for
// OpenRouter.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes"
)

const supDirectiveDesc = "Give every output file a task-named header (out/style.txt)"

// supBootstrapStyle is a Code Style supervisor that, on an empty store,
// establishes a convention and asks for one cleanup; afterwards it finds
// nothing.
func supBootstrapStyle(role string, c llmtest.Call) (llmtest.Reply, bool) {
	if role != prompts.CodeStyle || !strings.Contains(c.Messages[0].Content, prompts.MarkerBootstrap) {
		return llmtest.Reply{}, false
	}
	return supReply(map[string]any{
		"conventions_updated": []string{suptest.ConventionPath},
		"docs": []any{map[string]any{
			"path": suptest.ConventionPath, "title": "Output file names",
			"rules":    []string{"Name each output file after the milestone and task that writes it."},
			"examples": "Good: out/m1-2.txt\nBad: out/file.txt",
		}},
		"directives": []any{map[string]any{"type": "cleanup", "description": supDirectiveDesc,
			"rationale": "Convention " + suptest.ConventionPath + ".", "priority": "low", "files": []string{"out/style.txt"}}},
		"findings": []string{"output files lack headers"},
		"summary":  "Bootstrap: established the file-name convention; one cleanup.",
	}), true
}

func supTaskFate(string, string) string { return runstate.FateTask }

// TestSupE2EBootstrapAndDirective: on an empty store the first Code Style run
// bootstraps — it sees a sample of the code, writes a convention that is
// committed on the run branch — and its directive reaches the planner's
// prompt, becomes a task, and ends completed. In blocking mode all of that
// lands inside run_supervisors.
func TestSupE2EBootstrapAndDirective(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, &supTeam{Supervisor: supBootstrapStyle, DirectiveFate: supTaskFate})
	e.Cfg.Supervisors.CodeStyle.Interval = 2
	e.Cfg.Supervisors.Internaliser.Interval = 0
	res := e.mustStart(e.supPlan(3))
	s := res.State

	styleCalls := supCallsOf(e.Cloud, prompts.CodeStyle)
	if len(styleCalls) != 2 {
		t.Fatalf("%d code_style calls, want the interval run and the milestone run", len(styleCalls))
	}
	first := supFirstUser(styleCalls[0])
	if !strings.Contains(styleCalls[0].Messages[0].Content, prompts.MarkerBootstrap) ||
		!strings.Contains(first, "## "+prompts.SecCodeSample) || !strings.Contains(first, "func Greet(") {
		t.Fatalf("first code_style call is not a bootstrap over the code:\n%s", first)
	}
	if strings.Contains(styleCalls[1].Messages[0].Content, prompts.MarkerBootstrap) {
		t.Error("the second run bootstrapped again although the store has a convention")
	}

	runs := supRunLog(s, prompts.CodeStyle)
	if len(runs) != 2 {
		t.Fatalf("code_style runs %+v", runs)
	}
	r := runs[0]
	if r.Status != "ok" || r.Trigger != supervisors.TriggerInterval || r.AtTask != 2 || !r.Bootstrap || !slices.Equal(r.Docs, []string{suptest.ConventionPath}) ||
		!slices.Equal(r.Directives, []string{"d1"}) || r.PromptTokens != suptest.PromptTokens || r.CompletionTokens != suptest.CompletionToks || r.CostUSD != suptest.CallCost {
		t.Fatalf("bootstrap run %+v", r)
	}

	// The convention is committed on the run branch, once, provisional.
	if c := supTrailerCommits(t, e.Repo, res.Branch, supervisors.TrailerJob, r.JobID); len(c) != 1 {
		t.Fatalf("commits with %s: %s = %v, want 1", supervisors.TrailerJob, r.JobID, c)
	}
	doc := suptest.Git(t, e.Repo, "show", res.Branch+":docs/knowledge/"+suptest.ConventionPath)
	if !strings.Contains(doc, "Name each output file after the milestone") || !strings.Contains(doc, "provisional") {
		t.Fatalf("committed convention:\n%s", doc)
	}

	// The directive is in the next planning prompt, in ACTIVE DIRECTIVES.
	var seen bool
	for _, c := range supCallsOf(e.Local, runstate.NodePlanner) {
		sec := llmtest.Section(supFirstUser(c), prompts.SecDirectives)
		if strings.Contains(sec, "- [d1] LOW cleanup from code_style: "+supDirectiveDesc) && strings.Contains(sec, "files: out/style.txt") {
			seen = true
		}
	}
	if !seen {
		t.Fatal("no planner prompt carried d1 in ACTIVE DIRECTIVES")
	}
	var fates []string
	for _, f := range s.DirectiveLog {
		fates = append(fates, f.DirectiveID+":"+f.Fate+":"+f.TaskID)
	}
	if !slices.Equal(fates, []string{"d1:task:", "d1:completed:t4"}) {
		t.Fatalf("directive log %v", fates)
	}
	last := s.DoneList[len(s.DoneList)-1]
	if last.DirectiveID != "d1" || !slices.Equal(last.Files, []string{"out/style.txt"}) {
		t.Fatalf("directive task %+v", last)
	}
	if c := supTrailerCommits(t, e.Repo, res.Branch, nodes.TrailerDirective, "d1"); len(c) != 1 {
		t.Fatalf("commits for directive d1: %v", c)
	}

	// Blocking mode: every result landed inside run_supervisors.
	for _, ev := range e.custom("supervisor_done") {
		if ev.Node != runstate.NodeSupervisors {
			t.Errorf("supervisor_done in %s, want %s", ev.Node, runstate.NodeSupervisors)
		}
	}
	if len(e.custom("supervisor_done")) != len(s.SupervisorRunLog) {
		t.Errorf("%d supervisor_done events for %d runs", len(e.custom("supervisor_done")), len(s.SupervisorRunLog))
	}

	// The report shows both.
	report, err := os.ReadFile(s.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"docs/knowledge/" + suptest.ConventionPath, "| d1 | code_style | completed | t4 |", "| code_style | interval | 2 | ok | 4200/380 |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestSupE2EBackgroundLandsAtNextPlanningRound: in background mode
// run_supervisors only starts the jobs; their results land in a later
// planning round (or, at the latest, before the polish phase), never twice.
func TestSupE2EBackgroundLandsAtNextPlanningRound(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, &supTeam{Supervisor: supBootstrapStyle, DirectiveFate: supTaskFate, SupervisorLatency: 30 * time.Millisecond})
	e.Cfg.Supervisors.Mode = "background"
	e.Cfg.Supervisors.CodeStyle.Interval = 2
	res := e.mustStart(e.supPlan(4))
	s := res.State
	starts, dones := e.custom("supervisor_start"), e.custom("supervisor_done")
	if len(starts) == 0 || len(starts) != len(dones) || len(s.SupervisorRunLog) != len(starts) {
		t.Fatalf("%d starts, %d landings, %d runs logged", len(starts), len(dones), len(s.SupervisorRunLog))
	}
	for _, ev := range starts {
		if ev.Node != runstate.NodeSupervisors {
			t.Errorf("supervisor_start in %s", ev.Node)
		}
	}
	for _, ev := range dones {
		if ev.Node != runstate.NodePlanner && ev.Node != runstate.NodePolish {
			t.Errorf("supervisor_done in %s, want a later planning round or the polish phase", ev.Node)
		}
	}
	if len(s.SupervisorJobs) != 0 {
		t.Fatalf("jobs still in flight at the end: %v", s.SupervisorJobs)
	}
	if c := supTrailerCommits(t, e.Repo, res.Branch, supervisors.TrailerJob, ""); len(c) != 1 {
		t.Fatalf("knowledge commits %v, want the bootstrap convention once", c)
	}
	if got := supFates(s); !slices.Equal(got, []string{"d1:task", "d1:completed"}) {
		t.Fatalf("directive log %v", got)
	}
}

// TestSupE2ETriggerSequence: over two milestones of three tasks, each
// supervisor runs exactly when its triggers say.
func TestSupE2ETriggerSequence(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, &supTeam{SupervisorLatency: 100 * time.Millisecond})
	res := e.mustStart(e.supPlan(3, 3))
	if n := e.Cloud.MaxConcurrent(); n < 2 {
		t.Errorf("at most %d supervisor call at a time: the due supervisors did not run in parallel", n)
	}
	var got []string
	for _, r := range res.State.SupervisorRunLog {
		got = append(got, fmt.Sprintf("%s:%s:%d", r.Supervisor, r.Trigger, r.AtTask))
	}
	want := []string{
		"internaliser:interval:3",
		"code_style:milestone_complete:3", "design:milestone_complete:3", // the Internaliser just ran: nothing new
		"internaliser:interval:6", // Code Style's count restarted at the milestone: 3 < 5
		"code_style:milestone_complete:6", "design:milestone_complete:6",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("supervisor runs\n got %v\nwant %v", got, want)
	}
}

// supFaultCase is one way the cloud can fail.
type supFaultCase struct {
	name string
	// reply is what the cloud answers every supervisor call; nil: no server.
	reply  *llmtest.Reply
	status string // run log status
	want   string // in each warning
	calls  int    // calls per supervisor (retries, re-asks)
}

// TestSupE2EGracefulDegradation: whatever goes wrong on the cloud side, each
// supervisor's failure is a warning event and a log entry, and the run
// completes.
func TestSupE2EGracefulDegradation(t *testing.T) {
	t.Parallel()
	errBody := func(code int, msg string) string {
		return fmt.Sprintf(`{"error":{"message":%q,"code":%d}}`, msg, code)
	}
	cases := []supFaultCase{
		{name: "network down", status: "skipped", want: "unavailable"},
		{name: "401", reply: &llmtest.Reply{Status: 401, Body: errBody(401, "No auth credentials found")}, status: "skipped", want: "auth", calls: 1},
		{name: "402", reply: &llmtest.Reply{Status: 402, Body: errBody(402, "Insufficient credits")}, status: "skipped", want: "quota", calls: 1},
		{name: "429", reply: &llmtest.Reply{Status: 429, Body: errBody(429, "Rate limit exceeded")}, status: "skipped", want: "rate_limited", calls: 2},
		{name: "5xx", reply: &llmtest.Reply{Status: 502, Body: errBody(502, "Provider returned error")}, status: "skipped", want: "server", calls: 2},
		{name: "malformed JSON", reply: &llmtest.Reply{Content: "Here are my findings: conventions look fine!"}, status: "discarded", want: "structured reply unusable", calls: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tm := &supTeam{}
			if tc.reply != nil {
				rep := *tc.reply
				tm.Supervisor = func(string, llmtest.Call) (llmtest.Reply, bool) { return rep, true }
			}
			e := supNewEnv(t, tm)
			if tc.reply == nil {
				e.Cfg.OpenRouter.BaseURL = supClosedURL(t)
			}
			res := e.mustStart(e.supPlan(1))
			s := res.State
			if len(s.SupervisorRunLog) != 3 {
				t.Fatalf("run log %+v, want one entry per supervisor", s.SupervisorRunLog)
			}
			for _, r := range s.SupervisorRunLog {
				if r.Status != tc.status || len(r.Docs) != 0 || len(r.Directives) != 0 || !strings.Contains(r.Warning, tc.want) {
					t.Errorf("run %+v: want status %s and a warning about %s", r, tc.status, tc.want)
				}
			}
			warned := 0
			for _, w := range e.warnings() {
				if strings.HasPrefix(w, "supervisor ") && strings.Contains(w, " "+tc.status+": ") && strings.Contains(w, tc.want) {
					warned++
				}
			}
			if warned != 3 {
				t.Errorf("%d supervisor warnings about %s, want 3: %q", warned, tc.want, e.warnings())
			}
			if c := supTrailerCommits(t, e.Repo, res.Branch, supervisors.TrailerJob, ""); len(c) != 0 {
				t.Errorf("knowledge committed despite the fault: %v", c)
			}
			if tc.reply != nil {
				for _, name := range []string{prompts.CodeStyle, prompts.Design, prompts.Internaliser} {
					if n := len(supCallsOf(e.Cloud, name)); n != tc.calls {
						t.Errorf("%s: %d calls, want %d", name, n, tc.calls)
					}
				}
			}
		})
	}
	t.Run("no key", func(t *testing.T) {
		t.Parallel()
		e := supNewEnv(t, nil)
		e.Cfg.OpenRouter.APIKey = ""
		res := e.mustStart(e.supPlan(1))
		if !strings.Contains(e.warnText(), "supervisors off for this run") || !strings.Contains(e.warnText(), "OPENROUTER_API_KEY") {
			t.Errorf("warning output %q", e.warnText())
		}
		if ws := strings.Join(e.warnings(), "\n"); !strings.Contains(ws, "supervisors off for this run") {
			t.Errorf("no warning event for the missing key; events say %q", ws)
		}
		if n := len(e.Cloud.Calls()); n != 0 {
			t.Errorf("%d requests to the cloud without a key", n)
		}
		if len(res.State.SupervisorRunLog) != 0 || len(res.State.SupervisorJobs) != 0 {
			t.Errorf("supervisors ran without a key: %+v", res.State.SupervisorRunLog)
		}
	})
}

// TestSupE2EBudgetStopsCalls: once the run's supervisor spend reaches the
// budget a warning says so and no supervisor is called again.
func TestSupE2EBudgetStopsCalls(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, nil)
	e.Cfg.Supervisors.BudgetUSD = 0.03 // a call costs 0.0183: the second one crosses it
	res := e.mustStart(e.supPlan(7))
	s := res.State
	var got []string
	for _, r := range s.SupervisorRunLog {
		got = append(got, fmt.Sprintf("%s:%d", r.Supervisor, r.AtTask))
	}
	// Without the budget: internaliser at 3, code_style at 5, internaliser at
	// 6, all three at the milestone's end.
	if !slices.Equal(got, []string{"internaliser:3", "code_style:5"}) {
		t.Fatalf("runs %v, want the two before the budget ran out", got)
	}
	if n := len(e.Cloud.ChatCalls()); n != 2 {
		t.Fatalf("%d cloud calls, want 2", n)
	}
	if d := s.SupervisorSpendUSD - 2*suptest.CallCost; d > 1e-9 || d < -1e-9 {
		t.Errorf("spend %v", s.SupervisorSpendUSD)
	}
	n := 0
	for _, w := range e.warnings() {
		if strings.Contains(w, "supervisor budget of $0.03 reached") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("budget warnings %d in %q, want 1", n, e.warnings())
	}
}

// TestSupE2EOfflineSendsNothingToTheCloud: with offline set, built as the CLI
// builds it (RouterConfigFrom inside Start), not one request reaches the
// stand-in for OpenRouter — not from the supervisors, not from a local role
// someone pointed at the cloud, not from retrieval (which asks the local
// embedding model) — and the run completes on the local server alone.
func TestSupE2EOfflineSendsNothingToTheCloud(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, nil)
	e.Cfg.Offline = true
	sum := e.Cfg.Roles[config.RoleSummarizer]
	sum.Provider = config.ProviderOpenRouter // would go to the cloud if offline did not hold
	e.Cfg.Roles[config.RoleSummarizer] = sum
	e.Cfg.RAG.Enabled = true
	e.Cfg.RAG.Embedder = "ollama"
	e.Cfg.Log.Prompts = true

	rc := RouterConfigFrom(e.Cfg, true)
	for name, r := range rc.Roles {
		if r.Provider != config.ProviderOllama {
			t.Errorf("offline router has role %s on %s", name, r.Provider)
		}
	}
	res := e.mustStart(e.supPlan(4))
	if calls := e.Cloud.Calls(); len(calls) != 0 {
		t.Fatalf("%d requests reached the cloud server offline; first: %s %s", len(calls), calls[0].Method, calls[0].Path)
	}
	if len(e.Local.ChatCalls()) == 0 {
		t.Fatal("the local server got no call")
	}
	if len(res.State.SupervisorRunLog) != 0 {
		t.Fatalf("supervisors ran offline: %+v", res.State.SupervisorRunLog)
	}
	// Offline asks the local server alone: its embedding model is kept
	// (an index built with it is not thrown away for the offline embedder's).
	embeds := 0
	for _, c := range e.Local.Calls() {
		if strings.HasSuffix(c.Path, "/api/embed") {
			embeds++
		}
	}
	if embeds == 0 {
		t.Error("offline retrieval did not use the local embedding model")
	}
}

// TestSupE2ESecretsNeverReachTheCloud: deny-listed files are never sent to a
// supervisor and secrets in the files that are sent are redacted; the prompt
// log records what was sent; no secret reaches the prompt log, the event log
// or the report either.
func TestSupE2ESecretsNeverReachTheCloud(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, nil)
	e.Cfg.Supervisors.CodeStyle.Interval = 2
	e.Cfg.Log.Prompts = true
	res := e.mustStart(e.supPlanTitles([]string{"Write .env", "Write app.go"}))
	calls := supCallsOf(e.Cloud, prompts.CodeStyle)
	if len(calls) == 0 {
		t.Fatal("no code_style call")
	}
	for _, c := range e.Cloud.Calls() {
		for _, secret := range []string{suptest.SecretKey, suptest.SecretToken} {
			if strings.Contains(string(c.Body), secret) {
				t.Fatalf("a secret reached the cloud in call %d", c.Seq)
			}
		}
	}
	p := supFirstUser(calls[0])
	if !strings.Contains(p, "### app.go") || !strings.Contains(p, "deployToken = \"[REDACTED:github-pat]\"") {
		t.Fatalf("app.go not sent (redacted):\n%s", p)
	}
	if strings.Contains(p, "### .env") {
		t.Fatalf(".env content was sent:\n%s", p)
	}
	log, err := os.ReadFile(filepath.Join(res.RunDir, PromptsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "[REDACTED:github-pat]") {
		t.Error("the prompt log does not show the redacted prompt")
	}
	for _, name := range []string{PromptsFile, EventsFile, "report.md"} {
		data, err := os.ReadFile(filepath.Join(res.RunDir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{suptest.SecretKey, suptest.SecretToken} {
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds the secret %.12s…", name, secret)
			}
		}
	}
}

// TestSupE2EPolishIsBounded: the polish phase works off cleanup directives
// only, for at most limits.polish_tasks tasks.
func TestSupE2EPolishIsBounded(t *testing.T) {
	t.Parallel()
	tm := &supTeam{DirectiveFate: supTaskFate}
	tm.Supervisor = func(role string, c llmtest.Call) (llmtest.Reply, bool) {
		if role != prompts.CodeStyle || !strings.Contains(supFirstUser(c), "milestone_complete") && !strings.Contains(c.Messages[0].Content, prompts.MarkerBootstrap) {
			return llmtest.Reply{}, false
		}
		var dirs []any
		for i := 1; i <= 4; i++ {
			dirs = append(dirs, map[string]any{"type": "cleanup", "description": fmt.Sprintf("Tidy out/polish-%d.txt", i), "priority": "low"})
		}
		return supReply(map[string]any{"conventions_updated": []string{}, "docs": []any{}, "directives": dirs, "findings": []string{}, "summary": "four cleanups"}), true
	}
	e := supNewEnv(t, tm)
	e.Cfg.Limits.PolishTasks = 2
	e.Cfg.Supervisors.Internaliser.Interval = 0
	res := e.mustStart(e.supPlan(1))
	polish := 0
	for _, d := range res.State.DoneList {
		if d.Polish {
			polish++
		}
	}
	if polish != 2 {
		t.Fatalf("%d polish tasks, want the limit of 2 (pending: %v)", polish, supIDs(res.State.PendingDirectives))
	}
}

// TestSupE2EIgnoredDirectiveIsForced: a planner that never answers for a
// directive sees it again, and after two rounds the orchestrator makes it a
// task; it is done like any other.
func TestSupE2EIgnoredDirectiveIsForced(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, &supTeam{Supervisor: supBootstrapStyle}) // the planner answers no directive
	e.Cfg.Supervisors.CodeStyle.Interval = 1
	e.Cfg.Supervisors.Internaliser.Interval = 0
	res := e.mustStart(e.supPlan(3))
	shown := 0
	for _, c := range supCallsOf(e.Local, runstate.NodePlanner) {
		if strings.Contains(llmtest.Section(supFirstUser(c), prompts.SecDirectives), "[d1]") {
			shown++
		}
	}
	if shown != 2 {
		t.Fatalf("d1 shown to the planner %d times, want 2", shown)
	}
	if got := supFates(res.State); !slices.Equal(got, []string{"d1:forced_task", "d1:completed"}) {
		t.Fatalf("directive log %v", got)
	}
}

// TestSupE2ETaskAbortPullsEveryoneForward: an abandoned task adds +1.0
// urgency, so every supervisor runs at once — Design for the abort itself —
// and the urgency is spent; the run goes on and completes.
func TestSupE2ETaskAbortPullsEveryoneForward(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, nil)
	e.Cfg.Limits.MaxRetries = 1
	res := e.mustStart(e.supPlanTitles([]string{"Write out/blocked.txt", "Write out/m1-2.txt"}))
	s := res.State
	if s.TasksFailed != 1 || s.TasksCompleted != 1 {
		t.Fatalf("%d failed, %d completed", s.TasksFailed, s.TasksCompleted)
	}
	var got []string
	for _, r := range s.SupervisorRunLog {
		got = append(got, fmt.Sprintf("%s:%s:%d", r.Supervisor, r.Trigger, r.AtTask))
	}
	want := []string{"code_style:urgency:0", "design:task_abort:0", "internaliser:urgency:0",
		"code_style:milestone_complete:1", "design:milestone_complete:1", "internaliser:milestone_complete:1"}
	if !slices.Equal(got, want) {
		t.Fatalf("supervisor runs\n got %v\nwant %v", got, want)
	}
	if s.SupervisorUrgency != 0 {
		t.Fatalf("urgency %v after the supervisors ran", s.SupervisorUrgency)
	}
	if first := supFirstUser(supCallsOf(e.Cloud, prompts.Design)[0]); !strings.Contains(llmtest.Section(first, prompts.SecRecentResults), "FAILED t1") {
		t.Errorf("design did not see the abandoned task:\n%s", first)
	}
}

// TestSupE2ESecretsStayOutOfTheLogsAndReport: a secret in the remit and in a
// task's title (both echoed in events and the report) is redacted in
// events.jsonl, prompts.jsonl and report.md, and never reaches the cloud.
func TestSupE2ESecretsStayOutOfTheLogsAndReport(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, nil)
	e.Cfg.Log.Prompts = true
	o := e.options(e.supPlanTitles([]string{"Write app.go for the deploy token " + suptest.SecretToken}))
	o.Remit = "ship the app; the deploy key is " + suptest.SecretKey
	res, err := Start(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\nevents:\n%s", err, e.eventLog())
	}
	for _, name := range []string{PromptsFile, EventsFile, "report.md"} {
		data, err := os.ReadFile(filepath.Join(res.RunDir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{suptest.SecretKey, suptest.SecretToken} {
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds the secret %.12s…", name, secret)
			}
		}
		if !strings.Contains(string(data), "[REDACTED:") {
			t.Errorf("%s shows no redaction", name)
		}
	}
	for _, c := range e.Cloud.Calls() {
		for _, secret := range []string{suptest.SecretKey, suptest.SecretToken} {
			if strings.Contains(string(c.Body), secret) {
				t.Fatalf("a secret reached the cloud in call %d", c.Seq)
			}
		}
	}
}
