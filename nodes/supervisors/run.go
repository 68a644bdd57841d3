package supervisors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// TrailerJob marks a knowledge commit with the job that wrote it, so a job
// re-run after a crash never writes its documents twice.
const TrailerJob = "Lemmings-Supervisor-Job"

// awaitTimeout bounds how long the run waits for background supervisors
// before the polish phase; a job still running then is recorded as skipped.
const awaitTimeout = 5 * time.Minute

// Runner is what the supervisors' node and hook use of the run: the workflow
// (package nodes) builds one from its collaborators.
type Runner struct {
	// Jobs runs the supervisors' calls; nil when supervisors are off.
	Jobs     *Jobs
	Work     *workspace.Worktree
	Settings Settings
	// KnowledgeDir is the knowledge store's directory in the work tree.
	KnowledgeDir         string
	MaxCleanupDirectives int
	DirectiveMaxAge      int
	// Compose makes a supervisor's prompt from its template and sections.
	Compose func(label string, data any, budget int, sections []llm.Section) (llm.Prompt, error)
	// Denied says whether a file must never leave the machine (nil: none
	// may).
	Denied func(path string) bool
	Now    func() time.Time
}

func (d *Runner) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// knowledgeStore opens the knowledge store of the work tree as it is now.
func (d *Runner) knowledgeStore() (*knowledge.Store, error) {
	if d.Work == nil {
		return nil, errors.New("no work tree")
	}
	store, _, err := knowledge.Open(d.Work.FS().Root() + "/" + d.KnowledgeDir)
	return store, err
}

// Run starts the supervisors that are due, in parallel. In the
// default background mode it returns at once and their work lands at a later
// planning round; in blocking mode it waits and lands it here.
func (d *Runner) Run(ctx context.Context, in runstate.State) (runstate.State, error) {
	s := in.Clone()
	due := DueNow(s, d.Settings)
	sup := d.Settings
	if UrgencyReached(s, sup) {
		s.SupervisorUrgency = 0
	}
	if d.Jobs == nil || len(due) == 0 {
		s.PendingTriggers = nil
		return s, nil
	}
	s.PendingTriggers = Remaining(s, sup, due)
	bootstrap := d.knowledgeEmpty()
	for _, ds := range due {
		job := StartJob(&s, ds, bootstrap)
		if err := d.launch(ctx, &s, job, true); err != nil {
			d.logSkipped(ctx, &s, job, err.Error())
			continue
		}
		events.Emit(ctx, events.SupervisorStart{Job: job.ID, Supervisor: job.Supervisor, Trigger: job.Trigger, Bootstrap: bootstrap})
	}
	if sup.Blocking {
		return s, d.Await(ctx, &s)
	}
	return s, nil
}

// StartJob records a due supervisor's run as a job in flight and resets its
// periodic counter.
func StartJob(s *runstate.State, ds Due, bootstrap bool) runstate.SupervisorJob {
	if s.Supervisors == nil {
		s.Supervisors = map[string]runstate.SupervisorTrack{}
	}
	track := s.Supervisors[ds.Name]
	track.Runs++
	track.TasksSinceRun = 0
	track.LastRunAt = TasksSettled(*s) + 1
	s.Supervisors[ds.Name] = track
	job := runstate.SupervisorJob{
		ID:         fmt.Sprintf("%s-%d-%d", ds.Name, s.TasksCompleted, track.Runs),
		Supervisor: ds.Name, Trigger: ds.Trigger, AtTask: s.TasksCompleted, Bootstrap: bootstrap,
	}
	if n := len(s.DoneList); n > 0 {
		job.AfterTask = s.DoneList[n-1].TaskID
	}
	s.SupervisorJobs = append(s.SupervisorJobs, job)
	return job
}

func (d *Runner) knowledgeEmpty() bool {
	store, err := d.knowledgeStore()
	return err != nil || store.Empty()
}

// launch composes the job's prompt from the state as it is now and hands it
// to the pool. A prompt that cannot be composed (a broken template override,
// required context over the input budget) is the supervisor's failure, not
// the run's: callers log the job as skipped.
func (d *Runner) launch(ctx context.Context, s *runstate.State, job runstate.SupervisorJob, fresh bool) error {
	in := d.Input(s, job)
	data := promptData{Bootstrap: job.Bootstrap, Trigger: job.Trigger}
	p, err := d.Compose(job.Supervisor, data, d.Settings.InputTokens, in)
	if err != nil {
		return err
	}
	d.Jobs.launch(job, llm.Request{Role: Role, Label: job.Supervisor, Messages: p.Messages}, fresh)
	return nil
}

