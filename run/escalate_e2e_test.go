package run

// End-to-end tests of issue 13: QA that keeps passing work, task limits,
// splitting, the cloud architect, the cloud planner, and their accounting
// against the supervisor budget. They run the real workflow against the
// scripted servers of harness_test.go.

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes"
)

// escNoSupervisors keeps the cloud reachable (the pool exists) but runs no
// supervisor, so every cloud call of a test is an escalation.
func escNoSupervisors(c *config.Config) {
	c.Supervisors.CodeStyle.Enabled = false
	c.Supervisors.Design.Enabled = false
	c.Supervisors.Internaliser.Enabled = false
}

// escRejectingQA fails every criterion without quoting anything: a weak
// reviewer that cannot see the work is there.
func escRejectingQA(role string, c llmtest.Call) (any, bool) {
	if role != runstate.NodeQA {
		return nil, false
	}
	return map[string]any{"criteria": []map[string]any{{"number": 1, "criterion": "the file exists", "met": false, "quote": "", "evidence": "I cannot tell from the diff"}},
		"feedback": "Show the file more clearly."}, true
}

// escStartRemit runs a remit (the ScopeAgent plans) rather than a plan, in
// the full pipeline (a remit this short would take the quick path).
func escStartRemit(e *supEnv) (Result, error) {
	o := e.options("")
	o.Remit = "write the files"
	o.Config.Pipeline.Mode = "full"
	return Start(context.Background(), o)
}

func escReport(t *testing.T, res Result) string {
	t.Helper()
	b, err := os.ReadFile(res.State.ReportPath)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	return string(b)
}

