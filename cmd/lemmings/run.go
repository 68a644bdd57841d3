package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/termprogress"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/runview"
)

func newRunCmd(a *app) *cobra.Command {
	var plan, approve, remitFile, runID string
	var planExample, quick, full bool
	cmd := &cobra.Command{
		Use:   `run "remit"`,
		Short: "Carry out a remit on the repository (on a new branch, in a worktree)",
		Long: `Carry out a remit: the ScopeAgent plans milestones, then tasks are planned, implemented,
checked by the gates (build, vet, test…) and reviewed, and each one that passes is committed
on the branch lemmings/<run-id>. A remit that is one task (or --quick) goes straight to the
Implementor, without planning (docs/costs.md). Your checkout is never touched. Ctrl-C stops cleanly;
lemmings resume continues.`,
		Args: remitArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if planExample {
				if a.jsonOut {
					return usageErr("--plan-example has no JSON form: it prints a commented YAML file")
				}
				_, err := fmt.Fprint(a.stdout, nodes.PlanExample)
				return err
			}
			remit := ""
			if len(args) == 1 {
				remit = strings.TrimSpace(args[0])
			}
			if remitFile != "" && len(args) == 1 {
				return usageErr("give the remit as an argument or with --remit-file, not both")
			}
			if remit == "" && plan == "" && remitFile == "" {
				return usageErr(`give a remit: lemmings run "what to do" (or --remit-file FILE, or --plan plan.yaml)`)
			}
			if quick && full {
				return usageErr("--quick and --full exclude each other")
			}
			if approve != "" && approve != "milestones" && approve != "tasks" {
				return usageErr("--approve takes milestones or tasks, not %q", approve)
			}
			if plan != "" {
				abs, err := filepath.Abs(plan)
				if err != nil {
					return usageErr("--plan %s: %v", plan, err)
				}
				plan = abs
				if _, err := nodes.LoadPlan(plan); err != nil {
					return usageErr("%v (lemmings run --plan-example prints a plan to start from)", err)
				}
			}
			root, err := a.gitRoot(cmd.Context())
			if err != nil {
				return err
			}
			cfg, _, err := a.loadRunConfig(root)
			if err != nil {
				return err
			}
			// Refused before any run or worktree exists: a remit over the
			// limit, a prompt template that would fail mid-run.
			if remitFile != "" {
				if remit, err = readRemit(remitFile, cmd.InOrStdin(), cfg.Limits.RemitBytes); err != nil {
					return err
				}
			}
			if err := run.CheckRemit(remit, cfg.Limits.RemitBytes); err != nil {
				return usageErr("%v", err)
			}
			if _, err := run.CheckPrompts(root, cfg); err != nil {
				return usageErr("%v", err)
			}
			switch {
			case quick:
				cfg.Pipeline.Mode = nodes.PipelineQuick
			case full:
				cfg.Pipeline.Mode = nodes.PipelineFull
			}
			a.warnUncommitted(cmd.Context(), root)
			return a.drive(cmd.Context(), func(ctx context.Context, o run.Options) (run.Result, error) {
				o.Remit, o.PlanFile, o.Approve, o.RunID = remit, plan, approve, runID
				return run.Start(ctx, o)
			}, root, cfg)
		},
	}
	cmd.Flags().StringVar(&remitFile, "remit-file", "", "read the remit from a file (- reads standard input); at most limits.remit_bytes")
	cmd.Flags().StringVar(&plan, "plan", "", "operator plan (YAML): milestones with tasks and acceptance criteria; skips the ScopeAgent")
	cmd.Flags().BoolVar(&planExample, "plan-example", false, "print an example --plan file and exit")
	cmd.Flags().StringVar(&approve, "approve", "", "pause for a human: milestones (after planning) or tasks (before each task)")
	cmd.Flags().BoolVar(&quick, "quick", false, "the remit is one task: straight to the Implementor, no planning; if it does not pass, the task fails rather than being planned (pipeline.mode: quick)")
	cmd.Flags().BoolVar(&full, "full", false, "plan milestones and tasks whatever the remit looks like (pipeline.mode: full)")
	// lemmings mcp names the runs it starts as detached processes, to answer
	// with the id at once.
	cmd.Flags().StringVar(&runID, "run-id", "", "name of the new run (default: its start time and a random suffix)")
	_ = cmd.Flags().MarkHidden("run-id")
	return cmd
}

