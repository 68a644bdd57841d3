package run

// Harness of the supervisor tests: a scripted team whose every reply is a pure
// function of the request, a small git repository, operator plans of trivial
// tasks, and a driver that runs the real workflow through Start and Resume
// against two llmtest servers (Ollama's API for the loop, the OpenAI-compatible
// API standing in for OpenRouter). Every name here starts with "sup" so the
// harness cannot collide with the other tests of the package.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// Model names the scripted servers answer for.
const (
	supPrimaryModel    = "sup-primary:7b"
	supSummarizerModel = "sup-summarizer:1b"
	supEmbedModel      = "sup-embed"
	supCloudModel      = "sup/cloud-model"
)

// supTeam plays every model of a run. The zero value answers every role with
// a valid, uneventful reply.
type supTeam struct {
	mu sync.Mutex
	// LocalLatency is added to every Ollama answer, SupervisorLatency to
	// every supervisor answer.
	LocalLatency      time.Duration
	SupervisorLatency time.Duration
	// Supervisor, when set, answers a supervisor call (role is code_style,
	// design or internaliser); returning ok=false falls back to the default.
	Supervisor func(role string, c llmtest.Call) (llmtest.Reply, bool)
	// DirectiveFate is the planner's fate for a directive shown to it (the
	// directive's line in ACTIVE DIRECTIVES); "" leaves it unanswered.
	DirectiveFate func(id, line string) string
	// Verdict is the answer to periodic assessments ("" = aligned).
	Verdict string
	// Local, when set, answers a local call first (role is who asks);
	// ok=false falls back to the default answer.
	Local func(role string, c llmtest.Call) (any, bool)
	// CloudHelp answers the cloud calls that are not a supervisor's (the
	// architect, a disputed review, a cloud planner); unset, they fail.
	CloudHelp func(role string, c llmtest.Call) (any, bool)
}

func (tm *supTeam) setSupervisorLatency(d time.Duration) {
	tm.mu.Lock()
	tm.SupervisorLatency = d
	tm.mu.Unlock()
}

func (tm *supTeam) latencies() (local, sup time.Duration) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.LocalLatency, tm.SupervisorLatency
}

// supRoleOf names who asks.
func supRoleOf(c llmtest.Call) string { return c.Role() }

func supIsSupervisor(role string) bool {
	return role == prompts.CodeStyle || role == prompts.Design || role == prompts.Internaliser
}

// supFirstUser is the composed prompt (later user messages are tool results
// or a re-ask).
func supFirstUser(c llmtest.Call) string { return c.FirstUser() }

// steps returns the scripts of the local and the cloud server.
func (tm *supTeam) steps() (local, cloud []llmtest.Step) {
	local = []llmtest.Step{{Name: "sup-local", API: llmtest.Ollama, Times: -1, Respond: tm.respondLocal}}
	cloud = []llmtest.Step{{Name: "sup-cloud", API: llmtest.OpenAI, Times: -1, Respond: tm.respondCloud}}
	return local, cloud
}

func (tm *supTeam) respondLocal(c llmtest.Call) llmtest.Reply {
	lat, _ := tm.latencies()
	if tm.Local != nil {
		if v, ok := tm.Local(supRoleOf(c), c); ok {
			return llmtest.Reply{Content: suptest.JSON(v), Latency: lat}
		}
	}
	var v any
	switch supRoleOf(c) {
	case runstate.NodePlanner:
		v = tm.plannerReply(c)
	case runstate.NodeImplementor:
		v = supImplementorReply(c)
	case runstate.NodeQA:
		v = supQAReply(c)
	case runstate.NodeAssessor:
		v = tm.assessorReply(c)
	case prompts.Summarizer:
		v = map[string]any{"summary": "The task is done."}
	default:
		return llmtest.Reply{Status: 500, Body: `{"error":"sup team: no local role answers this prompt"}`}
	}
	return llmtest.Reply{Content: suptest.JSON(v), Latency: lat}
}

