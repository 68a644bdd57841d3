package nodes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/runstate"
)

// A told message is filed once as the user's directive, however often the
// run looks (a step cut off and run again looks twice), and its file goes
// once a checkpoint holds it; a request lemmings did not write is set aside.
func TestTellsAreFiledOnceAndTheirFilesGoOnceCheckpointed(t *testing.T) {
	dir := t.TempDir()
	if _, err := runstate.RequestTell(dir, "  ", ""); err == nil {
		t.Error("an empty message was accepted")
	}
	if _, err := runstate.RequestTell(dir, "x", "urgent"); err == nil {
		t.Error("priority urgent was accepted")
	}
	if _, err := runstate.RequestTell(dir, strings.Repeat("x", runstate.MaxTellBytes+1), ""); err == nil {
		t.Error("a message over the limit was accepted")
	}
	req, err := runstate.RequestTell(dir, "use the stdlib only", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runstate.TellDir, "junk.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(100, 0).UTC()
	var s runstate.State
	filed, err := TakeTells(&s, dir, now)
	if err == nil || !strings.Contains(err.Error(), "set aside") {
		t.Errorf("the junk request: %v", err)
	}
	if len(filed) != 1 || len(s.PendingDirectives) != 1 || len(s.Tells) != 1 {
		t.Fatalf("filed %+v, directives %+v", filed, s.PendingDirectives)
	}
	d := s.PendingDirectives[0]
	if d.Source != runstate.SourceUser || d.Type != runstate.DirFunctional || d.Priority != runstate.PrioNormal || d.Description != req.Message || s.Tells[0].Directive != d.ID {
		t.Errorf("directive %+v, told %+v", d, s.Tells[0])
	}
	// The step that took it in was cut off: the run looks again from the
	// state before it, and files it again, once.
	var again runstate.State
	if filed, _ := TakeTells(&again, dir, now); len(filed) != 1 {
		t.Errorf("a re-run step filed %d", len(filed))
	}
	// Once the checkpoint holds it, the next look removes the file and
	// files nothing.
	if filed, _ := TakeTells(&s, dir, now); len(filed) != 0 || len(s.PendingDirectives) != 1 {
		t.Errorf("filed twice: %+v", s.PendingDirectives)
	}
	if left, _ := runstate.PendingTells(dir); len(left) != 0 {
		t.Errorf("requests left: %+v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, runstate.TellDir, ".junk.json.bad")); err != nil {
		t.Errorf("the junk request was not set aside: %v", err)
	}
}

// Undo reverts the task's commit with a new commit, puts the task back at
// the head of the plan with the reason, and reopens a run that had ended; a
// revert that conflicts with a later task changes nothing.
func TestUndoTaskRevertsAndPlansTheTaskAgain(t *testing.T) {
	ctx := context.Background()
	wt := testRepo(t, map[string]string{"a.go": "package a\n\nconst A = 1\n"})
	commit := func(body, msg string) string {
		if err := os.WriteFile(filepath.Join(wt.Dir(), "a.go"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		sha, err := wt.Commit(ctx, msg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	c1 := commit("package a\n\nconst A = 2\n", "t1")
	s := runstate.State{Phase: runstate.PhaseDone, Outcome: "done", TasksCompleted: 1,
		Milestones: []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneDone}},
		DoneList:   []runstate.DoneEntry{{TaskID: "t1", Title: "Make A two", Commit: c1, QA: "passed", Instructions: "set A to 2", AcceptanceCriteria: []string{"A is 2"}}}}
	u, err := UndoTask(ctx, wt, &s, UndoOptions{Task: "t1", Reason: "A must stay odd", By: "undo", Now: time.Unix(5, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if u.Revert == "" || u.Commit != c1 {
		t.Fatalf("undone %+v", u)
	}
	if data, _ := os.ReadFile(filepath.Join(wt.Dir(), "a.go")); !strings.Contains(string(data), "A = 1") {
		t.Errorf("not reverted: %s", data)
	}
	if len(s.DoneList) != 0 || s.TasksCompleted != 0 || s.Phase != runstate.PhaseExecute || s.Outcome != "" {
		t.Errorf("state after undo: done %v, completed %d, phase %s, outcome %q", s.DoneList, s.TasksCompleted, s.Phase, s.Outcome)
	}
	if len(s.CarryForward) != 1 || s.CarryForward[0].Instructions != "set A to 2" || !strings.Contains(s.CarryForward[0].Feedback, "A must stay odd") {
		t.Errorf("plan after undo: %+v", s.CarryForward)
	}
	if m := s.ActiveMilestone(); m == nil || m.Status != runstate.MilestoneActive || len(s.Milestones) != 2 {
		t.Errorf("no open milestone for the task: %+v", s.Milestones)
	}
	if _, err := UndoTask(ctx, wt, &s, UndoOptions{Task: "t1", Reason: "again"}); err == nil {
		t.Error("t1 undone twice")
	}

	// t2 changes what t3 changed after it: t2's revert conflicts.
	c2 := commit("package a\n\nconst A = 3\n", "t2")
	c3 := commit("package a\n\nconst A = 5\n", "t3")
	s.DoneList = []runstate.DoneEntry{{TaskID: "t2", Title: "three", Commit: c2}, {TaskID: "t3", Title: "five", Commit: c3}}
	if _, err := UndoTask(ctx, wt, &s, UndoOptions{Task: "t2", Reason: "no"}); err == nil || !strings.Contains(err.Error(), "fork the run from a step before task t2") {
		t.Errorf("conflicting revert: %v", err)
	}
	if head, _ := wt.Head(ctx); head != c3 {
		t.Errorf("the branch moved on a refused undo: %s, want %s", head, c3)
	}
	if clean, _ := wt.IsClean(ctx); !clean || len(s.DoneList) != 2 {
		t.Errorf("a refused undo left the tree dirty (%v) or changed the state (%d done)", !clean, len(s.DoneList))
	}
}
