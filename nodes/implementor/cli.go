package implementor

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/codingcli"
	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// LabelCLI is the usage label of the coding CLI's runs (report, progress).
const LabelCLI = "implementor_cli"

// CLISettings configure implementor.backend: cli. Settings.CLI is nil for
// lemmings' own loop.
type CLISettings struct {
	Preset  string
	Command []string
	Format  string
	Model   string
	Timeout time.Duration
	// Env is as configured: ${VAR} is expanded from lemmings' environment
	// when the CLI starts.
	Env       map[string]string
	PassEnv   []string
	BudgetUSD float64
	// DataDir is lemmings' own folder in the repository (run.DataDir),
	// watched like the rest of the checkout for writes the CLI must not make.
	DataDir string
}

// CLIError says why the configured coding CLI cannot run, and what to do.
type CLIError struct {
	Name string
	// Config: fixed by changing the configuration (an unknown preset, a
	// ${VAR} that is not set); otherwise the CLI is missing or not set up.
	Config bool
	Cause  string
	Fix    string
}

func (e *CLIError) Error() string {
	msg := fmt.Sprintf("implementor.backend is cli, but coding CLI %s cannot run: %s", e.Name, e.Cause)
	if e.Fix != "" {
		msg += "\nfix: " + e.Fix
	}
	return msg
}

// Worker resolves the preset and command line, and the CLI's own
// environment (lookup reads lemmings' environment).
func (c *CLISettings) Worker(lookup func(string) (string, bool)) (codingcli.Preset, map[string]string, error) {
	var p codingcli.Preset
	if c.Preset != "" {
		var ok bool
		if p, ok = codingcli.Lookup(c.Preset); !ok {
			return p, nil, &CLIError{Name: c.Preset, Config: true, Cause: "this build of lemmings has no preset " + c.Preset + " (implementor.cli.preset)",
				Fix: "use one of " + strings.Join(codingcli.Names(), ", ") + ", or set implementor.cli.command"}
		}
		p.Args, p.Env = slices.Clone(p.Args), slices.Clone(p.Env)
	}
	if len(c.Command) > 0 {
		if p.Name == "" {
			p.Name, p.Format = filepath.Base(c.Command[0]), codingcli.FormatText
			p.Install = "install " + c.Command[0] + ", or fix implementor.cli.command"
		}
		p.Args = slices.Clone(c.Command)
		// No {prompt} in the command line: the prompt goes on standard input.
		p.Stdin = !slices.ContainsFunc(p.Args, func(a string) bool { return strings.Contains(a, "{prompt}") })
	}
	if c.Format != "" {
		p.Format = codingcli.Format(c.Format)
	}
	p.Env = append(p.Env, c.PassEnv...)
	env, err := config.ExpandCLIEnv(c.Env, lookup)
	if err != nil {
		return p, nil, &CLIError{Name: p.Name, Config: true, Cause: err.Error(), Fix: "set the variable in lemmings' environment, or change implementor.cli.env"}
	}
	return p, env, nil
}

