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
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Folders of a run's requests, in its run folder.
const (
	TellDir = "tell"
	UndoDir = "undo"
)

// TrailerUndo names, on a revert commit, the task it took back.
const TrailerUndo = "Lemmings-Undo"

// SourceUser is the source of the directives a user told a run.
const SourceUser = "user"

// MaxTellBytes is the longest message lemmings tell takes.
const MaxTellBytes = 4000

// TellRequest is a message left for a run.
type TellRequest struct {
	ID       string    `json:"id"`
	Message  string    `json:"message"`
	Priority string    `json:"priority"` // critical | normal | low
	At       time.Time `json:"at"`
	file     string
}

// UndoRequest is an undo left for a running run.
type UndoRequest struct {
	ID     string    `json:"id"`
	Task   string    `json:"task"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	file   string
}

// RequestTell leaves message for the run whose folder is runDir; the run
// files it as a directive at its next checkpoint.
func RequestTell(runDir, message, priority string) (TellRequest, error) {
	message = strings.TrimSpace(message)
	switch {
	case message == "":
		return TellRequest{}, errors.New(`tell: the message is empty: lemmings tell RUN "what the run should do"`)
	case len(message) > MaxTellBytes:
		return TellRequest{}, fmt.Errorf("tell: the message is %d bytes, more than %d: say it shorter, or put the details in a file of the repository and name it", len(message), MaxTellBytes)
	}
	if priority == "" {
		priority = PrioNormal
	}
	if priority != PrioCritical && priority != PrioNormal && priority != PrioLow {
		return TellRequest{}, fmt.Errorf("tell: priority %q: want %s, %s or %s", priority, PrioCritical, PrioNormal, PrioLow)
	}
	r := TellRequest{Message: message, Priority: priority, At: time.Now().UTC()}
	r.ID = requestID(r.At)
	return r, writeRequest(filepath.Join(runDir, TellDir), r.ID, r)
}

// RequestUndo leaves an undo of task for the run whose folder is runDir; the
// run carries it out at its next task boundary.
func RequestUndo(runDir, task, reason string) (UndoRequest, error) {
	r := UndoRequest{Task: strings.TrimSpace(task), Reason: strings.TrimSpace(reason), At: time.Now().UTC()}
	if r.Task == "" {
		return r, errors.New("undo: name the task (t3)")
	}
	r.ID = requestID(r.At)
	return r, writeRequest(filepath.Join(runDir, UndoDir), r.ID, r)
}

// requestID orders requests by time; the random part keeps two made in the
// same nanosecond apart.
func requestID(at time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%s", at.UnixNano(), hex.EncodeToString(b[:]))
}

// writeRequest writes v as dir/id.json under a dot name and renames it, so
// the run never reads half a request.
func writeRequest(dir, id string, v any) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+id+".json")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, id+".json"))
}

// readRequests decodes the requests in dir, oldest first; one that does not
// parse is set aside under a dot name (never read again) and reported.
func readRequests[T any](dir string, valid func(*T) bool, setFile func(*T, string)) ([]T, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []T
	var names []string
	var errs []error
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var r T
		if err := json.Unmarshal(data, &r); err != nil || !valid(&r) {
			aside := filepath.Join(dir, "."+name+".bad")
			_ = os.Rename(p, aside)
			errs = append(errs, fmt.Errorf("request %s is not one lemmings wrote (%v): set aside as %s", p, err, aside))
			continue
		}
		setFile(&r, p)
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// PendingTells lists the messages waiting in runDir, oldest first.
func PendingTells(runDir string) ([]TellRequest, error) {
	return readRequests(filepath.Join(runDir, TellDir),
		func(r *TellRequest) bool { return r.ID != "" && strings.TrimSpace(r.Message) != "" },
		func(r *TellRequest, p string) { r.file = p })
}

// PendingUndos lists the undos waiting in runDir, oldest first.
func PendingUndos(runDir string) ([]UndoRequest, error) {
	return readRequests(filepath.Join(runDir, UndoDir),
		func(r *UndoRequest) bool { return r.ID != "" && r.Task != "" },
		func(r *UndoRequest, p string) { r.file = p })
}

// TakeTells files the messages waiting in runDir as directives in s, each
// once: a message the state already holds (a checkpoint has it) only has its
// file removed. It returns the messages filed now.
func TakeTells(s *WorkflowState, runDir string, now time.Time) ([]ToldMessage, error) {
	reqs, err := PendingTells(runDir)
	var filed []ToldMessage
	for _, r := range reqs {
		if slices.ContainsFunc(s.Tells, func(m ToldMessage) bool { return m.ID == r.ID }) {
			_ = os.Remove(r.file) // committed with an earlier checkpoint
			continue
		}
		filed = append(filed, fileTell(s, r, now))
	}
	return filed, err
}

// fileTell makes r a functional directive of the user's.
func fileTell(s *WorkflowState, r TellRequest, now time.Time) ToldMessage {
	s.NextDirectiveID++
	d := Directive{ID: fmt.Sprintf("d%d", s.NextDirectiveID), Type: DirFunctional, Source: SourceUser,
		Description: r.Message, Rationale: "the user told the run so (lemmings tell)", Priority: r.Priority,
		CreatedAtTask: s.TasksCompleted}
	s.PendingDirectives = append(s.PendingDirectives, d)
	m := ToldMessage{ID: r.ID, Message: r.Message, Directive: d.ID, Priority: r.Priority, At: r.At, Delivered: now}
	s.Tells = append(s.Tells, m)
	return m
}

// takeTells runs before every node: what a user told the run since its last
// checkpoint enters the state the node starts from, and so the checkpoint the
// node ends with.
func (d *Deps) takeTells(ctx context.Context, s *WorkflowState) {
	if d.RunDir == "" {
		return
	}
	filed, err := TakeTells(s, d.RunDir, d.now())
	for _, m := range filed {
		graph.Emit(ctx, "told", map[string]any{"id": m.ID, "directive": m.Directive, "message": clip(m.Message, 300), "priority": m.Priority})
	}
	if err != nil {
		graph.Emit(ctx, "warning", map[string]any{"message": err.Error()})
	}
}

// steerHook takes in what the user told the run, before every node.
func (d *Deps) steerHook() Hook {
	return Hook{Name: "steer", Before: func(ctx context.Context, _ string, s *WorkflowState) error {
		d.takeTells(ctx, s)
		return nil
	}}
}

// applyUndos carries out the undos left for a running run, at a task
// boundary (the planner, with no task in progress): each task's commit is
// reverted by a new commit and the task goes back to the plan. An undo that
// cannot be done is a warning, and its request is dropped.
func (d *Deps) applyUndos(ctx context.Context, s *WorkflowState) {
	if d.RunDir == "" || d.Work == nil || s.CurrentTask != nil {
		return
	}
	reqs, err := PendingUndos(d.RunDir)
	if err != nil {
		graph.Emit(ctx, "warning", map[string]any{"message": err.Error()})
	}
	for _, r := range reqs {
		if slices.ContainsFunc(s.Undone, func(u UndoneTask) bool { return u.ID == r.ID }) {
			_ = os.Remove(r.file)
			continue
		}
		u, err := UndoTask(ctx, d.Work, s, UndoOptions{Task: r.Task, Reason: r.Reason, By: "undo", RequestID: r.ID, Now: d.now()})
		if err != nil {
			msg := fmt.Sprintf("lemmings undo %s: %v", r.Task, err)
			s.Warnings = append(s.Warnings, msg)
			graph.Emit(ctx, "warning", map[string]any{"message": msg})
			_ = os.Remove(r.file) // it can never apply; said in the log and the report
			continue
		}
		graph.Emit(ctx, "task_undone", map[string]any{"task": u.TaskID, "commit": u.Commit, "revert": u.Revert, "reason": clip(u.Reason, 300)})
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
func UndoTask(ctx context.Context, wt *workspace.Worktree, s *WorkflowState, o UndoOptions) (UndoneTask, error) {
	reason := strings.TrimSpace(o.Reason)
	if reason == "" {
		reason = "no reason given"
	}
	u := UndoneTask{ID: o.RequestID, TaskID: o.Task, Reason: reason, By: o.By, At: o.Now}
	var back PlannedTask
	if t := s.CurrentTask; t != nil && t.ID == o.Task {
		if t.StartCommit != "" {
			if err := wt.ResetHard(ctx, t.StartCommit); err != nil {
				return u, err
			}
			u.Reset = true
		}
		u.Title = t.Title
		back = PlannedTask{Title: t.Title, Instructions: t.Instructions, AcceptanceCriteria: t.AcceptanceCriteria,
			TargetFiles: t.TargetFiles, Operator: t.Operator}
		s.CurrentTask, s.Implementation, s.QA = nil, nil, nil
	} else {
		i := slices.IndexFunc(s.DoneList, func(e DoneEntry) bool { return e.TaskID == o.Task })
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
		back = PlannedTask{Title: e.Title, Instructions: firstNonEmpty(e.Instructions, e.Title), AcceptanceCriteria: e.AcceptanceCriteria,
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
	s.CarryForward = append([]PlannedTask{back}, dropPlanned(s.CarryForward, back.Title)...)
	reopen(s, u.Title)
	s.Undone = append(s.Undone, u)
	return u, nil
}

// takeBackCommit reverts u.Commit on wt's branch by a new commit. The
// branch is never moved back: every commit a checkpoint names stays on it,
// so history and fork keep working for the steps before.
func takeBackCommit(ctx context.Context, wt *workspace.Worktree, u *UndoneTask) error {
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
func reopen(s *WorkflowState, title string) {
	s.Outcome, s.Evidence, s.StopReason = "", "", ""
	s.PlannerDecision, s.ReviewReason, s.Assessment = "", "", nil
	if s.Phase != PhaseExecute {
		s.Phase = PhaseExecute
	}
	if s.ActiveMilestone() != nil && s.ActiveMilestone().Status != MilestoneDone {
		return
	}
	s.Milestones = append(slices.Clone(s.Milestones), Milestone{ID: fmt.Sprintf("m%d", len(s.Milestones)+1),
		Goal: "Redo what the user took back: " + title, Status: MilestoneActive})
	s.CurrentMilestone = len(s.Milestones) - 1
}

func taskIDs(s *WorkflowState) string {
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
