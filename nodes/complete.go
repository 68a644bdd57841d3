package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Commit trailers lemmings writes on the run branch.
const (
	TrailerRun       = "Lemmings-Run"
	TrailerTask      = "Lemmings-Task"
	TrailerDirective = "Lemmings-Directive"
)

// afterTask is what a finished task's bookkeeping uses: the work tree its
// commit is made in, the settings, and the index brought up to date.
type afterTask struct {
	Work     *workspace.Worktree
	Settings Settings
	Index    Indexer
}

func afterTaskOf(d *Deps) afterTask {
	return afterTask{Work: d.Work, Settings: d.Settings, Index: d.Index}
}

// refreshIndex re-indexes what changed in the work tree; retrieval is an aid,
// so a failure is a warning.
func (d afterTask) refreshIndex(ctx context.Context) {
	if d.Index == nil {
		return
	}
	if _, err := d.Index.Update(ctx, d.Work.Dir(), rag.UpdateOptions{KnowledgeDir: d.Settings.KnowledgeDir}); err != nil {
		events.Emit(ctx, events.Warning{Message: "index not updated: " + err.Error()})
	}
}

// MarkComplete squashes the task's attempts into one commit on the run branch
// and records it in the done list. Re-running it after a crash finds the commit
// already made and does not make another.
func (d *Deps) MarkComplete(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	t := s.CurrentTask
	if t == nil {
		return s, errors.New("mark_complete: no current task")
	}
	now := d.now()
	entry := runstate.DoneEntry{TaskID: t.ID, Milestone: t.Milestone, Title: t.Title, Attempts: t.Attempt, DirectiveID: t.DirectiveID, Polish: t.Polish, At: now,
		Instructions: t.Instructions, AcceptanceCriteria: t.AcceptanceCriteria, TargetFiles: t.TargetFiles}
	if s.PlannerDecision == DecisionSkip {
		entry.QA = "skipped"
		entry.Summary = textutil.FirstNonEmpty(t.Feedback, "already satisfied")
		if err := tasksOf(d).resetTo(ctx, t); err != nil {
			return s, fmt.Errorf("mark_complete: %w", err)
		}
	} else {
		entry.QA = "passed"
		if s.QA != nil && s.QA.Disputed {
			entry.QA = runstate.QADisputed
		}
		sha, files, err := afterTaskOf(d).commitTask(ctx, &s, t)
		if err != nil {
			return s, fmt.Errorf("mark_complete: %w", err)
		}
		entry.Commit, entry.Files = sha, files
		entry.Summary = d.summarize(ctx, &s, t, files)
		events.Emit(ctx, events.Commit{Task: t.ID, SHA: sha, Files: files})
	}
	s.DoneList = append(s.DoneList, entry)
	s.TasksCompleted++
	s.ConsecutiveFailures = 0
	if t.Polish {
		s.PolishTasks++
	} else {
		s.TasksSinceLastReview++
		happen(&s, runstate.HappenedTaskCompleted)
		if s.ReviewInterval > 0 && s.TasksSinceLastReview >= s.ReviewInterval {
			s.ReviewReason = "interval"
		}
	}
	if t.DirectiveID != "" {
		settleDirective(&s, t.DirectiveID, t.ID, runstate.FateCompleted, "task "+t.ID+" completed", now)
	}
	afterTaskOf(d).countKnowledgeUse(ctx, &s, t)
	settleEscalations(&s, t.ID, true)
	afterTaskOf(d).refreshIndex(ctx)
	s.CurrentTask, s.Implementation, s.QA = nil, nil, nil
	return s, nil
}

