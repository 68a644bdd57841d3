package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/demo"
)

var allTools = []string{"approve", "events", "fork", "halt", "history", "knowledge_list", "knowledge_show", "reject", "report", "resume", "run", "runs", "search", "status", "tell", "undo", "wait"}

func TestToolsAreListedWithSchemasAndDescriptions(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), Exe: "lemmings"})
	if err != nil {
		t.Fatal(err)
	}
	cs := client(t, s, nil)
	var names []string
	byName := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		byName[tool.Name] = tool
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too thin for a calling agent: %q", tool.Name, tool.Description)
		}
		if tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("%s: input schema %v, output schema %v", tool.Name, tool.InputSchema != nil, tool.OutputSchema != nil)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, allTools) {
		t.Fatalf("tools %v, want %v", names, allTools)
	}
	schema := func(name string) map[string]any {
		m, _ := byName[name].InputSchema.(map[string]any)
		return m
	}
	props := schema("run")["properties"].(map[string]any)
	if enum := props["approve"].(map[string]any)["enum"]; len(enum.([]any)) != 2 {
		t.Errorf("run.approve enum = %v, want milestones and tasks", enum)
	}
	if req := schema("reject")["required"]; !slices.Contains(req.([]any), any("reason")) {
		t.Errorf("reject requires %v, want reason", req)
	}
	if !byName["status"].Annotations.ReadOnlyHint || byName["run"].Annotations.ReadOnlyHint {
		t.Error("status should be read-only, run not")
	}
	var templates []string
	for rt, err := range cs.ResourceTemplates(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	slices.Sort(templates)
	if !slices.Equal(templates, []string{"lemmings://runs/{run_id}/board", "lemmings://runs/{run_id}/report"}) {
		t.Errorf("resource templates %v", templates)
	}
}