func (tm *supTeam) respondCloud(c llmtest.Call) llmtest.Reply {
	_, lat := tm.latencies()
	role := supRoleOf(c)
	var r llmtest.Reply
	switch {
	case !supIsSupervisor(role) && tm.CloudHelp != nil:
		v, ok := tm.CloudHelp(role, c)
		if !ok {
			return llmtest.Reply{Status: 500, Body: `{"error":"sup team: no cloud answer for ` + role + `"}`}
		}
		r = llmtest.Reply{Content: suptest.JSON(v)}
	case !supIsSupervisor(role):
		return llmtest.Reply{Status: 500, Body: `{"error":"sup team: the cloud answers supervisors only"}`}
	default:
		r = llmtest.Reply{Content: suptest.JSON(suptest.EmptySupervisorReply(role))}
	}
	if tm.Supervisor != nil && supIsSupervisor(role) {
		if custom, ok := tm.Supervisor(role, c); ok {
			r = custom
		}
	}
	if r.Latency == 0 {
		r.Latency = lat
	}
	if r.Status == 0 && r.Body == "" && r.Cost == 0 {
		r.PromptTokens, r.CompletionTokens, r.Cost = suptest.PromptTokens, suptest.CompletionToks, suptest.CallCost
	}
	return r
}

// supReply wraps a supervisor reply value.
func supReply(v any) llmtest.Reply { return llmtest.Reply{Content: suptest.JSON(v)} }

var (
	supDirectiveLine = regexp.MustCompile(`(?m)^- \[(d\d+)\] .*$`)
	supPlannedLine   = regexp.MustCompile(`(?m)^\d+\. (.+?)(?: \[directive (d\d+)\])?$`)
	supInProgress    = regexp.MustCompile(`(?m)^Task in progress: (t\d+) — (.+) \(attempt \d+\)$`)
	supMilestoneLine = regexp.MustCompile(`(?m)^- (m\d+) \[.*?( \(current\))?$`)
)