func escOf(s runstate.State, kind string) []runstate.Escalation {
	var out []runstate.Escalation
	for _, e := range s.Escalations {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func TestEscDisputedReviewGoesToTheCloudReviewer(t *testing.T) {
	t.Parallel()
	tm := &supTeam{Local: escRejectingQA, CloudHelp: func(role string, c llmtest.Call) (any, bool) {
		if role != runstate.NodeQA {
			return nil, false
		}
		return supQAReply(c), true // the cloud quotes the diff and passes it
	}}
	e := supNewEnv(t, tm)
	escNoSupervisors(e.Cfg)
	res := e.mustStart(e.supPlan(1))

	if d := res.State.DoneList; len(d) != 1 || d[0].QA != "passed" || d[0].Commit == "" {
		t.Fatalf("done list %+v: the work the gates passed must be committed", d)
	}
	cr := escOf(res.State, runstate.EscCloudReview)
	if len(cr) != 1 || cr[0].Outcome != runstate.EscPassed || cr[0].CostUSD != suptest.CallCost || cr[0].PromptTokens != suptest.PromptTokens {
		t.Fatalf("cloud reviews %+v", cr)
	}
	if got := supCallsOf(e.Cloud, runstate.NodeQA); len(got) != 1 {
		t.Fatalf("%d cloud QA calls, want 1", len(got))
	} else if !strings.Contains(supFirstUser(got[0]), "## "+prompts.SecChangedCode) || !strings.Contains(supFirstUser(got[0]), "## "+prompts.SecDiff) {
		t.Error("the cloud reviewer must see the diff and the changed code")
	}
	if math.Abs(res.State.SupervisorSpendUSD-suptest.CallCost) > 1e-9 {
		t.Errorf("spend %.4f, want the cloud review's %.4f counted against the budget", res.State.SupervisorSpendUSD, suptest.CallCost)
	}
	if u := res.State.Usage[nodes.LabelCloudReview]; u.Calls != 1 || u.CostUSD != suptest.CallCost {
		t.Errorf("usage of %s: %+v", nodes.LabelCloudReview, u)
	}
	rep := escReport(t, res)
	for _, want := range []string{"## Escalations", "| t1 | cloud_review | 2 |", "1 cloud calls, $0.0183"} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestEscDisputedReviewWithoutTheCloudIsCommittedAndFlagged(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, &supTeam{Local: escRejectingQA})
	e.Cfg.Offline = true
	res := e.mustStart(e.supPlan(1))
	if len(e.Cloud.Calls()) != 0 {
		t.Fatal("an offline run must never escalate")
	}
	d := res.State.DoneList
	if len(d) != 1 || d[0].QA != runstate.QADisputed || d[0].Commit == "" {
		t.Fatalf("done list %+v: want the work committed, flagged %q", d, runstate.QADisputed)
	}
	if files := suptest.Git(t, e.Repo, "show", "--name-only", "--format=", d[0].Commit); !strings.Contains(files, "out/m1-1.txt") {
		t.Errorf("the disputed commit lacks the work: %s", files)
	}
	if !strings.Contains(escReport(t, res), "| review disputed |") {
		t.Error("the report must flag the disputed review")
	}
	if got := escOf(res.State, runstate.EscReviewDisputed); len(got) != 1 || !strings.Contains(got[0].Note, "no cloud review") {
		t.Errorf("disputes %+v", got)
	}
}

// Attempts whose gates pass but whose reviews fail, each with another diff
// (so no review is ever disputed): when the retries are spent, the first
// such attempt's change is committed flagged, never thrown away.
func TestAPassingAttemptIsKeptFlaggedWhenTheRetriesAreSpent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	n := 0
	tm := &supTeam{Local: func(role string, c llmtest.Call) (any, bool) {
		if role == runstate.NodeImplementor && len(c.Messages) == 2 {
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			v := supImplementorReply(c).(map[string]any)
			v["content"] = fmt.Sprintf("attempt %d\n", k)
			return v, true
		}
		return escRejectingQA(role, c)
	}}
	e := supNewEnv(t, tm)
	e.Cfg.Offline = true
	e.Cfg.Tasks.SplitAfter = 0
	res := e.mustStart(e.supPlan(1))
	d := res.State.DoneList
	if len(d) != 1 || d[0].QA != runstate.QADisputed || d[0].Commit == "" || res.State.TasksFailed != 0 {
		t.Fatalf("done %+v, failed %d: want the passing attempt committed, flagged", d, res.State.TasksFailed)
	}
	if got := suptest.Git(t, e.Repo, "show", d[0].Commit+":out/m1-1.txt"); got != "attempt 1\n" {
		t.Errorf("the commit holds %q, want the first passing attempt's change", got)
	}
	if got := escOf(res.State, runstate.EscReviewDisputed); len(got) != 1 || !strings.Contains(got[0].Note, "attempt 1 passed the gates") {
		t.Errorf("disputes %+v", got)
	}
}

func TestEscDisputedReviewRetryPolicyKeepsTheOldLoop(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, &supTeam{Local: escRejectingQA})
	e.Cfg.Offline = true
	e.Cfg.QA.Disputed = nodes.DisputeRetry
	e.Cfg.Tasks.SplitAfter = 0
	res, err := e.start(context.Background(), e.supPlan(1))
	if err != nil {
		t.Fatal(err)
	}
	if res.State.TasksFailed != 1 || len(res.State.DoneList) != 0 {
		t.Fatalf("failed %d, done %+v: qa.disputed retry treats the same diff as a loop", res.State.TasksFailed, res.State.DoneList)
	}
}

// escArchitectTeam: the local implementor is blocked until the task's
// instructions carry the architect's step.
func escArchitectTeam() *supTeam {
	return &supTeam{
		Local: func(role string, c llmtest.Call) (any, bool) {
			if role == runstate.NodeImplementor && !strings.Contains(llmtest.Section(supFirstUser(c), prompts.SecTask), "ARCHITECT STEP") {
				return map[string]any{"thought": "stuck", "action": "blocked", "summary": "I do not know where the file goes (compiler said: undefined: Foo)"}, true
			}
			return nil, false
		},
		CloudHelp: func(role string, c llmtest.Call) (any, bool) {
			if role != prompts.Architect {
				return nil, false
			}
			task := llmtest.Section(supFirstUser(c), prompts.SecTask)
			file := supFileOf(task)
			return map[string]any{"diagnosis": "The model did not know the path.",
				"instructions": "ARCHITECT STEP 1: create " + file + " with one line naming the task.", "target_files": []string{file}}, true
		},
	}
}

