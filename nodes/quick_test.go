package nodes

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/gitfixture"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// labelledRemits are remits with the shape a person gives them: one task
// (quick) or work that needs planning. docs/costs.md quotes how the
// heuristic does on them.
var labelledRemits = []struct {
	remit string
	quick bool
}{
	{`Change the greeting returned by Hello in hello/hello.go from "Hello, World" to "Hello, Lemmings".`, true},
	{`Create NOTES.md with the line "lemmings was here".`, true},
	{"Fix Add in calc.go: it subtracts instead of adding, so TestAdd fails.", true},
	{"Add a one-line Double function to calc.go that returns twice its argument; calc_test.go calls it.", true},
	{"Fix the off-by-one error in the pagination helper.", true},
	{"Rename the flag --verbose to --debug in cmd/main.go.", true},
	{"Add a doc comment to MeanWordLength in textstats.go.", true},
	{"Make the failing test TestParseDuration pass.", true},
	{"Return an error instead of panicking when the config file is missing in config/load.go.", true},
	{"Make the tests in leap_test.go pass by editing leap.go, without changing the tests.", true},
	{"Make the test suite pass, then add TopWords (the most frequent words) to the package and a -top flag to the textstats command.", false},
	{"Add three functions to the hello package, each in its own file: Goodbye in hello/goodbye.go, Shout in hello/shout.go and Whisper in hello/whisper.go.", false},
	{"Add a --json flag to the list command and document it in README.md.", false},
	{"Refactor the storage layer to use SQLite instead of JSON files.", false},
	{"Add pagination to every list endpoint.", false},
	{"Implement a REST API for todos with create, list, update and delete endpoints.", false},
	{"Write a CLI that fetches weather data and caches it in SQLite; add tests and a README.", false},
	{"Migrate the project from Python 2 to Python 3.", false},
	{"- add the --since flag\n- update the docs\n- write tests for both", false},
	{"Port the parser in parser.go, lexer.go and ast.go to the new token API.", false},
	// Harder ones, labelled by what the work needs.
	{"Add a /health endpoint that returns 200.", true},
	{"Fix the bug where the parser crashes on empty input, and add a test for it.", true},
	{"Support YAML config files in addition to JSON.", false},
	{"Solve the exercise by editing collatz.go. The Collatz Conjecture or 3x+1 problem can be summarized as follows: take any positive integer n. If n is even, divide n by 2 to get n / 2. If n is odd, multiply n by 3 and add 1 to get 3n + 1. Repeat the process indefinitely. The conjecture states that no matter which number you start with, you will always reach 1 eventually. Given a number n, return the number of steps required to reach 1.", true},
}

// The heuristic that sends a remit down the quick path: free (no model
// call), and wrong on few of the labelled remits. A remit it wrongly calls
// quick escalates into the full pipeline after its quick attempts.
func TestTheRemitHeuristicSizesThePipeline(t *testing.T) {
	t.Parallel()
	right, falseQuick, falseFull := 0, 0, 0
	for _, r := range labelledRemits {
		got, why := readRemit(r.remit).quick()
		switch {
		case got == r.quick:
			right++
		case got:
			falseQuick++
			t.Logf("called quick, needs planning (%s): %s", why, r.remit)
		default:
			falseFull++
			t.Logf("called full, is one task (%s): %s", why, r.remit)
		}
	}
	t.Logf("%d of %d right; %d wrongly quick, %d wrongly full", right, len(labelledRemits), falseQuick, falseFull)
	if falseQuick > 1 {
		t.Errorf("%d remits that need planning were called quick", falseQuick)
	}
	if right < len(labelledRemits)*8/10 {
		t.Errorf("only %d of %d right", right, len(labelledRemits))
	}
}