type supTaskSpec struct {
	Title              string   `json:"title"`
	Instructions       string   `json:"instructions"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	TargetFiles        []string `json:"target_files,omitempty"`
}

// plannerReply answers each directive by the team's policy and takes the
// next planned task (or declares the milestone done).
func (tm *supTeam) plannerReply(c llmtest.Call) any {
	p := supFirstUser(c)
	answers := []map[string]string{}
	for _, m := range supDirectiveLine.FindAllStringSubmatch(llmtest.Section(p, prompts.SecDirectives), -1) {
		fate := ""
		if tm.DirectiveFate != nil {
			fate = tm.DirectiveFate(m[1], m[0])
		}
		if fate != "" {
			answers = append(answers, map[string]string{"id": m[1], "fate": fate, "note": "scripted answer: " + fate})
		}
	}
	reply := map[string]any{"directives": answers, "carry_forward": []supTaskSpec{}}
	ms := llmtest.Section(p, prompts.SecMilestone)
	if m := supInProgress.FindStringSubmatch(ms); m != nil {
		reply["decision"], reply["reasoning"], reply["task"] = "implement", "retry", supSpec(m[2], "")
		return reply
	}
	_, planned, _ := strings.Cut(ms, "Planned next tasks (carry-forward):")
	var next []supTaskSpec
	for _, m := range supPlannedLine.FindAllStringSubmatch(planned, -1) {
		next = append(next, supSpec(m[1], ""))
	}
	if len(next) == 0 {
		reply["decision"], reply["reasoning"] = "milestone_done", "Every planned task is done."
		return reply
	}
	reply["decision"], reply["reasoning"], reply["task"], reply["carry_forward"] = "implement", "Next planned task.", next[0], next[1:]
	return reply
}

// supSpec is the task of a title; plan titles name their file.
func supSpec(title, file string) supTaskSpec {
	if file == "" {
		file = supFileOf(title)
	}
	s := supTaskSpec{Title: title, Instructions: "Write " + file + ".", AcceptanceCriteria: []string{file + " exists"}}
	if file != "" {
		s.TargetFiles = []string{file}
	}
	return s
}

var supFileInTitle = regexp.MustCompile(`(?:^|[\s(])([\w./-]*\.(?:txt|go|md|env|pem))\b`)

func supFileOf(title string) string {
	if m := supFileInTitle.FindStringSubmatch(title); m != nil {
		return m[1]
	}
	return ""
}

// supImplementorReply writes the task's file, then finishes.
func supImplementorReply(c llmtest.Call) any {
	p := supFirstUser(c)
	task := llmtest.Section(p, prompts.SecTask)
	first, _, _ := strings.Cut(strings.TrimSpace(task), "\n")
	id, title, _ := strings.Cut(first, ": ")
	steps := 0
	for _, m := range c.Messages {
		if m.Role == "assistant" {
			steps++
		}
	}
	if strings.Contains(title, "blocked") {
		return map[string]any{"thought": "cannot", "action": "blocked", "summary": "The task asks for something impossible."}
	}
	if steps > 0 {
		return map[string]any{"thought": "done", "action": "finish", "summary": "Wrote the file for " + id + "."}
	}
	path := ""
	for _, line := range strings.Split(task, "\n") {
		if f, ok := strings.CutPrefix(line, "Files: "); ok {
			path, _, _ = strings.Cut(f, ",")
			break
		}
	}
	if path == "" {
		path = "out/" + id + ".txt"
	}
	content := "task " + id + ": " + title + "\n"
	if sec, ok := supSecretFiles[path]; ok {
		content = sec
	}
	return map[string]any{"thought": "write it", "action": "write_file", "path": strings.TrimSpace(path), "content": content}
}

var supSecretFiles = map[string]string{
	".env":   "OPENROUTER_API_KEY=" + suptest.SecretKey + "\n",
	"app.go": "package app\n\n// token used by the deploy script\nconst deployToken = \"" + suptest.SecretToken + "\"\n",
}

func supQAReply(c llmtest.Call) any {
	p := supFirstUser(c)
	quote := supAddedLine(llmtest.Section(p, prompts.SecDiff))
	var verdicts []map[string]any
	for _, line := range strings.Split(llmtest.Section(p, prompts.SecCriteria), "\n") {
		num, crit, ok := strings.Cut(strings.TrimSpace(line), ". ")
		if ok {
			n, _ := strconv.Atoi(num)
			verdicts = append(verdicts, map[string]any{"number": n, "criterion": crit, "met": true, "quote": quote, "evidence": "the diff shows it"})
		}
	}
	return map[string]any{"criteria": verdicts, "feedback": ""}
}

// supAddedLine is the first added line of a diff: the reviewer's quote.
func supAddedLine(diff string) string {
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") && strings.TrimSpace(l[1:]) != "" {
			return strings.TrimSpace(l[1:])
		}
	}
	return ""
}

func (tm *supTeam) assessorReply(c llmtest.Call) any {
	p := supFirstUser(c)
	if strings.Contains(llmtest.Section(p, prompts.SecInstructions), "says milestone") {
		lines := supMilestoneLine.FindAllStringSubmatch(llmtest.Section(p, prompts.SecMilestones), -1)
		verdict := "aligned"
		if len(lines) > 0 && lines[len(lines)-1][2] != "" {
			verdict = "all_done"
		}
		return map[string]any{"verdict": verdict, "notes": "Milestone met.", "milestone_complete": true}
	}
	return map[string]any{"verdict": cmp.Or(tm.Verdict, "aligned"), "notes": "Periodic review.", "milestone_complete": false}
}

// supEnv is one test's world: servers, repository, configuration, and what
// the runs reported.
type supEnv struct {
	t     testing.TB
	Team  *supTeam
	Local *llmtest.Server
	Cloud *llmtest.Server
	Repo  string
	Cfg   *config.Config

	mu     sync.Mutex
	events []graph.Event
	warn   bytes.Buffer
	// onEvent, when set, sees every event as it happens (a test cancels a run
	// from here).
	onEvent func(graph.Event)
}

// supNewEnv starts both servers and makes the repository. The configuration
// runs supervisors in blocking mode (deterministic landing) with fast retries;
// tests change what they need.
func supNewEnv(t testing.TB, tm *supTeam) *supEnv {
	t.Helper()
	if tm == nil {
		tm = &supTeam{}
	}
	e := &supEnv{t: t, Team: tm}
	local, cloud := tm.steps()
	e.Local = llmtest.NewServer(llmtest.WithModels(
		llmtest.ModelInfo{Name: supPrimaryModel, ContextLength: 32768},
		llmtest.ModelInfo{Name: supSummarizerModel, ContextLength: 32768},
		llmtest.ModelInfo{Name: supEmbedModel, ContextLength: 8192, Capabilities: []string{"embedding"}},
	))
	e.Local.Script(local...)
	e.Cloud = llmtest.NewServer()
	e.Cloud.Script(cloud...)
	t.Cleanup(e.Local.Close)
	t.Cleanup(e.Cloud.Close)
	e.Repo = suptest.MakeRepo(t)
	e.Cfg = supConfig(e.Local.URL(), e.Cloud.URL()+"/v1")
	return e
}

func supConfig(localURL, cloudURL string) *config.Config {
	c := config.Default()
	c.Ollama.Host = localURL
	c.OpenRouter.BaseURL = cloudURL
	c.OpenRouter.APIKey = "sup-test-key-not-a-secret"
	for name, model := range map[string]string{
		config.RolePrimary: supPrimaryModel, config.RoleSummarizer: supSummarizerModel,
		config.RoleEmbedding: supEmbedModel, config.RoleSupervisor: supCloudModel,
	} {
		r := c.Roles[name]
		r.Model = model
		c.Roles[name] = r
	}
	p := c.Roles[config.RolePrimary]
	p.EditProtocol = "json" // the scripted implementor writes its files inside the JSON action
	c.Roles[config.RolePrimary] = p
	c.Retry = config.Retry{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
	c.Gates = []config.Gate{{Name: "check", Command: "true", Timeout: time.Minute}}
	c.RAG.Enabled = false
	c.Log.Prompts = false
	c.Supervisors.Mode = "blocking"
	c.Limits.ReviewInterval = 0
	return c
}

// supPlan writes an operator plan: one milestone per count, each with that
// many tasks "Write out/m<i>-<j>.txt".
func (e *supEnv) supPlan(counts ...int) string {
	var titles [][]string
	for i, n := range counts {
		var ms []string
		for j := 1; j <= n; j++ {
			ms = append(ms, fmt.Sprintf("Write out/m%d-%d.txt", i+1, j))
		}
		titles = append(titles, ms)
	}
	return e.supPlanTitles(titles...)
}

// supPlanTitles writes a plan with the given task titles per milestone; a
// title names the file its task writes.
func (e *supEnv) supPlanTitles(milestones ...[]string) string {
	var b strings.Builder
	b.WriteString("milestones:\n")
	for i, ms := range milestones {
		fmt.Fprintf(&b, "  - goal: milestone %d of the supervisor test\n    themes: [testing]\n    tasks:\n", i+1)
		for _, title := range ms {
			f := supFileOf(title)
			fmt.Fprintf(&b, "      - title: %q\n        instructions: %q\n        target_files: [%q]\n        acceptance_criteria: [%q]\n",
				title, "Write "+f+".", f, f+" exists")
		}
	}
	p := filepath.Join(e.t.TempDir(), "plan.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *supEnv) sink() graph.Sink {
	return graph.SinkFunc(func(ev graph.Event) {
		e.mu.Lock()
		e.events = append(e.events, ev)
		fn := e.onEvent
		e.mu.Unlock()
		if fn != nil {
			fn(ev)
		}
	})
}

type supLockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w supLockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (e *supEnv) options(plan string) Options {
	return Options{RepoDir: e.Repo, PlanFile: plan, Config: e.Cfg, Sinks: []graph.Sink{e.sink()}, Warn: supLockedWriter{&e.mu, &e.warn}}
}

// start runs the plan to its end (or until ctx ends).
func (e *supEnv) start(ctx context.Context, plan string) (Result, error) {
	e.t.Helper()
	return Start(ctx, e.options(plan))
}

// mustStart runs the plan and fails the test unless the run completed.
func (e *supEnv) mustStart(plan string) Result {
	e.t.Helper()
	res, err := e.start(context.Background(), plan)
	if err != nil {
		e.t.Fatalf("run: %v\nevents:\n%s", err, e.eventLog())
	}
	if res.Status != graph.StatusDone || res.State.Outcome != runstate.OutcomeDone {
		e.t.Fatalf("run ended %s, outcome %q, stop %q\nevents:\n%s", res.Status, res.State.Outcome, res.State.StopReason, e.eventLog())
	}
	return res
}

func (e *supEnv) resume(ctx context.Context, runID string) (Result, error) {
	o := e.options("")
	o.RunID = runID
	return Resume(ctx, o)
}

// custom returns the custom events of that name, in order.
func (e *supEnv) custom(name string) []graph.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []graph.Event
	for _, ev := range e.events {
		if ev.Kind == graph.EventCustom && ev.Name == name {
			out = append(out, ev)
		}
	}
	return out
}

// warnings returns the messages of the warning events.
func (e *supEnv) warnings() []string {
	var out []string
	for _, ev := range e.custom("warning") {
		var d struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		out = append(out, d.Message)
	}
	return out
}

func (e *supEnv) warnText() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.warn.String()
}

func (e *supEnv) eventLog() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.events {
		if ev.Kind == graph.EventCustom && (ev.Name == "progress" || ev.Name == "llm_call") {
			continue
		}
		fmt.Fprintf(&b, "%s %s %s %s %s\n", ev.Kind, ev.Node, ev.Name, ev.Error, ev.Data)
	}
	return b.String()
}

// calls returns the chat calls a server got from one role ("" for all).
func supCallsOf(srv *llmtest.Server, role string) []llmtest.Call {
	var out []llmtest.Call
	for _, c := range srv.ChatCalls() {
		if role == "" || supRoleOf(c) == role {
			out = append(out, c)
		}
	}
	return out
}

// supTrailerCommits lists the commits of branch (since main) whose message
// carries the trailer key (with any value when value is "").
func supTrailerCommits(t *testing.T, repo, branch, key, value string) []string {
	t.Helper()
	out := suptest.Git(t, repo, "log", "--format=%H%x00%(trailers:key="+key+",valueonly)%x00%x01", "main.."+branch)
	var shas []string
	for _, rec := range strings.Split(out, "\x01") {
		sha, val, ok := strings.Cut(strings.TrimSpace(rec), "\x00")
		if !ok {
			continue
		}
		val = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "\x00"))
		if val == "" {
			continue
		}
		if value == "" || val == value {
			shas = append(shas, sha)
		}
	}
	return shas
}

// supClosedURL is a loopback URL nothing listens on.
func supClosedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// supRunLog returns the supervisor runs of one supervisor.
func supRunLog(s runstate.State, name string) []runstate.SupervisorRun {
	var out []runstate.SupervisorRun
	for _, r := range s.SupervisorRunLog {
		if r.Supervisor == name {
			out = append(out, r)
		}
	}
	return out
}

// supFates lists the log as "id:fate".
func supFates(s runstate.State) []string {
	var out []string
	for _, f := range s.DirectiveLog {
		out = append(out, f.DirectiveID+":"+f.Fate)
	}
	return out
}

func supIDs(ds []runstate.Directive) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}
