package nodes

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// testWorktree makes a git repository in dir (with an empty first commit when
// it has none) and the run r1's worktree of it.
func testWorktree(t *testing.T, dir string) *workspace.Worktree {
	t.Helper()
	git := func(args ...string) {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		git("init", "-q", "-b", "main")
		git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")
	}
	ctx := context.Background()
	repo, err := workspace.OpenRepo(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.CreateWorktree(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	return wt
}

// plannerDeps gives a TaskPlanner a real worktree and a scripted model that
// answers every planning call with reply.
func plannerDeps(t *testing.T, reply any) (*Deps, *workspace.Worktree) {
	t.Helper()
	wt := testWorktree(t, t.TempDir())
	body, _ := json.Marshal(reply)
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "m", ContextLength: 32768}))
	t.Cleanup(srv.Close)
	srv.Script(llmtest.Step{Times: -1, Reply: llmtest.Reply{Content: string(body)}})
	router, err := llm.NewRouter(llm.RouterConfig{Roles: map[string]llm.RoleSpec{RolePrimary: {Provider: llm.ProviderOllama, Model: "m", BaseURL: srv.URL()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { router.Close() })
	composer, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return &Deps{Model: router, Composer: composer, Work: wt, Settings: DefaultSettings(), Sandbox: sandboxWith(t)}, wt
}

func TestACriticalDirectivePreemptsATaskInProgressWithoutTakingItsWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, wt := plannerDeps(t, map[string]any{
		"decision": "implement", "reasoning": "retry", "carry_forward": []any{},
		"task":       map[string]any{"title": "Add parser", "instructions": "again", "acceptance_criteria": []string{"parses"}},
		"directives": []map[string]string{{"id": "d1", "fate": "task", "note": "now"}},
	})
	start, _ := wt.Head(ctx)
	if err := wt.FS().WriteFile("wip.txt", []byte("half done\n")); err != nil {
		t.Fatal(err)
	}
	wip, err := wt.Commit(ctx, "lemmings wip: t1 attempt 1", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, NextTaskID: 1,
		Milestones:        []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}},
		CurrentTask:       &runstate.Task{ID: "t1", Milestone: "m1", Title: "Add parser", AcceptanceCriteria: []string{"parses"}, StartCommit: start, AttemptBase: start, Attempt: 1, Retries: 1, Feedback: "tests fail"},
		Implementation:    &runstate.ImplResult{Status: runstate.ImplFinished, Commit: wip},
		PendingDirectives: []runstate.Directive{{ID: "d1", Type: runstate.DirFunctional, Priority: runstate.PrioCritical, Source: prompts.Design, Description: "Stop: the storage format is wrong"}},
	}
	out, err := d.TaskPlanner(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if out.CurrentTask == nil || out.CurrentTask.DirectiveID != "d1" || out.PlannerDecision != DecisionImplement {
		t.Fatalf("the critical directive's task should run now: %+v (%s)", out.CurrentTask, out.PlannerDecision)
	}
	if out.CurrentTask.StartCommit != start {
		t.Errorf("the critical task starts at %s, want the interrupted task's start %s (its WIP must not leak in)", out.CurrentTask.StartCommit, start)
	}
	if _, err := os.Stat(filepath.Join(wt.Dir(), "wip.txt")); err == nil {
		t.Error("the interrupted task's work in progress is still in the tree")
	}
	if len(out.CarryForward) == 0 || out.CarryForward[0].Title != "Add parser" {
		t.Errorf("the interrupted task should come back first: %+v", out.CarryForward)
	}
}

func TestASkipOrAbortOfATaskNeverStartedLeavesTheTreeAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, decision := range []string{DecisionSkip, DecisionAbort} {
		d, wt := plannerDeps(t, map[string]any{"decision": decision, "reasoning": "already there", "carry_forward": []any{}, "directives": []any{}})
		s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, ReviewInterval: 5,
			Milestones:   []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}},
			CarryForward: []runstate.PlannedTask{{Title: "Add parser", AcceptanceCriteria: []string{"parses"}}}}
		s, err := d.TaskPlanner(ctx, s)
		if err != nil || s.PlannerDecision != decision {
			t.Fatalf("%s: planner %v %s", decision, err, s.PlannerDecision)
		}
		if decision == DecisionSkip {
			s, err = d.MarkComplete(ctx, s)
		} else {
			s, err = d.MarkFailed(ctx, s)
		}
		if err != nil {
			t.Fatalf("%s of a task that never started: %v", decision, err)
		}
		if clean, _ := wt.IsClean(ctx); !clean {
			t.Errorf("%s changed the tree", decision)
		}
		if decision == DecisionSkip && (len(s.DoneList) != 1 || s.DoneList[0].QA != "skipped") {
			t.Errorf("skip not recorded: %+v", s.DoneList)
		}
		if decision == DecisionAbort && (len(s.Failures) != 1 || s.Failures[0].Reason == "") {
			t.Errorf("abort not recorded with a reason: %+v", s.Failures)
		}
	}
}

func TestAStoppedRunLeavesNoHalfTaskOnTheBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, wt := plannerDeps(t, map[string]any{"decision": "implement"})
	start, _ := wt.Head(ctx)
	if err := wt.FS().WriteFile("half.txt", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit(ctx, "lemmings wip: t1 attempt 1", nil); err != nil {
		t.Fatal(err)
	}
	d.Settings.MaxWallTime = time.Minute
	s := runstate.State{RunID: "r1", Phase: runstate.PhaseExecute, StartedAt: time.Now().Add(-time.Hour),
		Milestones:  []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}},
		CurrentTask: &runstate.Task{ID: "t1", Milestone: "m1", Title: "Half", StartCommit: start, AttemptBase: start, Attempt: 1}}
	out, err := d.TaskPlanner(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if out.PlannerDecision != DecisionStop || out.CurrentTask != nil {
		t.Fatalf("decision %s, task %+v", out.PlannerDecision, out.CurrentTask)
	}
	if head, _ := wt.Head(ctx); head != start {
		t.Error("the unfinished task's work-in-progress commit is still on the branch")
	}
	if len(out.Failures) != 1 || !strings.Contains(out.Failures[0].Reason, "max_wall_time") {
		t.Errorf("the unfinished task is not recorded with the reason: %+v", out.Failures)
	}
}