// readRemit reads a remit from a file or, for "-", from stdin, reading no
// more than one byte past the limit.
func readRemit(name string, stdin io.Reader, limit int) (string, error) {
	src := stdin
	shown := "standard input"
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", usageErr("--remit-file: %v", err)
		}
		defer f.Close()
		src, shown = f, name
	}
	if limit <= 0 {
		limit = 1 << 30
	}
	data, err := io.ReadAll(io.LimitReader(src, int64(limit)+1))
	if err != nil {
		return "", usageErr("--remit-file %s: %v", shown, err)
	}
	if len(data) > limit {
		size := 0 // standard input is read no further than the limit
		if f, ok := src.(*os.File); ok && name != "-" {
			if fi, err := f.Stat(); err == nil {
				size = int(fi.Size())
			}
		}
		return "", usageErr("--remit-file %s: %v", shown, &run.RemitError{Size: size, Limit: limit})
	}
	remit := strings.TrimSpace(string(data))
	if remit == "" {
		return "", usageErr("--remit-file %s is empty: write what to do in it", shown)
	}
	return remit, nil
}

func newResumeCmd(a *app) *cobra.Command {
	var approve bool
	var reject, approveMode string
	cmd := &cobra.Command{
		Use:   "resume [run-id]",
		Short: "Continue a paused, stopped, interrupted, crashed or failed run from its last checkpoint",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if approve && cmd.Flags().Changed("reject") {
				return usageErr("--approve and --reject exclude each other")
			}
			if cmd.Flags().Changed("reject") && strings.TrimSpace(reject) == "" {
				return usageErr(`--reject needs a reason: lemmings resume --reject "why"`)
			}
			if approveMode != "" && approveMode != "milestones" && approveMode != "tasks" && approveMode != "none" {
				return usageErr("--approve-mode takes milestones, tasks or none, not %q", approveMode)
			}
			root, err := a.gitRoot(cmd.Context())
			if err != nil {
				return err
			}
			id := ""
			if len(args) == 1 {
				if id, err = a.pickRun(cmd.Context(), root, args, nil); err != nil {
					return err
				}
			} else if id, err = run.LatestResumable(cmd.Context(), root); err != nil {
				return err
			} else if store, err := inspect.Open(root); err == nil {
				warnDamaged(cmd.Context(), store, id, a.stderr)
			}
			// The run goes on with the choices it was started with; a flag
			// given now overrides one and is recorded.
			flags, err := run.LoadChoices(root, id)
			if err != nil {
				return err
			}
			if flags == nil {
				flags = run.Choices{}
			}
			maps.Copy(flags, a.resumeOverrides(cmd))
			cfg, _, err := a.loadConfigFor(root, true, flags)
			if err != nil {
				return err
			}
			var decision *runstate.Approval
			if approve || reject != "" {
				kind, err := pausedFor(cmd.Context(), root, id)
				if err != nil {
					return err
				}
				decision = &runstate.Approval{Kind: kind, Approved: approve, Reason: reject}
			}
			return a.drive(cmd.Context(), func(ctx context.Context, o run.Options) (run.Result, error) {
				o.RunID, o.Decision, o.Approve = id, decision, approveMode
				return run.Resume(ctx, o)
			}, root, cfg)
		},
	}
	cmd.Flags().BoolVar(&approve, "approve", false, "approve what the run paused for")
	cmd.Flags().StringVar(&reject, "reject", "", "reject what the run paused for, saying why")
	cmd.Flags().StringVar(&approveMode, "approve-mode", "", "change the run's approval pauses: milestones, tasks or none (default: as the run was started)")
	return cmd
}

// resumeOverrides are the global flags given to resume, as config keys: those
// of flagOverrides, and --offline=false or --no-supervisors=false when given
// to undo a recorded choice.
func (a *app) resumeOverrides(cmd *cobra.Command) map[string]string {
	f := a.flagOverrides()
	if cmd.Flags().Changed("offline") {
		f["offline"] = strconv.FormatBool(a.offline)
	}
	if cmd.Flags().Changed("no-supervisors") {
		f["supervisors.enabled"] = strconv.FormatBool(!a.noSupervisors)
	}
	return f
}

// pausedFor says what a paused run waits for: the milestones or a task.
func pausedFor(ctx context.Context, root, id string) (string, error) {
	store, err := inspect.Open(root)
	if err != nil {
		return "", err
	}
	if id == "" {
		if id, err = run.LatestResumable(ctx, root); err != nil {
			return "", err
		}
	}
	snap, err := store.Snapshot(ctx, id)
	if err != nil {
		return "", err
	}
	kind, err := inspect.PausedFor(snap)
	if errors.Is(err, inspect.ErrNotPaused) {
		return "", usageErr("%v", err)
	}
	return kind, err
}

