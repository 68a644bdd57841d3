package run_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/run"
)

// loopRun is one workflow run against the scripted team, with fault steps
// tried before the demo script, and its events kept.
type loopRun struct {
	srv    *llmtest.Server
	repo   string
	result run.Result
	err    error
	mu     sync.Mutex
	events []graph.Event
}

func (r *loopRun) Handle(ev graph.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// custom returns the data of every custom event called name.
func (r *loopRun) custom(name string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, ev := range r.events {
		if ev.Kind == graph.EventCustom && ev.Name == name {
			var d map[string]any
			_ = json.Unmarshal(ev.Data, &d)
			out = append(out, d)
		}
	}
	return out
}

// calls returns the chat requests a role received, in order.
func (r *loopRun) calls(role string) []llmtest.Call {
	var out []llmtest.Call
	for _, c := range r.srv.ChatCalls() {
		if len(c.Messages) > 0 && c.Role() == role {
			out = append(out, c)
		}
	}
	return out
}

type runSetup struct {
	first   []llmtest.Step
	prepare func(t *testing.T, repo string)
	opts    func(o *run.Options)
}

func runLoop(t *testing.T, setup runSetup) *loopRun {
	t.Helper()
	r := &loopRun{}
	r.srv = demo.NewServer(&demo.Script{}, setup.first...)
	t.Cleanup(r.srv.Close)
	r.repo = filepath.Join(t.TempDir(), "repo")
	if err := demo.PrepareRepo(context.Background(), r.repo); err != nil {
		t.Fatal(err)
	}
	if setup.prepare != nil {
		setup.prepare(t, r.repo)
	}
	cfg := demo.Config(r.srv.URL())
	cfg.Supervisors.Enabled = false
	o := run.Options{RepoDir: r.repo, Remit: demo.Remit, Config: cfg, Sinks: []graph.Sink{r}}
	if setup.opts != nil {
		setup.opts(&o)
	}
	r.result, r.err = run.Start(context.Background(), o)
	return r
}

// implementorFor matches implementor calls for a task title; attempt 1 has no
// feedback section.
func implementorFor(title string, retry bool) func(llmtest.Call) bool {
	return func(c llmtest.Call) bool {
		if c.Role() != prompts.Implementor {
			return false
		}
		p := c.Messages[1].Content
		hasFeedback := llmtest.Section(p, prompts.SecFeedback) != ""
		return strings.Contains(llmtest.Section(p, prompts.SecTask), title) && hasFeedback == retry
	}
}

func actionJSON(t *testing.T, a map[string]any) string {
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func headers(prompt string) []string {
	var out []string
	for _, line := range strings.Split(prompt, "\n") {
		if strings.HasPrefix(line, "## ") {
			out = append(out, strings.TrimPrefix(line, "## "))
		}
	}
	return out
}

func TestPlannerPromptSectionsComeInTheDesignOrder(t *testing.T) {
	r := runLoop(t, runSetup{})
	if r.err != nil || r.result.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("run: %v, outcome %q (%s)", r.err, r.result.State.Outcome, r.result.State.StopReason)
	}
	planner := r.calls("task_planner")
	if len(planner) == 0 {
		t.Fatal("no planner call")
	}
	// The shared prefix (project context, knowledge), then the role.
	want := []string{prompts.SecProjectContext, prompts.SecProjectKnowledge, llm.RoleSection, prompts.SecMilestone, prompts.SecDirectives, prompts.SecCompleted, prompts.SecInstructions}
	for _, c := range planner {
		got := headers(c.Messages[1].Content)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("planner sections %v, want %v", got, want)
		}
		if !strings.Contains(llmtest.Section(c.Messages[1].Content, prompts.SecInstructions), "Each directive MUST be addressed") {
			t.Error("the instructions do not say each directive must be addressed")
		}
	}
	if ms := llmtest.Section(planner[0].Messages[1].Content, prompts.SecMilestone); !strings.Contains(ms, "Related code (retrieval):\n- textstats") {
		t.Errorf("the planner gets no retrieval hits for the milestone:\n%s", ms)
	}
	// The stable sections come first so a local prompt cache is reused: the
	// project context is byte-identical across planning rounds.
	first := llmtest.Section(planner[0].Messages[1].Content, prompts.SecProjectContext)
	last := llmtest.Section(planner[len(planner)-1].Messages[1].Content, prompts.SecProjectContext)
	if first != last {
		t.Error("the project context changed between planning rounds")
	}
}

