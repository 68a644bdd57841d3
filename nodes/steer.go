package nodes

// Steering a run from outside it: messages a user tells a run (lemmings
// tell), filed as directives the planner must address, and tasks a user
// takes back (lemmings undo, fork --reject-task), their commits reverted and
// the tasks put back in the plan. A running run receives both through files
// in its run folder, which it takes in between nodes (tells) or at its next
// task boundary (undos); the request file is removed only once a checkpoint
// holds what it asked, so a crash in between takes it in again, once.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// TrailerUndo names, on a revert commit, the task it took back.
const TrailerUndo = "Lemmings-Undo"

// TakeTells files the messages waiting in runDir as directives in s, each
// once: a message the state already holds (a checkpoint has it) only has its
// file removed. It returns the messages filed now.
func TakeTells(s *runstate.State, runDir string, now time.Time) ([]runstate.ToldMessage, error) {
	reqs, err := runstate.PendingTells(runDir)
	var filed []runstate.ToldMessage
	for _, r := range reqs {
		if slices.ContainsFunc(s.Tells, func(m runstate.ToldMessage) bool { return m.ID == r.ID }) {
			_ = r.Remove() // committed with an earlier checkpoint
			continue
		}
		filed = append(filed, fileTell(s, r, now))
	}
	return filed, err
}

// fileTell makes r a functional directive of the user's.
func fileTell(s *runstate.State, r runstate.TellRequest, now time.Time) runstate.ToldMessage {
	s.NextDirectiveID++
	d := runstate.Directive{ID: fmt.Sprintf("d%d", s.NextDirectiveID), Type: runstate.DirFunctional, Source: runstate.SourceUser,
		Description: r.Message, Rationale: "the user told the run so (lemmings tell)", Priority: r.Priority,
		CreatedAtTask: s.TasksCompleted}
	s.PendingDirectives = append(s.PendingDirectives, d)
	m := runstate.ToldMessage{ID: r.ID, Message: r.Message, Directive: d.ID, Priority: r.Priority, At: r.At, Delivered: now}
	s.Tells = append(s.Tells, m)
	return m
}

// steering is what a human's steering between nodes uses (tell, undo,
// knowledge reviews): the task moves, the run's folder the requests are
// written to, and the settings.
type steering struct {
	taskWork
	RunDir   string
	Settings Settings
}

func steeringOf(d *Deps) steering {
	return steering{taskWork: tasksOf(d), RunDir: d.RunDir, Settings: d.Settings}
}

// takeTells runs before every node: what a user told the run since its last
// checkpoint enters the state the node starts from, and so the checkpoint the
// node ends with.
func (d steering) takeTells(ctx context.Context, s *runstate.State) {
	if d.RunDir == "" {
		return
	}
	filed, err := TakeTells(s, d.RunDir, d.now())
	for _, m := range filed {
		events.Emit(ctx, events.Told{Directive: m.Directive, ID: m.ID, Message: textutil.ClipTrimmed(m.Message, 300), Priority: m.Priority})
	}
	if err != nil {
		events.Emit(ctx, events.Warning{Message: err.Error()})
	}
}

// steerHook takes in what the user told the run, before every node.
func (d steering) steerHook() Hook {
	return Hook{Name: "steer", Before: func(ctx context.Context, _ string, s *runstate.State) error {
		d.takeTells(ctx, s)
		return nil
	}}
}

// applyUndos carries out the undos left for a running run, at a task
// boundary (the planner, with no task in progress): each task's commit is
// reverted by a new commit and the task goes back to the plan. An undo that
// cannot be done is a warning, and its request is dropped.
func (d steering) applyUndos(ctx context.Context, s *runstate.State) {
	if d.RunDir == "" || d.Work == nil || s.CurrentTask != nil {
		return
	}
	reqs, err := runstate.PendingUndos(d.RunDir)
	if err != nil {
		events.Emit(ctx, events.Warning{Message: err.Error()})
	}
	for _, r := range reqs {
		if slices.ContainsFunc(s.Undone, func(u runstate.UndoneTask) bool { return u.ID == r.ID }) {
			_ = r.Remove()
			continue
		}
		u, err := UndoTask(ctx, d.Work, s, UndoOptions{Task: r.Task, Reason: r.Reason, By: "undo", RequestID: r.ID, Now: d.now()})
		if err != nil {
			msg := fmt.Sprintf("lemmings undo %s: %v", r.Task, err)
			s.Warnings = append(s.Warnings, msg)
			events.Emit(ctx, events.Warning{Message: msg})
			_ = r.Remove() // it can never apply; said in the log and the report
			continue
		}
		events.Emit(ctx, events.TaskUndone{Commit: u.Commit, Reason: textutil.ClipTrimmed(u.Reason, 300), Revert: u.Revert, Task: u.TaskID})
	}
}

// UndoOptions say which task to take back and how.
type UndoOptions struct {
	Task, Reason string
	// By is "undo" or "fork"; RequestID the undo request's id, if any.
	By, RequestID string
	Now           time.Time
}