func TestQuickCriteriaAreWhatLemmingsCanCheck(t *testing.T) {
	t.Parallel()
	d := &Deps{Work: testRepo(t, map[string]string{"hello/hello.go": "package hello\n\nfunc Hello() string { return \"Hello, World\" }\n"}),
		Gates: []workspace.Gate{{Name: "test", Command: "go test ./..."}}}
	got := quickOf(d).quickCriteria(`Change the greeting in hello/hello.go from "Hello, World" to "Hello, Lemmings".`, []string{"hello/hello.go"})
	want := []string{critGates, critAdds + `"Hello, Lemmings"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("criteria %q, want %q", got, want)
	}
	if got := quickOf(d).quickCriteria("Make the failing test TestParse pass.", nil); len(got) != 1 || got[0] != critGates {
		t.Errorf("a remit about the tests is the gates' to decide: %q", got)
	}
	got = quickOf(d).quickCriteria("Add a doc comment to Hello in hello/hello.go.", []string{"hello/hello.go"})
	if len(got) != 2 || !strings.HasPrefix(got[1], critRemit) {
		t.Errorf("a remit nothing mechanical checks goes to the model: %q", got)
	}
	long := "Solve the exercise by editing leap.go. Make the tests pass (they run with `go test ./...`).\n\n" + strings.Repeat("A leap year is divisible by four. ", 20) + `Say "yes" to leap years.`
	if got := quickOf(d).quickCriteria(long, []string{"leap.go"}); len(got) != 1 || got[0] != critGates {
		t.Errorf("a long remit's quotes are not read as text to add: %q", got)
	}
	// An exercise's short remit quotes the command its tests run with: how
	// the work is checked, not text the change must add.
	short := "Solve the exercise by editing hello.go. Make the tests pass (they run with `go test ./...`); do not change the tests."
	if got := quickOf(d).quickCriteria(short, []string{"hello/hello.go"}); len(got) != 1 || got[0] != critGates {
		t.Errorf("the gate's command was read as text to add: %q", got)
	}
}

// QA asks no model when the gates and lemmings' own checks cover every
// criterion, and fails a change that does not add the text the remit asked for.
func TestQADecidesWithoutAModelWhenTheChecksCoverEveryCriterion(t *testing.T) {
	t.Parallel()
	gates := []runstate.GateOutcome{{Name: "test", Command: "go test ./...", Passed: true}}
	crit := []string{critGates, critAdds + `"Hello, Lemmings"`}
	diff := "--- a/hello.go\n+++ b/hello.go\n@@\n-\treturn \"Hello, World\"\n+\treturn \"Hello, Lemmings\"\n"
	ev := reviewEvidence{change: diff, added: addedText(diff), gates: gates, requireQuotes: true}
	if !checkedWithoutModel(crit, ev) {
		t.Fatal("gates and an added text are lemmings' to check")
	}
	res, pass := judgeReview(crit, nil, ev)
	if !pass || res[1].By != "checks" || !res[1].Met {
		t.Errorf("verdict %v %+v", pass, res)
	}
	wrong := "+\treturn \"Hello, World!\"\n"
	if _, pass := judgeReview(crit, nil, reviewEvidence{change: wrong, added: addedText(wrong), gates: gates}); pass {
		t.Error("a change without the asked-for text passed")
	}
	if checkedWithoutModel(append(crit, "Hello is documented"), ev) {
		t.Error("a criterion only a reviewer can judge needs the model")
	}
}

// Every local role's prompt starts with the same bytes: the system message
// and the shared head (project context, knowledge), so the server's prompt
// cache serves them across role switches.
func TestEveryLocalRoleSharesThePromptPrefix(t *testing.T) {
	t.Parallel()
	c, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	d := &Deps{Composer: c, Settings: DefaultSettings(), Work: testRepo(t, map[string]string{"README.md": "# demo\n"})}
	s := &runstate.State{Remit: "do it", ProjectContext: "Repository files:\n.: README.md",
		Milestones: []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}}}
	ctx := context.Background()
	var sent []string
	for _, label := range []string{runstate.NodeScope, runstate.NodePlanner, runstate.NodeImplementor, runstate.NodeQA, runstate.NodeAssessor} {
		req, err := d.compose(ctx, call{Label: label, State: s, Data: roleData(label), Sections: []llm.Section{{Title: "X", Body: label, Required: true}}})
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if len(req.Messages) != 2 {
			t.Fatalf("%s: %d messages", label, len(req.Messages))
		}
		sent = append(sent, req.Messages[0].Content+"\x00"+req.Messages[1].Content)
		if r := (llmtest.Call{Messages: []llmtest.Message{{Role: "system", Content: req.Messages[0].Content}, {Role: "user", Content: req.Messages[1].Content}}}).Role(); r != label {
			t.Errorf("the prompt of %s reads as %q's", label, r)
		}
	}
	sh, err := d.sharedPrefix(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	prefix := sh.System + "\x00" + sh.Head + "\n\n## " + llm.RoleSection + "\n"
	for i, p := range sent {
		if !strings.HasPrefix(p, prefix) {
			t.Errorf("prompt %d does not start with the shared prefix:\n%.300s", i, p)
		}
	}
	if !strings.Contains(sh.Head, "## "+prompts.SecProjectContext) || !strings.Contains(sh.Head, "## "+prompts.SecProjectKnowledge) {
		t.Errorf("shared head:\n%s", sh.Head)
	}
}

func roleData(label string) any {
	switch label {
	case runstate.NodeScope:
		return scopeData{Remit: "do it", MaxFiles: 2, MaxChars: 600}
	case runstate.NodePlanner:
		return plannerData{MilestoneID: "m1"}
	case runstate.NodeImplementor:
		return implementor.PromptSamples()[1]
	case runstate.NodeAssessor:
		return assessorData{Reason: "interval"}
	}
	return nil
}

// A one-function remit cannot come back as five milestones: the schema sent
// to the model bounds the plan by what the remit asks.
func TestTheScopeSchemaIsSizedToTheRemit(t *testing.T) {
	t.Parallel()
	d := &Deps{Settings: DefaultSettings()}
	bound := func(remit string) (ms, tasks, instr float64, crit map[string]any) {
		raw, err := schemaFor[scopeReply](d, &runstate.State{Remit: remit})
		if err != nil {
			t.Fatal(err)
		}
		var root map[string]any
		if err := json.Unmarshal(raw, &root); err != nil {
			t.Fatal(err)
		}
		m := prop(root, "milestones")
		task := items(prop(items(m), "tasks"))
		return m["maxItems"].(float64), prop(items(m), "tasks")["maxItems"].(float64), prop(task, "instructions")["maxLength"].(float64), items(prop(task, "acceptance_criteria"))
	}
	ms, tasks, instr, crit := bound("Implement the collatz steps function in collatz.go.")
	if ms != 1 || tasks != 3 || instr != 1200 || crit["maxLength"] != 300.0 {
		t.Errorf("one function: %v milestones, %v tasks each, instructions %v, criteria %v", ms, tasks, instr, crit)
	}
	if ms, _, _, _ := bound("Make the test suite pass, then add TopWords to the package, then add a -top flag, then document it."); ms != 4 {
		t.Errorf("four actions: %v milestones, want 4", ms)
	}
}

// testRepo commits files in a new repository and returns the run's worktree.
func testRepo(t *testing.T, files map[string]string) *workspace.Worktree {
	t.Helper()
	return testWorktree(t, gitfixture.Repo(t, files))
}

// A remit lemmings placed in its file, whose quick attempts failed without
// the implementor saying it was blocked, fails rather than escalating: the
// full pipeline would ask the same model the same thing at many times the
// cost. One lemmings did not place, or whose attempt was blocked, escalates.
func TestAPlacedQuickTaskFailsRatherThanEscalating(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		placed  bool
		status  runstate.ImplStatus
		outcome string
	}{
		{"placed, the code failed", true, runstate.ImplFinished, DecisionAbort},
		{"not placed", false, runstate.ImplFinished, DecisionRescope},
		{"placed, but blocked", true, runstate.ImplBlocked, DecisionRescope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Deps{Work: testRepo(t, map[string]string{"a.go": "package a\n"}), Settings: DefaultSettings()}
			s := runstate.State{Quick: true, CurrentTask: &runstate.Task{ID: "t1", Attempt: 2, Placed: tc.placed, Feedback: "the gates fail"},
				Implementation: &runstate.ImplResult{Status: tc.status}}
			out, err := quickOf(d).planQuick(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if out.PlannerDecision != tc.outcome {
				t.Errorf("decision %q, want %q", out.PlannerDecision, tc.outcome)
			}
		})
	}
}