func TestEscArchitectWritesTheNextAttempt(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, escArchitectTeam())
	escNoSupervisors(e.Cfg)
	res := e.mustStart(e.supPlan(1))

	arch := supCallsOf(e.Cloud, prompts.Architect)
	if len(arch) != 1 {
		t.Fatalf("%d architect calls, want 1", len(arch))
	}
	p := supFirstUser(arch[0])
	for _, want := range []string{"## " + prompts.SecTask, "Write out/m1-1.txt", "## " + prompts.SecFailed, "undefined: Foo"} {
		if !strings.Contains(p, want) {
			t.Errorf("the architect's prompt lacks %q", want)
		}
	}
	if d := res.State.DoneList; len(d) != 1 || d[0].QA != "passed" || d[0].Attempts != 3 {
		t.Fatalf("done list %+v: want the third attempt (the architect's) to pass", d)
	}
	esc := escOf(res.State, runstate.EscArchitect)
	if len(esc) != 1 || esc[0].Outcome != runstate.EscHelped || esc[0].Attempt != 3 || esc[0].CostUSD != suptest.CallCost {
		t.Fatalf("architect escalations %+v", esc)
	}
	if math.Abs(res.State.SupervisorSpendUSD-suptest.CallCost) > 1e-9 {
		t.Errorf("spend %.4f, want %.4f", res.State.SupervisorSpendUSD, suptest.CallCost)
	}
	if !strings.Contains(escReport(t, res), "the architect helped 1 of 1 tasks") {
		t.Error("the report must say whether the architect helped")
	}
}