// LandFinished merges finished jobs between tasks (never in the middle
// of one: knowledge commits must not mix with a task's work in progress).
// Jobs listed in the state but unknown to this process are relaunched.
func (d *Runner) LandFinished(ctx context.Context, s *runstate.State) error {
	if len(s.SupervisorJobs) == 0 {
		return nil
	}
	if d.Jobs == nil {
		for _, j := range s.SupervisorJobs {
			d.logSkipped(ctx, s, j, "supervisors are off in this process (offline or --no-supervisors)")
		}
		s.SupervisorJobs = nil
		return nil
	}
	if s.CurrentTask != nil {
		return nil
	}
	for _, job := range slices.Clone(s.SupervisorJobs) {
		if !d.Jobs.Known(job.ID) {
			if err := d.launch(ctx, s, job, false); err != nil {
				d.logSkipped(ctx, s, job, err.Error())
				continue
			}
			events.Emit(ctx, events.SupervisorRelaunch{Job: job.ID})
			continue
		}
		out, ok := d.Jobs.Result(job.ID)
		if !ok {
			continue
		}
		if err := d.Land(ctx, s, out); err != nil {
			return err
		}
	}
	return nil
}

// Await waits (bounded) for every job in flight and lands it.
func (d *Runner) Await(ctx context.Context, s *runstate.State) error {
	if d.Jobs == nil {
		return d.LandFinished(ctx, s)
	}
	wctx, cancel := context.WithTimeout(ctx, awaitTimeout)
	defer cancel()
	for _, job := range slices.Clone(s.SupervisorJobs) {
		if !d.Jobs.Known(job.ID) {
			if err := d.launch(ctx, s, job, false); err != nil {
				d.logSkipped(ctx, s, job, err.Error())
				continue
			}
		}
		out, ok := d.Jobs.Wait(wctx, job.ID)
		if !ok {
			if err := ctx.Err(); err != nil {
				return err
			}
			d.logSkipped(ctx, s, job, "still running after "+awaitTimeout.String())
			continue
		}
		if err := d.Land(ctx, s, out); err != nil {
			return err
		}
	}
	return nil
}

func (d *Runner) logSkipped(ctx context.Context, s *runstate.State, j runstate.SupervisorJob, why string) {
	s.SupervisorJobs = slices.DeleteFunc(s.SupervisorJobs, func(x runstate.SupervisorJob) bool { return x.ID == j.ID })
	s.SupervisorRunLog = append(s.SupervisorRunLog, runstate.SupervisorRun{JobID: j.ID, Supervisor: j.Supervisor, Trigger: j.Trigger, AtTask: j.AtTask, Status: "skipped", Warning: why, At: d.now()})
	events.Emit(ctx, events.Warning{Message: fmt.Sprintf("supervisor %s skipped: %s", j.Supervisor, why)})
}

// Land applies one finished job: its documents (committed on the run branch),
// its directives, the run log, the spend, and the convergence bookkeeping.
// A failed or malformed job is a warning; the run goes on.
func (d *Runner) Land(ctx context.Context, s *runstate.State, out Outcome) error {
	job := out.Job
	// Only a job relaunched from an earlier process's record, or one landed
	// in the very step that started it (blocking mode, which a crash makes
	// run again), can find its documents already committed; a background
	// job this process started is spared the look through the branch log.
	mayBeCommitted := d.Settings.Blocking || !d.Jobs.Fresh(job.ID)
	d.Jobs.Forget(job.ID)
	s.SupervisorJobs = slices.DeleteFunc(s.SupervisorJobs, func(x runstate.SupervisorJob) bool { return x.ID == job.ID })
	run := runstate.SupervisorRun{
		JobID: job.ID, Supervisor: job.Supervisor, Trigger: job.Trigger, AtTask: job.AtTask, Bootstrap: job.Bootstrap, At: d.now(),
		PromptTokens: out.Response.Usage.PromptTokens, CompletionTokens: out.Response.Usage.CompletionTokens, CostUSD: out.Response.Usage.CostUSD,
	}
	Spend(ctx, s, d.Settings.BudgetUSD, run.CostUSD)
	s.AddUsage(job.Supervisor, totals(out.Response.Usage))
	if out.Err != nil {
		run.Status = "skipped"
		var se *llm.StructuredError
		if errors.As(out.Err, &se) {
			run.Status = "discarded"
		}
		run.Warning = out.Err.Error()
		s.SupervisorRunLog = append(s.SupervisorRunLog, run)
		events.Emit(ctx, events.Warning{Message: fmt.Sprintf("supervisor %s %s: %v", job.Supervisor, run.Status, out.Err)})
		return nil
	}

	docs, directives, findings, summary := Unpack(out)
	run.Status, run.Summary = "ok", summary
	written, warnings, err := d.writeKnowledge(ctx, s, job, docs, mayBeCommitted)
	if err != nil {
		return err
	}
	run.Docs = written
	if len(warnings) > 0 {
		run.Warning = strings.Join(warnings, "; ")
		for _, w := range warnings {
			events.Emit(ctx, events.Warning{Message: w})
		}
	}
	run.Directives = AddDirectives(s, job.Supervisor, directives, d.MaxCleanupDirectives, d.now())
	Converge(ctx, s, d.Settings, job.Supervisor, findings)
	s.SupervisorRunLog = append(s.SupervisorRunLog, run)
	events.Emit(ctx, events.SupervisorDone{Job: job.ID, Supervisor: job.Supervisor, Directives: run.Directives, Docs: run.Docs, Summary: textutil.ClipTrimmed(summary, 300), CostUSD: run.CostUSD})
	return nil
}

