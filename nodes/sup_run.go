package nodes

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/workspace"
)

// TrailerSupervisorJob marks a knowledge commit with the job that wrote it, so
// a job re-run after a crash never writes its documents twice.
const TrailerSupervisorJob = "Lemmings-Supervisor-Job"

// awaitTimeout bounds how long the run waits for background supervisors
// before the polish phase; a job still running then is recorded as skipped.
const awaitTimeout = 5 * time.Minute

// RunSupervisors starts the supervisors that are due, in parallel. In the
// default background mode it returns at once and their work lands at a later
// planning round; in blocking mode it waits and lands it here.
func (d *Deps) RunSupervisors(ctx context.Context, in WorkflowState) (WorkflowState, error) {
	s := in.Clone()
	due := dueSupervisors(s, d.Settings)
	sup := d.Settings.Supervisors
	if urgencyReached(s, sup) {
		s.SupervisorUrgency = 0
	}
	if d.Supervisors == nil || len(due) == 0 {
		s.PendingTriggers = nil
		return s, nil
	}
	s.PendingTriggers = remainingTriggers(s, sup, due)
	bootstrap := d.knowledgeEmpty()
	for _, ds := range due {
		job := startJob(&s, ds, bootstrap)
		if err := d.launch(ctx, &s, job, true); err != nil {
			d.logSkipped(ctx, &s, job, err.Error())
			continue
		}
		graph.Emit(ctx, "supervisor_start", map[string]any{"job": job.ID, "supervisor": job.Supervisor, "trigger": job.Trigger, "bootstrap": bootstrap})
	}
	if sup.Blocking {
		return s, d.awaitSupervisors(ctx, &s)
	}
	return s, nil
}

// startJob records a due supervisor's run as a job in flight and resets its
// periodic counter.
func startJob(s *WorkflowState, ds DueSupervisor, bootstrap bool) SupervisorJob {
	if s.Supervisors == nil {
		s.Supervisors = map[string]SupervisorTrack{}
	}
	track := s.Supervisors[ds.Name]
	track.Runs++
	track.TasksSinceRun = 0
	track.LastRunAt = tasksSettled(*s) + 1
	s.Supervisors[ds.Name] = track
	job := SupervisorJob{
		ID:         fmt.Sprintf("%s-%d-%d", ds.Name, s.TasksCompleted, track.Runs),
		Supervisor: ds.Name, Trigger: ds.Trigger, AtTask: s.TasksCompleted, Bootstrap: bootstrap,
	}
	if n := len(s.DoneList); n > 0 {
		job.AfterTask = s.DoneList[n-1].TaskID
	}
	s.SupervisorJobs = append(s.SupervisorJobs, job)
	return job
}

func (d *Deps) knowledgeEmpty() bool {
	store, _, err := d.knowledgeStore()
	return err != nil || store.Empty()
}

// launch composes the job's prompt from the state as it is now and hands it
// to the pool. A prompt that cannot be composed (a broken template override,
// required context over the input budget) is the supervisor's failure, not
// the run's: callers log the job as skipped.
func (d *Deps) launch(ctx context.Context, s *WorkflowState, job SupervisorJob, fresh bool) error {
	in := d.supervisorInput(ctx, s, job)
	data := supervisorData{Bootstrap: job.Bootstrap, Trigger: job.Trigger}
	p, err := d.composePrompt(job.Supervisor, data, d.Settings.Supervisors.InputTokens, in)
	if err != nil {
		return err
	}
	d.Supervisors.launch(job, llm.Request{Role: RoleSupervisor, Label: job.Supervisor, Messages: p.Messages}, fresh)
	return nil
}

// landSupervisorResults merges finished jobs between tasks (never in the middle
// of one: knowledge commits must not mix with a task's work in progress).
// Jobs listed in the state but unknown to this process are relaunched.
func (d *Deps) landSupervisorResults(ctx context.Context, s *WorkflowState) error {
	if len(s.SupervisorJobs) == 0 {
		return nil
	}
	if d.Supervisors == nil {
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
		if !d.Supervisors.known(job.ID) {
			if err := d.launch(ctx, s, job, false); err != nil {
				d.logSkipped(ctx, s, job, err.Error())
				continue
			}
			graph.Emit(ctx, "supervisor_relaunch", map[string]any{"job": job.ID})
			continue
		}
		out, ok := d.Supervisors.result(job.ID)
		if !ok {
			continue
		}
		if err := d.land(ctx, s, out); err != nil {
			return err
		}
	}
	return nil
}

// awaitSupervisors waits (bounded) for every job in flight and lands it.
func (d *Deps) awaitSupervisors(ctx context.Context, s *WorkflowState) error {
	if d.Supervisors == nil {
		return d.landSupervisorResults(ctx, s)
	}
	wctx, cancel := context.WithTimeout(ctx, awaitTimeout)
	defer cancel()
	for _, job := range slices.Clone(s.SupervisorJobs) {
		if !d.Supervisors.known(job.ID) {
			if err := d.launch(ctx, s, job, false); err != nil {
				d.logSkipped(ctx, s, job, err.Error())
				continue
			}
		}
		out, ok := d.Supervisors.wait(wctx, job.ID)
		if !ok {
			if err := ctx.Err(); err != nil {
				return err
			}
			d.logSkipped(ctx, s, job, "still running after "+awaitTimeout.String())
			continue
		}
		if err := d.land(ctx, s, out); err != nil {
			return err
		}
	}
	return nil
}