func TestEscTheBudgetStopsTheArchitect(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, escArchitectTeam())
	escNoSupervisors(e.Cfg)
	e.Cfg.Supervisors.BudgetUSD = 0.01 // spent by the first call
	e.Cfg.Tasks.SplitAfter = 0
	res, err := e.start(context.Background(), e.supPlan(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := supCallsOf(e.Cloud, prompts.Architect); len(got) != 1 {
		t.Fatalf("%d architect calls, want 1: the budget is spent after the first", len(got))
	}
	if res.State.TasksCompleted != 1 || res.State.TasksFailed != 1 {
		t.Errorf("completed %d failed %d: the second task gets no architect and fails", res.State.TasksCompleted, res.State.TasksFailed)
	}
	warned := false
	for _, w := range e.warnings() {
		warned = warned || strings.Contains(w, "budget of $0.01 reached")
	}
	if !warned {
		t.Errorf("no budget warning in %v", e.warnings())
	}
	if esc := escOf(res.State, runstate.EscArchitect); len(esc) != 1 || esc[0].TaskID != "t1" || esc[0].Outcome != runstate.EscHelped {
		t.Errorf("architect escalations %+v", esc)
	}
}

func TestEscOfflineNeverCallsTheArchitect(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, escArchitectTeam())
	e.Cfg.Offline = true
	e.Cfg.Tasks.SplitAfter = 0
	res, err := e.start(context.Background(), e.supPlan(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Cloud.Calls()) != 0 || len(res.State.Escalations) != 0 || res.State.TasksFailed != 1 {
		t.Fatalf("offline: %d cloud calls, escalations %+v, failed %d", len(e.Cloud.Calls()), res.State.Escalations, res.State.TasksFailed)
	}
}

// escScope answers the ScopeAgent with one milestone of the given tasks.
func escScope(titles ...string) map[string]any {
	var tasks []supTaskSpec
	for _, ti := range titles {
		tasks = append(tasks, supSpec(ti, ""))
	}
	return map[string]any{"milestones": []any{map[string]any{"goal": "write the files", "themes": []string{"files"}, "tasks": tasks}}}
}

func TestEscSplitReplacesAFailingTaskAndRollsItsWorkBack(t *testing.T) {
	t.Parallel()
	var sawOffer bool
	tm := &supTeam{Local: func(role string, c llmtest.Call) (any, bool) {
		switch role {
		case runstate.NodeScope:
			return escScope("Write out/big.txt"), true
		case runstate.NodePlanner:
			p := supFirstUser(c)
			if strings.Contains(p, `you may answer "split"`) {
				sawOffer = true
				return map[string]any{"decision": "split", "reasoning": "too big for one go", "carry_forward": []any{}, "directives": []any{},
					"subtasks": []supTaskSpec{supSpec("Write out/part1.txt", ""), supSpec("Write out/part2.txt", "")}}, true
			}
		}
		return nil, false
	}}
	e := supNewEnv(t, tm)
	e.Cfg.Offline = true
	// The gate fails while out/big.txt exists: every attempt at it fails.
	e.Cfg.Gates = []config.Gate{{Name: "check", Command: "test ! -e out/big.txt", Timeout: time.Minute}}
	res, err := escStartRemit(e)
	if err != nil {
		t.Fatal(err)
	}
	if !sawOffer {
		t.Fatal("the planner was never offered a split")
	}
	d := res.State.DoneList
	if len(d) != 3 || d[0].QA != runstate.QASplit || d[0].TaskID != "t1" || d[1].QA != "passed" || d[2].QA != "passed" {
		t.Fatalf("done list %+v: want t1 split, then its two parts passed", d)
	}
	if !strings.Contains(d[0].Summary, "Write out/part1.txt") || !strings.Contains(d[0].Summary, "rolled back") {
		t.Errorf("split entry summary %q", d[0].Summary)
	}
	if res.State.TasksFailed != 0 || res.State.TasksCompleted != 2 {
		t.Errorf("failed %d completed %d", res.State.TasksFailed, res.State.TasksCompleted)
	}
	tree := suptest.Git(t, e.Repo, "ls-tree", "-r", "--name-only", res.Branch)
	if strings.Contains(tree, "out/big.txt") || !strings.Contains(tree, "out/part1.txt") || !strings.Contains(tree, "out/part2.txt") {
		t.Errorf("branch tree:\n%s\nwant the parts and none of the split task's work", tree)
	}
	if !strings.Contains(escReport(t, res), "| t1 | m1 | Write out/big.txt | split |") {
		t.Error("the report's done list must show the split")
	}
	board, _ := os.ReadFile(strings.TrimSuffix(res.State.ReportPath, "report.md") + "board.md")
	if !strings.Contains(string(board), "t1 Write out/big.txt (split") {
		t.Errorf("board.md lacks the split:\n%s", board)
	}
}

func TestEscAPlanBreakingTheLimitsGoesBackOnceWithTheReasons(t *testing.T) {
	t.Parallel()
	var sentBack, scopeSentBack []string
	tm := &supTeam{Local: func(role string, c llmtest.Call) (any, bool) {
		switch role {
		case runstate.NodeScope:
			if last := c.Messages[len(c.Messages)-1].Content; strings.Contains(last, "breaks the task limits") {
				scopeSentBack = append(scopeSentBack, last)
				return escScope("Write out/a.txt"), true
			}
			long := escScope("Write out/a.txt")
			long["milestones"].([]any)[0].(map[string]any)["tasks"].([]supTaskSpec)[0].Instructions = strings.Repeat("Write it well. ", 50)
			return long, true
		case runstate.NodePlanner:
			last := c.Messages[len(c.Messages)-1].Content
			if strings.Contains(last, "breaks the task limits") {
				sentBack = append(sentBack, last)
				return nil, false // the default answer is within the limits
			}
			if strings.Contains(llmtest.Section(supFirstUser(c), prompts.SecMilestone), "out/a.txt") && len(sentBack) == 0 {
				big := supSpec("Write out/a.txt", "")
				big.TargetFiles = []string{"out/a.txt", "b.go", "c.go"}
				return map[string]any{"decision": "implement", "reasoning": "all at once", "task": big, "carry_forward": []any{}, "directives": []any{}}, true
			}
		}
		return nil, false
	}}
	e := supNewEnv(t, tm)
	e.Cfg.Offline = true
	res, err := escStartRemit(e)
	if err != nil || res.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("run: %v %q %q", err, res.State.Outcome, res.State.StopReason)
	}
	if len(sentBack) != 1 || !strings.Contains(sentBack[0], "names 3 target files: at most 2") {
		t.Fatalf("sent back %d times: %q", len(sentBack), sentBack)
	}
	if len(scopeSentBack) != 1 || !strings.Contains(scopeSentBack[0], "750 characters of instructions: at most 600") {
		t.Fatalf("scope sent back %d times: %q", len(scopeSentBack), scopeSentBack)
	}
	if ev := e.custom("plan_sent_back"); len(ev) != 2 {
		t.Errorf("%d plan_sent_back events, want 2 (scope, planner)", len(ev))
	}
	if d := res.State.DoneList; len(d) != 1 || len(d[0].Files) != 1 {
		t.Errorf("done %+v: the task as answered the second time", d)
	}
}