// UndoTask takes task back in s and on wt's branch. A finished task's commit
// is reverted (a new commit); the task leaves the done
// list and goes back to the head of the plan with the reason as feedback.
// The task in progress (fork --reject-task) is rolled back to its start and
// goes back to the plan the same way. A run that had ended, or was
// polishing, works again: the task goes into a new milestone when none is
// open. The work tree must be clean.
func UndoTask(ctx context.Context, wt *workspace.Worktree, s *runstate.State, o UndoOptions) (runstate.UndoneTask, error) {
	reason := strings.TrimSpace(o.Reason)
	if reason == "" {
		reason = "no reason given"
	}
	u := runstate.UndoneTask{ID: o.RequestID, TaskID: o.Task, Reason: reason, By: o.By, At: o.Now}
	var back runstate.PlannedTask
	if t := s.CurrentTask; t != nil && t.ID == o.Task {
		if t.StartCommit != "" {
			if err := wt.ResetHard(ctx, t.StartCommit); err != nil {
				return u, err
			}
			u.Reset = true
		}
		u.Title = t.Title
		back = runstate.PlannedTask{Title: t.Title, Instructions: t.Instructions, AcceptanceCriteria: t.AcceptanceCriteria,
			TargetFiles: t.TargetFiles, Operator: t.Operator, Placed: t.Placed, Tests: t.Tests}
		s.CurrentTask, s.Implementation, s.QA = nil, nil, nil
	} else {
		i := slices.IndexFunc(s.DoneList, func(e runstate.DoneEntry) bool { return e.TaskID == o.Task })
		if i < 0 {
			return u, fmt.Errorf("no task %s among the run's finished tasks (%s)", o.Task, taskIDs(s))
		}
		e := s.DoneList[i]
		u.Title, u.Commit = e.Title, e.Commit
		if e.Commit != "" {
			if err := takeBackCommit(ctx, wt, &u); err != nil {
				return u, err
			}
		}
		back = runstate.PlannedTask{Title: e.Title, Instructions: textutil.FirstNonEmpty(e.Instructions, e.Title), AcceptanceCriteria: e.AcceptanceCriteria,
			TargetFiles: e.TargetFiles}
		s.DoneList = slices.Delete(slices.Clone(s.DoneList), i, i+1)
		if e.QA == "passed" || e.QA == "skipped" || e.QA == "" {
			s.TasksCompleted = max(0, s.TasksCompleted-1)
		}
	}
	how := "the user took back this task's earlier attempt"
	if u.Commit != "" {
		how += " (commit " + u.Commit[:min(len(u.Commit), 10)] + ", now reverted)"
	}
	back.Feedback = how + ": " + reason + ". Do it again, taking that into account."
	s.CarryForward = append([]runstate.PlannedTask{back}, dropPlanned(s.CarryForward, back.Title)...)
	reopen(s, u.Title)
	s.Undone = append(s.Undone, u)
	return u, nil
}

// takeBackCommit reverts u.Commit on wt's branch by a new commit. The
// branch is never moved back: every commit a checkpoint names stays on it,
// so history and fork keep working for the steps before.
func takeBackCommit(ctx context.Context, wt *workspace.Worktree, u *runstate.UndoneTask) error {
	on, err := wt.IsAncestor(ctx, u.Commit)
	if err != nil {
		return err
	}
	if !on {
		return fmt.Errorf("task %s's commit %s is not on the branch %s (undone already?)", u.TaskID, u.Commit[:min(len(u.Commit), 10)], wt.Branch())
	}
	msg := fmt.Sprintf("Revert %s: %s\n\nUndone by the user: %s", u.TaskID, u.Title, u.Reason)
	sha, err := wt.Revert(ctx, u.Commit, msg, map[string]string{TrailerRun: wt.RunID(), TrailerUndo: u.TaskID})
	if errors.Is(err, workspace.ErrNothingToCommit) {
		return fmt.Errorf("reverting task %s's commit changes nothing: its change is not on the branch any more", u.TaskID)
	}
	if errors.Is(err, workspace.ErrRevertConflict) {
		return fmt.Errorf("%w: later tasks changed the same lines; fork the run from a step before task %s instead (lemmings history lists them)", err, u.TaskID)
	}
	if err != nil {
		return err
	}
	u.Revert = sha
	return nil
}

// reopen makes a run that had ended, or was polishing, plan again: the task
// put back goes into the open milestone, or a new one.
func reopen(s *runstate.State, title string) {
	s.Outcome, s.Evidence, s.StopReason = "", "", ""
	s.PlannerDecision, s.ReviewReason, s.Assessment = "", "", nil
	if s.Phase != runstate.PhaseExecute {
		s.Phase = runstate.PhaseExecute
	}
	if s.ActiveMilestone() != nil && s.ActiveMilestone().Status != runstate.MilestoneDone {
		return
	}
	s.Milestones = append(slices.Clone(s.Milestones), runstate.Milestone{ID: fmt.Sprintf("m%d", len(s.Milestones)+1),
		Goal: "Redo what the user took back: " + title, Status: runstate.MilestoneActive})
	s.CurrentMilestone = len(s.Milestones) - 1
}

func taskIDs(s *runstate.State) string {
	var ids []string
	for _, e := range s.DoneList {
		ids = append(ids, e.TaskID)
	}
	if s.CurrentTask != nil {
		ids = append(ids, s.CurrentTask.ID+" (in progress)")
	}
	if len(ids) == 0 {
		return "none yet"
	}
	return strings.Join(ids, ", ")
}