func (d *Deps) logSkipped(ctx context.Context, s *WorkflowState, j SupervisorJob, why string) {
	s.SupervisorJobs = slices.DeleteFunc(s.SupervisorJobs, func(x SupervisorJob) bool { return x.ID == j.ID })
	s.SupervisorRunLog = append(s.SupervisorRunLog, SupervisorRun{JobID: j.ID, Supervisor: j.Supervisor, Trigger: j.Trigger, AtTask: j.AtTask, Status: "skipped", Warning: why, At: d.now()})
	graph.Emit(ctx, "warning", map[string]any{"message": fmt.Sprintf("supervisor %s skipped: %s", j.Supervisor, why)})
}

// land applies one finished job: its documents (committed on the run branch),
// its directives, the run log, the spend, and the convergence bookkeeping.
// A failed or malformed job is a warning; the run goes on.
func (d *Deps) land(ctx context.Context, s *WorkflowState, out supervisorOutcome) error {
	job := out.Job
	// Only a job relaunched from an earlier process's record, or one landed
	// in the very step that started it (blocking mode, which a crash makes
	// run again), can find its documents already committed; a background
	// job this process started is spared the look through the branch log.
	mayBeCommitted := d.Settings.Supervisors.Blocking || !d.Supervisors.fresh(job.ID)
	d.Supervisors.forget(job.ID)
	s.SupervisorJobs = slices.DeleteFunc(s.SupervisorJobs, func(x SupervisorJob) bool { return x.ID == job.ID })
	run := SupervisorRun{
		JobID: job.ID, Supervisor: job.Supervisor, Trigger: job.Trigger, AtTask: job.AtTask, Bootstrap: job.Bootstrap, At: d.now(),
		PromptTokens: out.Response.Usage.PromptTokens, CompletionTokens: out.Response.Usage.CompletionTokens, CostUSD: out.Response.Usage.CostUSD,
	}
	d.spend(ctx, s, run.CostUSD)
	s.AddUsage(job.Supervisor, totals(out.Response.Usage))
	if out.Err != nil {
		run.Status = "skipped"
		var se *llm.StructuredError
		if errors.As(out.Err, &se) {
			run.Status = "discarded"
		}
		run.Warning = out.Err.Error()
		s.SupervisorRunLog = append(s.SupervisorRunLog, run)
		graph.Emit(ctx, "warning", map[string]any{"message": fmt.Sprintf("supervisor %s %s: %v", job.Supervisor, run.Status, out.Err)})
		return nil
	}

	docs, directives, findings, summary := d.unpack(out)
	run.Status, run.Summary = "ok", summary
	written, warnings, err := d.writeKnowledge(ctx, s, job, docs, mayBeCommitted)
	if err != nil {
		return err
	}
	run.Docs = written
	if len(warnings) > 0 {
		run.Warning = strings.Join(warnings, "; ")
		for _, w := range warnings {
			graph.Emit(ctx, "warning", map[string]any{"message": w})
		}
	}
	run.Directives = addDirectives(s, job.Supervisor, directives, d.Settings.MaxCleanupDirectives, d.now())
	d.converge(ctx, s, job.Supervisor, findings)
	s.SupervisorRunLog = append(s.SupervisorRunLog, run)
	graph.Emit(ctx, "supervisor_done", map[string]any{"job": job.ID, "supervisor": job.Supervisor, "directives": run.Directives, "docs": run.Docs, "summary": clip(summary, 300), "cost_usd": run.CostUSD})
	return nil
}

// spend adds a job's cost (also a failed job's: the tokens were paid for)
// and warns once, when the run's supervisor budget is reached.
func (d *Deps) spend(ctx context.Context, s *WorkflowState, cost float64) {
	before := s.SupervisorSpendUSD
	s.SupervisorSpendUSD += cost
	if b := d.Settings.Supervisors.BudgetUSD; b > 0 && before < b && s.SupervisorSpendUSD >= b {
		graph.Emit(ctx, "warning", map[string]any{"message": fmt.Sprintf("supervisor budget of $%.2f reached ($%.4f spent): no more supervisor calls this run", b, s.SupervisorSpendUSD)})
	}
}