// An agent hands a remit to lemmings, follows it with progress
// notifications, answers its pause (a rejection with a reason, then an
// approval), and reads the report, board, events and knowledge — every step
// through the Go SDK's client, every run a real lemmings process.
func TestAnAgentHandsARemitAndSteersTheRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &demo.Script{})
	s := f.server(t)
	var mu sync.Mutex
	var progress []*mcp.ProgressNotificationParams
	cs := client(t, s, func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		progress = append(progress, p)
		mu.Unlock()
	})

	var st RunStatus
	mustCall(t, cs, "run", map[string]any{"remit": demo.Remit, "approve": "milestones"}, &st)
	id := st.RunID
	if id == "" || !slices.Contains([]string{StatusStarting, "running", "paused"}, st.Status) {
		t.Fatalf("run answered %+v", st)
	}
	if st.Log != LogPath(f.repo, id) {
		t.Errorf("log %q, want %q", st.Log, LogPath(f.repo, id))
	}

	var w WaitOutput
	mustCall(t, cs, "wait", map[string]any{"run_id": id, "timeout_seconds": 120}, &w)
	if !w.Stopped || w.Run.Status != "paused" || w.Run.PausedFor != "milestones" || w.Run.Milestones != 2 {
		t.Fatalf("wait ended with %+v", w)
	}
	if !strings.Contains(w.Run.Hint, "approve") {
		t.Errorf("hint for a paused run: %q", w.Run.Hint)
	}

	// A bare resume walks through no approval; a rejection needs a reason.
	if err := call(t, cs, "resume", map[string]any{"run_id": id}, nil); err == nil || !strings.Contains(err.Error(), "still paused, waiting for a decision") {
		t.Errorf("resume of a paused run: %v", err)
	}
	if err := call(t, cs, "reject", map[string]any{"run_id": id, "reason": ""}, nil); err == nil {
		t.Error("reject without a reason was accepted")
	}
	mustCall(t, cs, "reject", map[string]any{"run_id": id, "reason": "split the work by file"}, &st)
	var replanned WaitOutput
	mustCall(t, cs, "wait", map[string]any{"run_id": id, "timeout_seconds": 120}, &replanned)
	if !replanned.Stopped || replanned.Run.Status != "paused" || replanned.Run.PausedFor != "milestones" {
		t.Fatalf("after the rejection the run should plan again and pause: %+v", replanned)
	}
	var planned EventsOutput
	mustCall(t, cs, "events", map[string]any{"run_id": id, "limit": 200}, &planned)
	scopes := 0
	for _, e := range planned.Events {
		if e.Kind == "node_start" && e.Node == "scope_agent" {
			scopes++
		}
	}
	if scopes != 2 {
		t.Errorf("the ScopeAgent ran %d times, want twice (planning, then again after the rejection): %+v", scopes, planned.Events)
	}
	mustCall(t, cs, "approve", map[string]any{"run_id": id}, &st)
	var done WaitOutput
	mustCall(t, cs, "wait", map[string]any{"run_id": id, "timeout_seconds": 180}, &done, mcp.Meta{"progressToken": "w1"})
	if !done.Stopped || done.Run.Status != "done" || done.Run.TasksCompleted < 3 || done.Run.Report == "" || done.Run.PausedFor != "" {
		t.Fatalf("approved run ended with %+v", done)
	}
	mu.Lock()
	got := slices.Clone(progress)
	mu.Unlock()
	var msgs []string
	for i, p := range got {
		if p.ProgressToken != "w1" || (i > 0 && p.Progress <= got[i-1].Progress) {
			t.Errorf("notification %d: token %v, progress %v after %v", i, p.ProgressToken, p.Progress, got[max(0, i-1)].Progress)
		}
		msgs = append(msgs, p.Message)
	}
	// One notification per line the wait reports, as the run moved.
	joined := strings.Join(msgs, "\n")
	if !slices.Equal(msgs, done.Progress) || !strings.Contains(joined, "QA passed t1") || !strings.Contains(joined, "commit ") ||
		!strings.Contains(joined, "report written: ") {
		t.Errorf("progress notifications:\n%s\nthe wait's lines:\n%s", joined, strings.Join(done.Progress, "\n"))
	}

	var rep ReportOutput
	mustCall(t, cs, "report", map[string]any{"run_id": id}, &rep)
	if !strings.Contains(rep.Markdown, "**Status:** done") {
		t.Errorf("report:\n%s", rep.Markdown)
	}
	onDisk, _ := os.ReadFile(rep.Path)
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lemmings://runs/" + id + "/report"})
	if err != nil || res.Contents[0].Text != string(onDisk) {
		t.Errorf("report resource differs from %s (%v)", rep.Path, err)
	}
	res, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lemmings://runs/" + id + "/board"})
	if err != nil || !strings.Contains(res.Contents[0].Text, "- [x] t3 Add a -top flag") {
		t.Errorf("board resource: %v %+v", err, res)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lemmings://runs/../../etc/report"}); err == nil {
		t.Error("a run id with a path in it was read")
	}

	var evs EventsOutput
	mustCall(t, cs, "events", map[string]any{"run_id": id, "limit": 3}, &evs)
	if len(evs.Events) != 3 || evs.Next == 0 || !strings.HasPrefix(evs.Events[2].Text, "run ended: done") {
		t.Errorf("events: %+v", evs)
	}
	mustCall(t, cs, "events", map[string]any{"run_id": id, "after": evs.Next}, &evs)
	if len(evs.Events) != 0 {
		t.Errorf("events after the end: %+v", evs.Events)
	}

	var runs RunsOutput
	mustCall(t, cs, "runs", nil, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].RunID != id || runs.Runs[0].Status != "done" {
		t.Errorf("runs: %+v", runs)
	}
	if err := call(t, cs, "halt", nil, nil); err == nil || !strings.Contains(err.Error(), "nothing to halt") {
		t.Errorf("halt with nothing running: %v", err)
	}

	var kl KnowledgeListOutput
	mustCall(t, cs, "knowledge_list", map[string]any{"run_id": id}, &kl)
	if len(kl.Docs) == 0 {
		t.Fatalf("the run's knowledge has none of its supervisors' documents: %+v", kl)
	}
	var ks KnowledgeShowOutput
	mustCall(t, cs, "knowledge_show", map[string]any{"run_id": id, "doc": kl.Docs[0].Path}, &ks)
	if !strings.Contains(ks.Markdown, "## Rules") {
		t.Errorf("knowledge_show:\n%s", ks.Markdown)
	}
	var found SearchOutput
	mustCall(t, cs, "search", map[string]any{"query": "MeanWordLength", "k": 3}, &found)
	if len(found.Hits) == 0 || found.Method != "hybrid" {
		t.Errorf("search: %+v", found)
	}

	// The work is on the run's branch; the checkout is untouched.
	if n := git(t, f.repo, "rev-list", "--count", "--grep=Lemmings-Task", "main..lemmings/"+id); n != strconv.Itoa(done.Run.TasksCompleted) {
		t.Errorf("%s task commits on the branch, want one per task done (%d)", n, done.Run.TasksCompleted)
	}
	if st := git(t, f.repo, "status", "--porcelain"); st != "" {
		t.Errorf("checkout changed:\n%s", st)
	}
	log, _ := os.ReadFile(LogPath(f.repo, id))
	if strings.Count(string(log), "== ") != 3 || !strings.Contains(string(log), "resume "+id+" --reject 'split the work by file'") {
		t.Errorf("the log does not show the run, the rejection and the approval:\n%s", log)
	}
}