func TestEscCloudPlannerPlansUntilTheBudgetIsSpent(t *testing.T) {
	t.Parallel()
	tm := &supTeam{}
	tm.CloudHelp = func(role string, c llmtest.Call) (any, bool) {
		switch role {
		case runstate.NodeScope:
			return escScope("Write out/c1.txt", "Write out/c2.txt", "Write out/c3.txt"), true
		case runstate.NodePlanner:
			return tm.plannerReply(c), true
		}
		return nil, false
	}
	e := supNewEnv(t, tm)
	escNoSupervisors(e.Cfg)
	e.Cfg.Supervisors.BudgetUSD = 0.05 // three cloud calls at $0.0183
	pl := e.Cfg.Roles[config.RolePlanner]
	pl.Provider, pl.Model = config.ProviderOpenRouter, supCloudModel
	e.Cfg.Roles[config.RolePlanner] = pl
	res, err := escStartRemit(e)
	if err != nil || res.State.Outcome != runstate.OutcomeDone {
		t.Fatalf("run: %v %q %q\n%s", err, res.State.Outcome, res.State.StopReason, e.eventLog())
	}
	cloudPlans := len(supCallsOf(e.Cloud, runstate.NodeScope)) + len(supCallsOf(e.Cloud, runstate.NodePlanner))
	if cloudPlans != 3 {
		t.Errorf("%d cloud planning calls, want 3 (the budget holds three)", cloudPlans)
	}
	if len(supCallsOf(e.Local, runstate.NodePlanner)) == 0 {
		t.Error("once the budget is spent the local primary must plan")
	}
	if len(supCallsOf(e.Local, runstate.NodeScope)) != 0 {
		t.Error("the scope was the cloud planner's")
	}
	if got := res.State.SupervisorSpendUSD; math.Abs(got-3*suptest.CallCost) > 1e-9 {
		t.Errorf("spend %.4f, want %.4f", got, 3*suptest.CallCost)
	}
	if res.State.TasksCompleted != 3 {
		t.Errorf("completed %d, want 3", res.State.TasksCompleted)
	}
	if !strings.Contains(escReport(t, res), "the cloud planner cost $0.0549") {
		t.Error("the report must show what the cloud planner cost")
	}

	// Offline, the cloud planner is never asked.
	off := supNewEnv(t, tm)
	off.Cfg.Offline = true
	off.Cfg.Roles[config.RolePlanner] = pl
	if _, err := off.start(context.Background(), off.supPlan(1)); err != nil {
		t.Fatal(err)
	}
	if len(off.Cloud.Calls()) != 0 {
		t.Error("an offline run must not plan on the cloud")
	}
}

func TestEscTheArchitectNeverSeesSecretsOrDeniedFiles(t *testing.T) {
	t.Parallel()
	e := supNewEnv(t, escArchitectTeam())
	e.Team.Local = nil // the implementor writes the files; the gate fails them
	escNoSupervisors(e.Cfg)
	e.Cfg.Tasks.SplitAfter = 0
	e.Cfg.Gates = []config.Gate{{Name: "check", Command: "test ! -e app.go && test ! -e .env", Timeout: time.Minute}}
	if _, err := e.start(context.Background(), e.supPlanTitles([]string{"Write app.go", "Write .env"})); err != nil {
		t.Fatal(err)
	}
	arch := supCallsOf(e.Cloud, prompts.Architect)
	if len(arch) != 2 {
		t.Fatalf("%d architect calls, want one per task", len(arch))
	}
	for _, c := range arch {
		p := supFirstUser(c)
		if strings.Contains(p, suptest.SecretToken) || strings.Contains(p, suptest.SecretKey) {
			t.Errorf("a secret reached the architect:\n%s", p)
		}
	}
	if p := supFirstUser(arch[0]); !strings.Contains(p, "deployToken") {
		t.Errorf("the architect must see app.go's diff (redacted):\n%s", p)
	}
	if p := supFirstUser(arch[1]); !strings.Contains(p, "a change to .env is not shown") {
		t.Errorf("a denied file's change must be left out, and said so:\n%s", p)
	}
}