// unpack turns a supervisor's reply into documents and directives.
func (d *Deps) unpack(out supervisorOutcome) ([]*knowledge.Doc, []Directive, []string, string) {
	var docs []*knowledge.Doc
	var dirs []Directive
	toDirs := func(specs []directiveSpec) {
		for _, sp := range specs {
			dirs = append(dirs, Directive{Type: sp.Type, Description: sp.Description, Rationale: sp.Rationale, Priority: sp.Priority, Files: sp.Files})
		}
	}
	switch {
	case out.CodeStyle != nil:
		r := out.CodeStyle
		for _, sp := range r.Docs {
			docs = append(docs, specDoc("conventions", sp))
		}
		toDirs(r.Directives)
		return docs, dirs, r.Findings, r.Summary
	case out.Design != nil:
		r := out.Design
		for _, sp := range r.Docs {
			docs = append(docs, specDoc("design", sp))
		}
		toDirs(r.Directives)
		return docs, dirs, r.Findings, r.Summary
	case out.Intern != nil:
		r := out.Intern
		var findings []string
		for _, it := range r.KnowledgeItems {
			cat := "lessons"
			if it.Category == "domain" {
				cat = "domain"
			}
			rules := splitRules(it.Content)
			doc := specDoc(cat, docSpec{Path: slug(it.Title) + ".md", Title: it.Title, Rules: rules,
				Rationale: fmt.Sprintf("Captured from task %s (confidence: %s).", firstNonEmpty(it.SourceTask, "?"), it.Confidence)})
			if it.NeedsUserReview {
				doc.Rationale += " Needs user review: an implicit decision worth confirming."
			}
			docs = append(docs, doc)
			findings = append(findings, strings.ToLower(it.Title))
		}
		return docs, nil, findings, r.Summary
	}
	return nil, nil, nil, ""
}

func splitRules(content string) []string {
	var rules []string
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*0123456789.) "))
		if line != "" {
			rules = append(rules, line)
		}
	}
	if len(rules) == 0 {
		rules = []string{strings.TrimSpace(content)}
	}
	return rules
}

// specDoc places a supervisor's document in the category it declares; the
// store refuses it if that is not the supervisor's own directory.
func specDoc(category string, sp docSpec) *knowledge.Doc {
	p := path.Clean(strings.TrimPrefix(strings.TrimSpace(sp.Path), "docs/knowledge/"))
	if !strings.Contains(p, "/") {
		p = category + "/" + p
	}
	if !strings.HasSuffix(p, ".md") {
		p += ".md"
	}
	var rules strings.Builder
	for i, r := range sp.Rules {
		fmt.Fprintf(&rules, "%d. %s\n", i+1, strings.TrimSpace(r))
	}
	cat, _, _ := strings.Cut(p, "/")
	return &knowledge.Doc{Path: p, Category: cat, Title: sp.Title, Rules: strings.TrimSpace(rules.String()),
		Examples: sp.Examples, Rationale: sp.Rationale, Themes: sp.Themes}
}

func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if b.Len() >= 48 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "note"
	}
	return out
}

// writeKnowledge writes a job's documents into the work tree and commits them,
// unless an earlier process already committed this job's documents.
func (d *Deps) writeKnowledge(ctx context.Context, s *WorkflowState, job SupervisorJob, docs []*knowledge.Doc, mayBeCommitted bool) ([]string, []string, error) {
	if len(docs) == 0 {
		return nil, nil, nil
	}
	if mayBeCommitted && d.jobCommitted(ctx, s, job.ID) {
		// An earlier process landed this job up to its commit: report what it
		// wrote (never what ownership refused) and write nothing again.
		store, _, err := d.knowledgeStore()
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
	store, _, err := d.knowledgeStore()
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
		map[string]string{TrailerRun: s.RunID, TrailerSupervisorJob: job.ID})
	if err != nil && !errors.Is(err, workspace.ErrNothingToCommit) {
		return nil, nil, fmt.Errorf("commit %s knowledge: %w", job.Supervisor, err)
	}
	return written, warnings, nil
}

func (d *Deps) jobCommitted(ctx context.Context, s *WorkflowState, jobID string) bool {
	log, err := d.Work.Log(ctx, s.BaseCommit)
	if err != nil {
		return false
	}
	for _, c := range log {
		if c.Trailers[TrailerSupervisorJob] == jobID {
			return true
		}
	}
	return false
}

// converge compares a run's findings with the previous run's: when few are
// new, the supervisor is converging and its interval doubles
// (docs/supervisors.md, "Convergence").
func (d *Deps) converge(ctx context.Context, s *WorkflowState, name string, findings []string) {
	track := s.Supervisors[name]
	norm := make([]string, 0, len(findings))
	for _, f := range findings {
		if f = strings.ToLower(strings.TrimSpace(f)); f != "" {
			norm = append(norm, f)
		}
	}
	if track.Runs > 1 && track.LastFindings != nil {
		newCount := 0
		for _, f := range norm {
			if !slices.Contains(track.LastFindings, f) {
				newCount++
			}
		}
		share := 0.0
		if len(norm) > 0 {
			share = float64(newCount) / float64(len(norm))
		}
		sup := d.Settings.Supervisors
		base := sup.kind(name).Interval
		if share < sup.ConvergenceThreshold && base > 0 {
			cur := max(track.Interval, base)
			track.Interval = min(cur*2, max(sup.MaxInterval, base))
			track.Converging = true
			graph.Emit(ctx, "supervisor_converging", map[string]any{"supervisor": name, "interval": track.Interval, "new_share": share})
		} else {
			track.Interval, track.Converging = 0, false
		}
	}
	track.LastFindings = norm
	if s.Supervisors == nil {
		s.Supervisors = map[string]SupervisorTrack{}
	}
	s.Supervisors[name] = track
}