// drive runs (or resumes) with signals, progress and the closing summary.
func (a *app) drive(parent context.Context, start func(context.Context, run.Options) (run.Result, error), root string, cfg *config.Config) error {
	if err := cliUsable(cfg); err != nil {
		return err // before a worktree or a model call
	}
	a.warnCLILogin(cfg)
	ctx, stopping, stop := a.stoppable(parent)
	defer stop()
	prog := termprogress.New(a.stdout, a.jsonOut)
	prog.Verbose = a.verbose
	o := run.Options{RepoDir: root, Config: cfg, Sinks: []graph.Sink{prog}, Warn: a.stderr, Choices: run.ChoicesOf(cfg), Redactor: a.red,
		Stopping: stopping}
	res, err := start(ctx, o)
	prog.Close()
	if res.RunID == "" && err != nil {
		return err // could not start: the error says why and what to do
	}
	a.summarize(res, err)
	return runExit(res.Standing, err)
}

func (a *app) summarize(res run.Result, err error) {
	v := runview.Of(&res.State, res.Standing)
	st := v.Standing
	if a.jsonOut {
		out := map[string]any{"kind": "result", "run_id": res.RunID, "status": st.Status, "reason": st.Reason, "next": st.Next,
			"resumable": st.Resumable, "stored_status": res.Status, "outcome": v.Outcome,
			"branch": res.Branch, "report": v.ReportPath, "tasks_completed": v.Tasks.Completed, "tasks_failed": v.Tasks.Failed}
		if v.StopReason != "" {
			out["stop_reason"] = v.StopReason
		}
		if v.Evidence != "" {
			out["evidence"] = v.Evidence
		}
		if err != nil && !expectedEnd(err) {
			out["error"] = err.Error()
		}
		a.printJSON(out)
		return
	}
	w := a.stdout
	fmt.Fprintf(w, "\nrun %s: %s — %s done, %d failed\n", res.RunID, st.Status, textutil.Count(v.Tasks.Completed, "task"), v.Tasks.Failed)
	if st.Reason != "" {
		label := "reason"
		if st.Status == runstate.RunDone {
			label = "evidence"
		}
		fmt.Fprintf(w, "%s: %s\n", label, st.Reason)
	}
	if err != nil && !expectedEnd(err) && !strings.Contains(st.Reason, err.Error()) {
		fmt.Fprintf(w, "error: %v\n", err)
	}
	if a.demo != demoNone {
		a.summarizeDemo(res, err)
		return
	}
	if st.Next != "" {
		fmt.Fprintf(w, "how to go on: %s\n", st.Next)
	}
	if res.Branch != "" {
		fmt.Fprintf(w, "branch:  %s   %s\n", res.Branch, mergeAdvice(res))
	}
	a.printRunFiles(res)
	if st.Status == runstate.RunDone {
		fmt.Fprintf(w, "cleanup: lemmings clean %s removes the run's worktree (--branches its branch too)\n", res.RunID)
	}
}

// expectedEnd: the error only says how the run stopped (a pause, a halt, a
// Ctrl-C), which the status already says.
func expectedEnd(err error) bool {
	return errors.Is(err, graph.ErrPaused) || errors.Is(err, graph.ErrHalted) || errors.Is(err, context.Canceled)
}

func newHaltCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "halt [run-id]",
		Short: "Stop a running run now; the step it cuts off runs again on resume",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := a.repoRoot()
			id, err := a.pickRun(cmd.Context(), root, args, func(r graph.RunInfo) bool { return r.Active })
			if errors.Is(err, errNoMatchingRun) {
				return fmt.Errorf("no run is running in %s: nothing to halt (lemmings runs lists the runs)", root)
			}
			if err != nil {
				return err
			}
			if store, err := inspect.Open(root); err == nil {
				if err := store.Running(cmd.Context(), id); err != nil {
					return err
				}
			}
			if err := inspect.RequestHalt(root, id); err != nil {
				return err
			}
			if a.jsonOut {
				a.printJSON(map[string]any{"kind": "halt", "run_id": id, "requested": true})
				return nil
			}
			fmt.Fprintf(a.stdout, "halt requested for %s: it stops within a second, cutting off the model call or gate in flight (lemmings resume %s continues from the last checkpoint)\n", id, id)
			return nil
		},
	}
}