func commitFile(t *testing.T, repo, rel, content string) {
	t.Helper()
	p := filepath.Join(repo, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", rel}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "add " + rel}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

func TestASeededConventionReachesThePlannerAndADeprecatedOneDoesNot(t *testing.T) {
	r := runLoop(t, runSetup{prepare: func(t *testing.T, repo string) {
		commitFile(t, repo, "docs/knowledge/conventions/errors.md", `# Error wrapping

_Last updated by: user, seed_
_Status: established_

## Rules

1. Wrap every returned error with the operation that failed: fmt.Errorf("parse %s: %w", name, err).

## Rationale

Callers see where it failed.
`)
		commitFile(t, repo, "docs/knowledge/conventions/panics.md", `# Panics for errors

_Last updated by: user, seed_
_Status: deprecated_

## Rules

1. Panic on any unexpected input (ZEBRA-RULE).
`)
	}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	planner := r.calls("task_planner")
	if len(planner) == 0 {
		t.Fatal("no planner call")
	}
	k := llmtest.Section(planner[0].Messages[1].Content, prompts.SecProjectKnowledge)
	if !strings.Contains(k, "Wrap every returned error with the operation that failed") {
		t.Errorf("the established convention is not in the planner's PROJECT KNOWLEDGE:\n%s", k)
	}
	for _, c := range r.srv.ChatCalls() {
		if strings.Contains(c.Prompt, "ZEBRA-RULE") {
			t.Fatalf("a deprecated rule reached a prompt (%s)", c.Role())
		}
	}
	impl := r.calls("implementor")
	if len(impl) == 0 || !strings.Contains(impl[0].Prompt, "Wrap every returned error") {
		t.Error("the implementor does not see the convention")
	}
}

func TestAnImplementorRepeatingItselfIsStoppedAndRetried(t *testing.T) {
	r := runLoop(t, runSetup{first: []llmtest.Step{{
		Name: "stuck", Times: 5, Match: implementorFor("Fix MeanWordLength", false),
		Reply: llmtest.Reply{Content: actionJSON(t, map[string]any{"thought": "look again", "action": "read_file", "path": "textstats.go"})},
	}}})
	if r.err != nil || r.result.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("run: %v outcome %q %s", r.err, r.result.State.Outcome, r.result.State.StopReason)
	}
	var loopSeen bool
	for _, d := range r.custom("implementation") {
		if d["task"] == "t1" && d["attempt"] == float64(1) {
			loopSeen = d["status"] == string(runstate.ImplLoop)
		}
	}
	if !loopSeen {
		t.Errorf("attempt 1 of t1 should end as a loop: %v", r.custom("implementation"))
	}
	if got := r.result.State.DoneList[0]; got.TaskID != "t1" || got.Attempts != 2 {
		t.Errorf("t1 should pass on attempt 2: %+v", got)
	}
	retry := r.calls("implementor")
	var fb string
	for _, c := range retry {
		if s := llmtest.Section(c.Messages[1].Content, prompts.SecFeedback); s != "" {
			fb = s
			break
		}
	}
	if !strings.Contains(fb, "repeated the same read_file action") {
		t.Errorf("the retry's feedback does not say why: %q", fb)
	}
}

func TestAnEditOutsideTheRepositoryIsRefusedAndTheModelIsTold(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "escape.txt")
	r := runLoop(t, runSetup{first: []llmtest.Step{{
		Name: "escape", Times: 1, Match: implementorFor("Fix MeanWordLength", false),
		Reply: llmtest.Reply{Content: actionJSON(t, map[string]any{"thought": "x", "action": "write_file", "path": "../escape.txt", "content": "pwned"})},
	}, {
		Name: "escape-abs", Times: 1, Match: implementorFor("Fix MeanWordLength", false),
		Reply: llmtest.Reply{Content: actionJSON(t, map[string]any{"thought": "x", "action": "write_file", "path": outside, "content": "pwned"})},
	}}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("a file outside the repository was written")
	}
	if _, err := os.Stat(filepath.Join(r.repo, ".lemmings", "worktrees", "escape.txt")); err == nil {
		t.Fatal("../ escaped the worktree")
	}
	impl := r.calls("implementor")
	if len(impl) < 3 {
		t.Fatalf("too few implementor calls: %d", len(impl))
	}
	told := impl[1].LastUser() + impl[2].LastUser()
	if !strings.Contains(told, "RESULT of write_file:\nerror:") {
		t.Errorf("the model was not told its write was refused: %q", told)
	}
	if r.result.State.Outcome != runstate.OutcomeDone {
		t.Errorf("the run should recover and finish: %s", r.result.State.StopReason)
	}
}

func TestSearchReplaceBlocksInProseAreApplied(t *testing.T) {
	prose := "I will fix the integer division.\n\ntextstats.go\n<<<<<<< SEARCH\n\treturn float64(total / len(words))\n=======\n\treturn float64(total) / float64(len(words))\n>>>>>>> REPLACE\n"
	r := runLoop(t, runSetup{first: []llmtest.Step{{
		Name: "prose", Times: 2, Match: implementorFor("Fix MeanWordLength", false),
		Reply: llmtest.Reply{Content: prose},
	}}})
	if r.err != nil || r.result.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("run: %v %q", r.err, r.result.State.StopReason)
	}
	if got := r.result.State.DoneList[0]; got.TaskID != "t1" || got.Attempts != 1 {
		t.Errorf("the prose edit should have fixed t1 on attempt 1: %+v", got)
	}
}

func TestAScopeAgentThatNeverAnswersInJSONEndsTheRunCleanly(t *testing.T) {
	r := runLoop(t, runSetup{first: []llmtest.Step{{
		Name: "garbage", Times: -1, Match: func(c llmtest.Call) bool { return c.Role() == prompts.ScopeAgent },
		Reply: llmtest.Reply{Content: "Sure! Here are the milestones: first fix it, then add it."},
	}}})
	if r.err != nil {
		t.Fatalf("the run should end normally with a failed outcome, got error %v", r.err)
	}
	s := r.result.State
	if s.Outcome != runstate.OutcomeFailed || !strings.Contains(s.StopReason, "ScopeAgent could not produce a plan") {
		t.Errorf("outcome %q, stop %q", s.Outcome, s.StopReason)
	}
	if n := len(r.calls("scope_agent")); n != 2 {
		t.Errorf("scope calls = %d, want 2 (the answer and one re-ask quoting the error)", n)
	}
	if reask := r.calls("scope_agent")[1].LastUser(); !strings.Contains(reask, "JSON") {
		t.Errorf("the re-ask does not quote the problem: %q", reask)
	}
	if _, err := os.Stat(filepath.Join(r.result.RunDir, "report.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
}

func TestTheSameDiffTwiceIsCountedAsALoop(t *testing.T) {
	wrong := actionJSON(t, map[string]any{"thought": "x", "action": "edit", "edits": []map[string]string{{
		"path": "textstats.go", "search": "func MeanWordLength(", "replace": "// MeanWordLength averages.\nfunc MeanWordLength(",
	}}})
	finish := actionJSON(t, map[string]any{"thought": "done", "action": "finish", "summary": "done"})
	steps := []llmtest.Step{
		{Name: "a1-edit", Times: 1, Match: implementorFor("Fix MeanWordLength", false), Reply: llmtest.Reply{Content: wrong}},
		{Name: "a1-finish", Times: 1, Match: implementorFor("Fix MeanWordLength", false), Reply: llmtest.Reply{Content: finish}},
		{Name: "a2-finish", Times: 1, Match: func(c llmtest.Call) bool {
			return implementorFor("Fix MeanWordLength", true)(c) && !strings.Contains(c.Messages[1].Content, "same change")
		}, Reply: llmtest.Reply{Content: finish}},
	}
	// No fix rounds: the failing test would send attempt 1 back to the
	// model, and this test is about what QA sees across attempts.
	r := runLoop(t, runSetup{first: steps, opts: func(o *run.Options) { o.Config.Limits.FixRounds = 0 }})
	if r.err != nil {
		t.Fatal(r.err)
	}
	var statuses []string
	for _, d := range r.custom("implementation") {
		if d["task"] == "t1" {
			statuses = append(statuses, d["status"].(string))
		}
	}
	if len(statuses) < 2 || statuses[1] != string(runstate.ImplLoop) {
		t.Errorf("t1 attempt statuses %v: attempt 2 repeats attempt 1's diff and must count as a loop", statuses)
	}
	if r.result.State.Outcome != runstate.OutcomeDone {
		t.Errorf("the run should still finish: %s", r.result.State.StopReason)
	}
}

func TestAnOperatorPlanSkipsTheScopeAgent(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte(`milestones:
  - goal: The test suite passes.
    themes: [tests]
    tasks:
      - title: Fix MeanWordLength integer division
        instructions: Convert to float64 before dividing.
        acceptance_criteria: ["go test ./... passes", "MeanWordLength is exact"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runLoop(t, runSetup{opts: func(o *run.Options) { o.PlanFile, o.Remit = plan, "" }})
	if r.err != nil || r.result.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("run: %v %q", r.err, r.result.State.StopReason)
	}
	if n := len(r.calls("scope_agent")); n != 0 {
		t.Errorf("the ScopeAgent was asked %d times despite the plan", n)
	}
	qa := r.calls("qa")
	if len(qa) == 0 || !strings.Contains(llmtest.Section(qa[0].Messages[1].Content, prompts.SecCriteria), "MeanWordLength is exact") {
		t.Error("QA did not judge the operator's acceptance criteria")
	}
}

func TestBadPlansAreRefusedWithTheReason(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"milestones: []\n":                                         "no milestones",
		"milestones:\n  - goal: g\n    tasks: []\n":                "has no tasks",
		"milestones:\n  - goal: g\n    tasks:\n      - title: t\n": "acceptance_criteria",
		"milestones:\n  - goal: g\n    taks: []\n":                 "taks",
	}
	for body, want := range cases {
		p := filepath.Join(dir, "plan.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := nodes.LoadPlan(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("plan %q: error %v, want it to mention %q", body, err, want)
		}
	}
}