// commitTask turns the attempts' work-in-progress commits into one commit.
func (d afterTask) commitTask(ctx context.Context, s *runstate.State, t *runstate.Task) (string, []string, error) {
	// Idempotent on resume: the commit may already exist.
	if log, err := d.Work.Log(ctx, t.StartCommit); err == nil {
		for _, c := range log {
			if c.Trailers[TrailerTask] == t.ID && c.Trailers[TrailerRun] == s.RunID {
				files, err := d.Work.ChangedFiles(ctx, t.StartCommit)
				return c.SHA, files, err
			}
		}
	}
	files, err := d.Work.ChangedFiles(ctx, t.StartCommit)
	if err != nil {
		return "", nil, err
	}
	if err := d.Work.ResetSoft(ctx, t.StartCommit); err != nil {
		return "", nil, err
	}
	trailers := map[string]string{TrailerRun: s.RunID, TrailerTask: t.ID}
	if t.DirectiveID != "" {
		trailers[TrailerDirective] = t.DirectiveID
	}
	msg := t.Title
	if s.Implementation != nil && s.Implementation.Summary != "" {
		msg += "\n\n" + s.Implementation.Summary
	}
	sha, err := d.Work.Commit(ctx, msg, trailers)
	if errors.Is(err, workspace.ErrNothingToCommit) {
		return "", nil, fmt.Errorf("task %s passed QA but left nothing to commit", t.ID)
	}
	return sha, files, err
}

// summarize writes the done-list line. From the task and the diff's files
// (no model call) in a quick run, or when pipeline.summaries is diff; else
// the small local model writes it, and the implementor's own summary stands
// in when it cannot answer.
func (d *Deps) summarize(ctx context.Context, s *runstate.State, t *runstate.Task, files []string) string {
	fallback := t.Title
	if s.Implementation != nil && s.Implementation.Summary != "" {
		fallback = s.Implementation.Summary
	}
	switch d.Settings.Pipeline.Summaries {
	case SummariesDiff:
		return diffSummary(fallback, files)
	case SummariesModel:
	default:
		if s.Quick {
			return diffSummary(fallback, files)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s: %s\n", t.ID, t.Title)
	if s.Implementation != nil {
		fmt.Fprintf(&b, "Implementor's report: %s\nFiles: %s\n", s.Implementation.Summary, strings.Join(s.Implementation.Files, ", "))
	}
	if t.Attempt > 1 {
		fmt.Fprintf(&b, "Attempts: %d (last feedback: %s)\n", t.Attempt, textutil.ClipTrimmed(t.Feedback, 400))
	}
	reply, _, err := ask[summaryReply](ctx, d, s, call{Label: LabelSummarizer, Role: RoleSummarizer, Sections: []llm.Section{
		{Title: prompts.SecTaskResult, Body: b.String(), Required: true},
	}})
	if err != nil {
		events.Emit(ctx, events.Warning{Message: "summarizer unavailable, using the implementor's summary: " + err.Error()})
		return fallback
	}
	return textutil.ClipTrimmed(reply.Summary, 600)
}

// diffSummary is the done-list line without a model: what the implementor
// said it did, and the files the commit changed.
func diffSummary(said string, files []string) string {
	out := textutil.ClipTrimmed(said, 400)
	if len(files) > 0 {
		out += " (changed: " + textutil.ClipTrimmed(strings.Join(files, ", "), 180) + ")"
	}
	return out
}

// MarkFailed abandons the task: the work tree returns to the task's start and
// the failure is recorded with its reason. A task abort is a Design trigger and
// pulls the supervisors forward.
func (d *Deps) MarkFailed(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	t := s.CurrentTask
	if t == nil {
		return s, errors.New("mark_failed: no current task")
	}
	reason := textutil.FirstNonEmpty(t.Feedback, "no reason recorded")
	if out, kept, err := d.keepPassing(ctx, s, reason); kept || err != nil {
		return out, err
	}
	if err := tasksOf(d).abandon(ctx, &s, reason); err != nil {
		return s, fmt.Errorf("mark_failed: %w", err)
	}
	s.ConsecutiveFailures++
	s.EscalationContext = strings.TrimSpace(s.EscalationContext + fmt.Sprintf("\nTask %s %q abandoned after %d attempts: %s", t.ID, t.Title, t.Attempt, textutil.ClipTrimmed(reason, 300)))
	happen(&s, runstate.HappenedTaskAborted)
	s.ReviewReason = "failure"
	return s, nil
}