// The run goes on after the MCP server that started it is gone: the server
// is the built binary over stdio, driven by the Go SDK's command transport.
func TestTheRunOutlivesTheStdioSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &demo.Script{ImplementorLatency: 300 * time.Millisecond})
	cmd := command(lemmingsBin(t), f.env, "mcp", "-C", f.repo)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var st RunStatus
	mustCall(t, cs, "run", map[string]any{"remit": demo.Remit}, &st)
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Fatalf("lemmings mcp still running after its client closed: %v", cmd.ProcessState)
	}
	if runDone(f.repo, st.RunID) {
		t.Fatal("the run was already done when the session closed: nothing shows it outlives the session")
	}
	waitUntil(t, "the run to finish after its MCP server exited", 3*time.Minute, func() bool { return runDone(f.repo, st.RunID) })
	processEnded(t, f.repo, st.RunID)
	report, err := os.ReadFile(filepath.Join(f.repo, ".lemmings", "runs", st.RunID, "report.md"))
	if err != nil || !strings.Contains(string(report), "**Status:** done") {
		t.Errorf("report: %v\n%s", err, report)
	}
}

// A run started over MCP is a `lemmings run`: the same run folder, branch,
// commits, report and recorded choices as the CLI leaves for the same remit;
// the only addition is the process's output under .lemmings/mcp/.
func TestARunStartedOverMCPLeavesWhatTheCLILeaves(t *testing.T) {
	t.Parallel()
	viaMCP, viaCLI := newFixture(t, &demo.Script{}), newFixture(t, &demo.Script{})
	cs := client(t, viaMCP.server(t), nil)
	var st RunStatus
	began := time.Now()
	mustCall(t, cs, "run", map[string]any{"remit": demo.Remit, "no_supervisors": true}, &st)
	t.Logf("run answered in %s with status %s", time.Since(began).Round(time.Millisecond), st.Status)
	var w WaitOutput
	mustCall(t, cs, "wait", map[string]any{"run_id": st.RunID, "timeout_seconds": 180}, &w)
	if w.Run.Status != "done" {
		t.Fatalf("MCP run ended %+v", w.Run)
	}
	processEnded(t, viaMCP.repo, st.RunID)

	cmd := command(lemmingsBin(t), viaCLI.env, "--no-supervisors", "run", demo.Remit)
	cmd.Dir = viaCLI.repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lemmings run: %v\n%s", err, out)
	}
	var cliID string
	ents, _ := os.ReadDir(filepath.Join(viaCLI.repo, ".lemmings", "runs"))
	for _, e := range ents {
		cliID = e.Name()
	}

	names := func(dir string) string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return strings.Join(n, " ")
	}
	if a, b := names(filepath.Join(viaMCP.repo, ".lemmings")), names(filepath.Join(viaCLI.repo, ".lemmings")); a != strings.Replace(b, "index", "index mcp", 1) {
		t.Errorf(".lemmings/: over MCP %q, CLI %q (want the same plus mcp)", a, b)
	}
	if a, b := names(filepath.Join(viaMCP.repo, ".lemmings", "runs", st.RunID)), names(filepath.Join(viaCLI.repo, ".lemmings", "runs", cliID)); a != b {
		t.Errorf("run folder: over MCP %q, CLI %q", a, b)
	}
	for _, args := range [][]string{{"log", "--format=%s", "main..lemmings/%s"}, {"ls-tree", "-r", "--name-only", "lemmings/%s"}} {
		get := func(f *fixture, id string) string {
			a := slices.Clone(args)
			a[len(a)-1] = strings.Replace(a[len(a)-1], "%s", id, 1)
			return git(t, f.repo, a...)
		}
		if a, b := get(viaMCP, st.RunID), get(viaCLI, cliID); a != b {
			t.Errorf("git %v: over MCP\n%s\nCLI\n%s", args, a, b)
		}
	}
	read := func(f *fixture, id, name string) string {
		data, err := os.ReadFile(filepath.Join(f.repo, ".lemmings", "runs", id, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if a, b := read(viaMCP, st.RunID, "choices.json"), read(viaCLI, cliID, "choices.json"); a != b {
		t.Errorf("choices.json: over MCP %s, CLI %s", a, b)
	}
	taskRows := func(report string) string {
		var rows []string
		for _, l := range strings.Split(report, "\n") {
			if taskRow.MatchString(l) {
				l = l[:strings.LastIndex(strings.TrimSuffix(l, " |"), "|")] // the commit's hash differs
			}
			if taskRow.MatchString(l) || strings.HasPrefix(l, "- **Status:**") {
				rows = append(rows, l)
			}
		}
		return strings.Join(rows, "\n")
	}
	if a, b := taskRows(read(viaMCP, st.RunID, "report.md")), taskRows(read(viaCLI, cliID, "report.md")); a != b || a == "" {
		t.Errorf("report tasks: over MCP\n%s\nCLI\n%s", a, b)
	}
}

var taskRow = regexp.MustCompile(`^\| t\d+ \|`)