// Spend adds a call's cost to the run's supervisor spend (also a failed
// job's: the tokens were paid for) and warns once, when budget is reached.
func Spend(ctx context.Context, s *runstate.State, budget, cost float64) {
	before := s.SupervisorSpendUSD
	s.SupervisorSpendUSD += cost
	if budget > 0 && before < budget && s.SupervisorSpendUSD >= budget {
		events.Emit(ctx, events.Warning{Message: fmt.Sprintf("supervisor budget of $%.2f reached ($%.4f spent): no more supervisor calls this run", budget, s.SupervisorSpendUSD)})
	}
}

// writeKnowledge writes a job's documents into the work tree and commits them,
// unless an earlier process already committed this job's documents.
func (d *Runner) writeKnowledge(ctx context.Context, s *runstate.State, job runstate.SupervisorJob, docs []*knowledge.Doc, mayBeCommitted bool) ([]string, []string, error) {
	if len(docs) == 0 {
		return nil, nil, nil
	}
	if mayBeCommitted && d.jobCommitted(ctx, s, job.ID) {
		// An earlier process landed this job up to its commit: report what it
		// wrote (never what ownership refused) and write nothing again.
		store, err := d.knowledgeStore()
		var paths []string
		for _, doc := range docs {
			if !knowledge.Writer(job.Supervisor).Owns(doc.Category) || err != nil {
				continue
			}
			if _, ok := store.Get(doc.Path); ok {
				paths = append(paths, doc.Path)
			}
		}
		return paths, nil, nil
	}
	store, err := d.knowledgeStore()
	if err != nil {
		return nil, []string{"knowledge store unreadable: " + err.Error()}, nil
	}
	milestone := ""
	if m := s.ActiveMilestone(); m != nil {
		milestone = m.ID
	}
	var written, warnings []string
	for _, doc := range docs {
		err := store.Write(knowledge.Writer(job.Supervisor), doc, job.AfterTask, milestone)
		var oe *knowledge.OwnershipError
		switch {
		case errors.As(err, &oe):
			warnings = append(warnings, fmt.Sprintf("%s wrote outside its directories (%s): discarded", job.Supervisor, doc.Path))
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("%s: document %s not written: %v", job.Supervisor, doc.Path, err))
		default:
			written = append(written, doc.Path)
		}
	}
	if len(written) == 0 {
		return nil, warnings, nil
	}
	_, err = d.Work.Commit(ctx, fmt.Sprintf("knowledge: %s updated %s", job.Supervisor, strings.Join(written, ", ")),
		map[string]string{workspace.TrailerRun: s.RunID, TrailerJob: job.ID})
	if err != nil && !errors.Is(err, workspace.ErrNothingToCommit) {
		return nil, nil, fmt.Errorf("commit %s knowledge: %w", job.Supervisor, err)
	}
	return written, warnings, nil
}

func (d *Runner) jobCommitted(ctx context.Context, s *runstate.State, jobID string) bool {
	log, err := d.Work.Log(ctx, s.BaseCommit)
	if err != nil {
		return false
	}
	for _, c := range log {
		if c.Trailers[TrailerJob] == jobID {
			return true
		}
	}
	return false
}