// cliAttempt is one attempt by the coding CLI: a fresh run on the task, then
// the gates inside the attempt (a failure goes to a fresh run with the
// summarised output, up to FixRounds), as lemmings' own loop does.
func (d *Deps) cliAttempt(ctx context.Context, s *runstate.State, t *runstate.Task) (*runstate.ImplResult, error) {
	preset, env, err := d.Settings.CLI.Worker(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	repo := d.Work.Repo()
	before, err := snapshotOutside(ctx, repo, d.Work, d.Settings.CLI.DataDir)
	if err != nil {
		return nil, fmt.Errorf("implementor: record the world outside the work tree: %w", err)
	}
	res := &runstate.ImplResult{}
	gateFeedback := ""
	for round := 0; ; round++ {
		if left, limited := d.Clock.WallTimeLeft(s, d.Clock.Now()); limited && left <= 0 {
			if round == 0 {
				return &runstate.ImplResult{Status: runstate.ImplExhausted, Summary: d.Clock.WallTimeReached()}, nil
			}
			break // the work done so far goes to QA
		}
		if reason := d.cliBudgetSpent(s); reason != "" {
			if round == 0 {
				s.SetStop(runstate.LimitStop(runstate.KeyCLIBudget, reason))
				return &runstate.ImplResult{Status: runstate.ImplExhausted, Summary: reason}, nil
			}
			break // the work paid for so far goes to QA
		}
		prompt, err := d.cliPrompt(ctx, s, t, gateFeedback)
		if err != nil {
			return nil, err
		}
		run, err := d.runCLI(ctx, s, t, preset, env, prompt, round)
		if err != nil {
			return nil, err
		}
		if reason := d.cliBudgetSpent(s); reason != "" && s.StopReason == "" {
			// No new task after this one; its work still goes to QA.
			s.SetStop(runstate.LimitStop(runstate.KeyCLIBudget, reason))
			d.emit(ctx, events.Warning{Message: reason + ": the run stops after this task"})
		}
		res.Actions += run.ToolCalls
		res.Summary = textutil.FirstNonEmpty(run.Final, res.Summary)
		dropped, err := d.keepCLIChanges(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("implementor: take the CLI's work: %w", err)
		}
		if escaped := before.changes(ctx, repo, d.Work); len(escaped) > 0 {
			d.emit(ctx, events.CLIOutside{Task: t.ID, Attempt: t.Attempt, Changes: escaped})
			return &runstate.ImplResult{Status: runstate.ImplError, Actions: res.Actions, Summary: "the coding CLI changed things outside the work tree (" + strings.Join(escaped, "; ") +
				"): the attempt is void. Change files only inside the current directory, and no git refs"}, nil
		}
		if dropped > 0 {
			d.emit(ctx, events.CLICommitsDropped{Task: t.ID, Attempt: t.Attempt, Commits: dropped})
		}
		if left, limited := d.Clock.WallTimeLeft(s, d.Clock.Now()); run.TimedOut && limited && left <= 0 {
			return &runstate.ImplResult{Status: runstate.ImplExhausted, Actions: res.Actions, Summary: d.Clock.WallTimeReached() + " while the coding CLI worked: it was stopped"}, nil
		}
		if failed := cliFailure(preset.Name, run, d.Settings.CLI.Timeout); failed != nil {
			failed.Actions = res.Actions
			return failed, nil
		}
		diff, _, err := d.Work.Changes(ctx, t.AttemptBase)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(diff) == "" {
			return &runstate.ImplResult{Status: runstate.ImplBlocked, Actions: res.Actions, Summary: "the coding CLI changed no file; it said: " + textutil.ClipTrimmed(textutil.FirstNonEmpty(run.Final, "(nothing)"), 500)}, nil
		}
		feedback, again, err := d.cliGates(ctx, t, res, round)
		if err != nil {
			return nil, err
		}
		if !again {
			break
		}
		gateFeedback = feedback
	}
	res.Status = runstate.ImplFinished
	res.Summary = textutil.FirstNonEmpty(res.Summary, "the coding CLI finished")
	return res, nil
}

// cliGates runs the gates on the CLI's work of a round: their pass is kept
// for QA; a failure with fix rounds left is the next round's feedback
// (again), else QA judges the work and says what failed.
func (d *Deps) cliGates(ctx context.Context, t *runstate.Task, res *runstate.ImplResult, round int) (feedback string, again bool, err error) {
	if d.Settings.FixRounds <= 0 || len(d.Gates) == 0 {
		return "", false, nil
	}
	dir := d.Work.Dir()
	results := workspace.RunGates(ctx, d.Sandbox, dir, d.Gates, d.Settings.GateOutputBytes)
	for _, r := range results {
		d.emitGate(ctx, t, "cli", r)
	}
	if ctx.Err() != nil {
		return "", false, ctx.Err()
	}
	if workspace.AllPassed(results) {
		// QA reuses these results when the attempt's diff (from the task's
		// start, as wipCommit hashes it) is the same.
		whole, _, err := d.Work.Changes(ctx, t.StartCommit)
		if err != nil {
			return "", false, err
		}
		res.GatesDiffHash = workspace.DiffHash(whole)
		for _, r := range results {
			res.Gates = append(res.Gates, runstate.GateOutcome{Name: r.Name, Command: r.Command, Passed: r.Passed, ExitCode: r.ExitCode, Duration: r.Duration, Output: r.Output})
		}
		return "", false, nil
	}
	failedGate := results[len(results)-1]
	if failedGate.Canceled || round >= d.Settings.FixRounds {
		return "", false, nil
	}
	res.FixRounds++
	return fmt.Sprintf("Your change is in the work tree, but a check fails (fix round %d of %d). Fix the cause; keep what works.\n%s",
		res.FixRounds, d.Settings.FixRounds, failedGate.ModelFeedback(dir, workspace.DefaultSummaryBytes)), true, nil
}

// runCLI runs the CLI once, logs what it reports and counts what it spent.
func (d *Deps) runCLI(ctx context.Context, s *runstate.State, t *runstate.Task, p codingcli.Preset, env map[string]string, prompt string, round int) (codingcli.Result, error) {
	start := time.Now()
	timeout := d.Settings.CLI.Timeout
	if left, limited := d.Clock.WallTimeLeft(s, d.Clock.Now()); limited && (timeout <= 0 || left < timeout) {
		timeout = max(left, time.Second) // the run's wall time ends first
	}
	d.emit(ctx, events.CLIStart{Task: t.ID, Attempt: t.Attempt, Round: round, CLI: p.Name, PromptChars: len(prompt)})
	run, err := codingcli.Run(ctx, p, codingcli.Request{
		Dir: d.Work.Dir(), Prompt: prompt, Model: d.Settings.CLI.Model, Timeout: timeout, Env: env, Sandbox: d.Sandbox,
		OnEvent: func(ev codingcli.Event) {
			if ev.Kind == codingcli.EventToolCall || ev.Kind == codingcli.EventError {
				d.emit(ctx, events.CLIEvent{Task: t.ID, EventKind: string(ev.Kind), Tool: ev.Tool, Text: textutil.ClipTrimmed(ev.Text, 300)})
			}
		},
	})
	elapsed := time.Since(start)
	for _, w := range run.Warnings {
		d.emit(ctx, events.Warning{Message: "coding CLI " + p.Name + ": " + w})
	}
	if err != nil && ctx.Err() != nil {
		return run, ctx.Err() // interrupted: the step runs again on resume
	}
	if err != nil {
		// Not even started (gone from PATH since the check): the attempt
		// fails with the reason, the run goes on.
		run = codingcli.Result{ExitCode: -1, Failed: err.Error()}
	}
	u := run.Usage
	s.AddUsage(LabelCLI, runstate.UsageTotals{Calls: 1, PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, CostUSD: u.CostUSD, Elapsed: elapsed})
	ev := events.CLIRun{Task: t.ID, Attempt: t.Attempt, Round: round, CLI: p.Name, ExitCode: run.ExitCode, TimedOut: run.TimedOut,
		ToolCalls: run.ToolCalls, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostUSD: u.CostUSD,
		DurationMS: elapsed.Milliseconds(), Final: textutil.ClipTrimmed(run.Final, 500), UnparsedLines: run.Unparsed}
	if run.Failed != "" {
		ev.Failed = textutil.ClipTrimmed(run.Failed, 500) // omitted when empty, as before
	}
	if run.Stderr != "" && (run.ExitCode != 0 || run.TimedOut || run.Failed != "") {
		ev.Stderr = textutil.ClipTrimmed(run.Stderr, 2000)
	}
	d.emit(ctx, ev)
	return run, nil
}

// cliFailure is the attempt's end when the CLI did not finish well, or nil.
func cliFailure(name string, run codingcli.Result, timeout time.Duration) *runstate.ImplResult {
	tail := func() string {
		if s := strings.TrimSpace(run.Stderr); s != "" {
			return "; its last output: " + textutil.ClipTrimmed(lastLines(s, 5), 600)
		}
		return ""
	}
	switch {
	case run.TimedOut:
		return &runstate.ImplResult{Status: runstate.ImplExhausted, Summary: fmt.Sprintf("the coding CLI %s did not finish within %s (implementor.cli.timeout) and was killed with the processes it started; do less, or the part that matters first", name, timeout)}
	case run.ExitCode != 0:
		return &runstate.ImplResult{Status: runstate.ImplError, Summary: fmt.Sprintf("the coding CLI %s exited with code %d%s%s", name, run.ExitCode, prefixed(": ", run.Failed), tail())}
	case run.Failed != "":
		return &runstate.ImplResult{Status: runstate.ImplError, Summary: fmt.Sprintf("the coding CLI %s reported an error: %s", name, textutil.ClipTrimmed(run.Failed, 600))}
	}
	return nil
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + textutil.ClipTrimmed(s, 600)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// cliBudgetSpent says why no more CLI runs may start ("" while they may).
func (d *Deps) cliBudgetSpent(s *runstate.State) string {
	b := d.Settings.CLI.BudgetUSD
	if spent := s.Usage[LabelCLI].CostUSD; b > 0 && spent >= b {
		return fmt.Sprintf("the coding CLI has spent $%.4f of its budget of $%.2f (implementor.cli.budget_usd)", spent, b)
	}
	return ""
}

// cliPrompt renders the attempt's prompt: the role template, the task, the
// feedback of the last attempt (and of the last failing gate), the
// knowledge, the directive the task serves and the checks, packed to the
// implementor's budget.
func (d *Deps) cliPrompt(ctx context.Context, s *runstate.State, t *runstate.Task, gateFeedback string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", t.ID, t.Title)
	prompts.WriteTask(&b, t.Instructions, t.AcceptanceCriteria, t.TargetFiles)
	secs := []llm.Section{
		{Title: prompts.SecTask, Body: strings.TrimSpace(b.String()), Required: true},
		d.Prompts.Milestone(s),
	}
	if dir := directiveOf(s, t); dir != "" {
		secs = append(secs, llm.Section{Title: prompts.SecServedDirective, Body: dir, Required: true})
	}
	if t.Feedback != "" {
		secs = append(secs, llm.Section{Title: prompts.SecFeedback, Body: t.Feedback, Required: true})
	}
	if gateFeedback != "" {
		secs = append(secs, llm.Section{Title: prompts.SecFailingCheck, Body: gateFeedback, Required: true})
	}
	secs = append(secs, d.Prompts.Knowledge(ctx, s),
		llm.Section{Title: prompts.SecChecks, Body: prompts.GateList(d.Gates), Priority: prompts.PrioOverview})
	p, err := d.Prompts.ComposeAlone(runstate.NodeImplementor+"_cli", nil, d.Settings.Budget, secs)
	if err != nil {
		return "", fmt.Errorf("compose the coding CLI's prompt: %w", err)
	}
	if len(p.Dropped) > 0 {
		d.emit(ctx, events.PromptPacked{Label: LabelCLI, Dropped: p.Dropped, Tokens: p.Tokens})
	}
	parts := make([]string, 0, len(p.Messages))
	for _, m := range p.Messages {
		parts = append(parts, strings.TrimSpace(m.Content))
	}
	return strings.Join(parts, "\n\n") + "\n", nil
}

// directiveOf describes the supervisor directive a task addresses, if any.
func directiveOf(s *runstate.State, t *runstate.Task) string {
	if t.DirectiveID == "" {
		return ""
	}
	for _, d := range s.PendingDirectives {
		if d.ID == t.DirectiveID {
			return prompts.DirectiveLine(d)
		}
	}
	return ""
}

// keepCLIChanges puts the work tree back on the run's branch at the
// attempt's base with the CLI's changes uncommitted: lemmings makes the
// commits. It returns how many commits of the CLI's were dropped.
func (d *Deps) keepCLIChanges(ctx context.Context, t *runstate.Task) (int, error) {
	if err := d.Work.Reattach(ctx); err != nil {
		return 0, err
	}
	head, err := d.Work.Head(ctx)
	if err != nil || head == t.AttemptBase {
		return 0, err
	}
	// Counted for the event only: a CLI that reset the branch below the
	// base has no commits after it, yet HEAD still goes back.
	commits, _ := d.Work.Log(ctx, t.AttemptBase)
	if err := d.Work.ResetSoft(ctx, t.AttemptBase); err != nil {
		return 0, err
	}
	return max(len(commits), 1), nil
}

// outside is what the CLI must not change: the user's checkout (HEAD and
// status), every ref but the run's branch, and the entries next to the work
// tree and in .lemmings/.
type outside struct {
	dataDirName string
	userHead    string
	userDirty   map[string]string
	refs        map[string]string
	siblings    map[string]string
	dataDir     map[string]string
}

func snapshotOutside(ctx context.Context, repo *workspace.Repo, wt *workspace.Worktree, dataDir string) (outside, error) {
	o := outside{dataDirName: dataDir, userDirty: map[string]string{}}
	var err error
	if o.userHead, err = repo.HeadCommit(ctx); err != nil {
		return o, err
	}
	dirty, err := repo.Dirty(ctx)
	if err != nil {
		return o, err
	}
	for _, p := range dirty {
		o.userDirty[p] = ""
	}
	if o.refs, err = repo.Refs(ctx); err != nil {
		return o, err
	}
	delete(o.refs, "refs/heads/"+wt.Branch()) // the run's own branch moves with the work
	o.siblings = dirEntries(filepath.Dir(wt.Dir()), filepath.Base(wt.Dir()), true)
	if dataDir != "" {
		o.dataDir = dirEntries(filepath.Join(repo.Root(), dataDir), "", false)
	}
	return o, nil
}

// dirEntries lists a directory's entries; with files, a regular file's size and
// time are part of its entry (a changed file shows).
func dirEntries(dir, skip string, files bool) map[string]string {
	out := map[string]string{}
	des, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, de := range des {
		if de.Name() == skip {
			continue
		}
		out[de.Name()] = ""
		if info, err := de.Info(); err == nil && files && info.Mode().IsRegular() {
			out[de.Name()] = fmt.Sprintf("%d %d", info.Size(), info.ModTime().UnixNano())
		}
	}
	return out
}

// changes lists what differs from the snapshot, each in a few words.
func (o outside) changes(ctx context.Context, repo *workspace.Repo, wt *workspace.Worktree) []string {
	now, err := snapshotOutside(ctx, repo, wt, o.dataDirName)
	if err != nil {
		return []string{"could not check: " + err.Error()}
	}
	var out []string
	if now.userHead != o.userHead {
		out = append(out, fmt.Sprintf("your checkout's HEAD moved from %.10s to %.10s", o.userHead, now.userHead))
	}
	out = append(out, mapChanges("file in your checkout", o.userDirty, now.userDirty)...)
	out = append(out, mapChanges("ref", o.refs, now.refs)...)
	out = append(out, mapChanges("next to the work tree:", o.siblings, now.siblings)...)
	out = append(out, mapChanges(o.dataDirName+"/", o.dataDir, now.dataDir)...)
	return out
}

func mapChanges(what string, before, after map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(after)) {
		v, ok := before[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("new %s %s", what, k))
		case v != after[k]:
			out = append(out, fmt.Sprintf("changed %s %s", what, k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[k]; !ok {
			out = append(out, fmt.Sprintf("removed %s %s", what, k))
		}
	}
	return out
}
