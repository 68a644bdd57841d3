package main

// lemmings history, fork, undo and tell (docs/time-travel.md).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/runstate"
)

func newHistoryCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "history [run-id]",
		Short: "List the steps of a run you can fork from (step, node, task, commit, time)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := a.repoRoot()
			id, err := a.pickRun(cmd.Context(), root, args, nil)
			if err != nil {
				return err
			}
			h, err := run.History(cmd.Context(), root, id)
			if err != nil {
				return err
			}
			if a.jsonOut {
				a.printJSON(h)
				return nil
			}
			w := a.stdout
			fmt.Fprintf(w, "run %s — fork from a step with lemmings fork %s@STEP\n", id, id)
			if h.ForkedFrom != "" {
				fmt.Fprintf(w, "forked from %s\n", h.ForkedFrom)
			}
			width := len("NODE") // the widest node name (run_supervisors) sets the column
			for _, s := range h.Steps {
				width = max(width, len(s.Node))
			}
			fmt.Fprintf(w, "%5s  %-*s  %-5s  %-10s  %-8s  %s\n", "STEP", width, "NODE", "DONE", "COMMIT", "TIME", "TASK")
			for _, s := range h.Steps {
				task := s.Task
				if s.Title != "" {
					task += " " + s.Title
				}
				fmt.Fprintf(w, "%5d  %-*s  %-5d  %-10s  %-8s  %s\n", s.Step, width, s.Node, s.Done, s.Commit[:min(10, len(s.Commit))],
					s.Time.Local().Format(time.TimeOnly), task)
			}
			return nil
		},
	}
}

// parseRunAt splits RUN@STEP.
func parseRunAt(arg string) (string, int, error) {
	id, stepText, ok := strings.Cut(arg, "@")
	step, err := strconv.Atoi(stepText)
	if !ok || id == "" || err != nil || step < 0 {
		return "", 0, usageErr("fork %q: name the run and the step as RUN@STEP (lemmings history RUN lists the steps)", arg)
	}
	return id, step, nil
}

func newForkCmd(a *app) *cobra.Command {
	var reject, reason, remit, remitFile, approveMode, runID string
	var noRun bool
	cmd := &cobra.Command{
		Use:   `fork RUN@STEP [--reject-task ID "why"] [--remit "new remit"]`,
		Short: "Start a new run from a step of a run, on a branch of its own from that step's commit",
		Long: `Start a new run (new id, the parent and step recorded) from a step of a run: its worktree and
branch start from the commit the step left, its state is the step's. --reject-task takes a task
back first (its commit reverted, the task back in the plan with the reason as feedback); --remit
replaces the remit. The fork then runs as lemmings resume does. The parent run is not changed.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			parent, step, err := parseRunAt(args[0])
			if err != nil {
				return err
			}
			if len(args) == 2 {
				if reject == "" || reason != "" {
					return usageErr(`fork takes one argument, RUN@STEP; the reason goes after --reject-task ID: --reject-task t2 "why"`)
				}
				reason = args[1]
			}
			if reject != "" && strings.TrimSpace(reason) == "" {
				return usageErr(`--reject-task %s needs a reason: --reject-task %s "why"`, reject, reject)
			}
			if approveMode != "" && approveMode != "milestones" && approveMode != "tasks" && approveMode != "none" {
				return usageErr("--approve-mode takes milestones, tasks or none, not %q", approveMode)
			}
			root, err := a.gitRoot(cmd.Context())
			if err != nil {
				return err
			}
			if parent, err = a.pickRun(cmd.Context(), root, []string{parent}, nil); err != nil {
				return err
			}
			flags, err := run.LoadChoices(root, parent)
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
			if remitFile != "" {
				if remit != "" {
					return usageErr("give the new remit with --remit or --remit-file, not both")
				}
				if remit, err = readRemit(remitFile, cmd.InOrStdin(), cfg.Limits.RemitBytes); err != nil {
					return err
				}
			}
			if remit != "" {
				if err := run.CheckRemit(remit, cfg.Limits.RemitBytes); err != nil {
					return usageErr("%v", err)
				}
			}
			f := run.ForkOptions{Parent: parent, Step: step, RejectTask: reject, Reason: reason, Remit: remit}
			if noRun {
				id, err := run.MakeFork(cmd.Context(), root, cmp.Or(runID, run.NewRunID()), f, cfg, a.red, a.stderr)
				if err != nil {
					return noStepIsUsage(err)
				}
				r, err := a.loadRun(cmd.Context(), []string{id})
				if err != nil {
					return err
				}
				st := r.Standing()
				if a.jsonOut {
					a.printJSON(map[string]any{"kind": "fork", "run_id": id, "parent": parent, "step": step,
						"status": st.Status, "at_step": r.Step, "reason": st.Reason, "next_step": st.Next})
					return nil
				}
				fmt.Fprintf(a.stdout, "forked %s@%d as %s (branch lemmings/%s): %s at step %d, %s\nhow to go on: %s\n",
					parent, step, id, id, st.Status, r.Step, strings.TrimPrefix(st.Reason, fmt.Sprintf("fork of %s at step %d, ", parent, step)), st.Next)
				return nil
			}
			return noStepIsUsage(a.drive(cmd.Context(), func(ctx context.Context, o run.Options) (run.Result, error) {
				o.Approve, o.RunID = approveMode, runID
				return run.Fork(ctx, o, f)
			}, root, cfg))
		},
	}
	cmd.Flags().StringVar(&reject, "reject-task", "", "take this task back first (t3): its commit reverted, the task back in the plan with the reason")
	cmd.Flags().StringVar(&reason, "reason", "", "why the task is rejected (or give it after --reject-task ID)")
	cmd.Flags().StringVar(&remit, "remit", "", "a new remit for the fork, replacing the run's")
	cmd.Flags().StringVar(&approveMode, "approve-mode", "", "change the fork's approval pauses: milestones, tasks or none (default: as the parent)")
	cmd.Flags().BoolVar(&noRun, "no-run", false, "make the fork without running it (lemmings resume runs it)")
	cmd.Flags().StringVar(&remitFile, "remit-file", "", "read the new remit from a file (- reads standard input)")
	// lemmings mcp names the forks it starts as detached processes.
	cmd.Flags().StringVar(&runID, "run-id", "", "name of the fork (default: its start time and a random suffix)")
	_ = cmd.Flags().MarkHidden("run-id")
	return cmd
}

// noStepIsUsage makes a fork from a step the run does not have a usage error
// (exit 2), as a run that does not exist is.
func noStepIsUsage(err error) error {
	if errors.Is(err, run.ErrNoStep) {
		return &exitError{code: exitUsage, err: err}
	}
	return err
}

func newUndoCmd(a *app) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   `undo TASK [run-id] [--reason "why"]`,
		Short: "Take a finished task back: its commit reverted on the run branch, the task back in the plan",
		Long: `Take a finished task back: a new commit on the run branch reverts the task's commit, and the task
goes back to the head of the plan with the reason as feedback, as a new checkpoint. A stopped,
paused or ended run is left stopped (lemmings resume carries on and does the task again); a
running run takes the task back at its next task boundary. Your checkout is not touched.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			task := strings.TrimSpace(args[0])
			root, err := a.gitRoot(cmd.Context())
			if err != nil {
				return err
			}
			id, err := a.pickRun(cmd.Context(), root, args[1:], nil)
			if err != nil {
				return err
			}
			cfg, _, err := a.loadRunConfig(root)
			if err != nil {
				return err
			}
			res, err := run.Undo(cmd.Context(), root, id, task, reason, cfg, a.red)
			if err != nil {
				return err
			}
			if a.jsonOut {
				out := map[string]any{"kind": "undo", "run_id": id, "task": task, "requested": res.Requested, "undone": res.Undone, "branch": res.Branch, "rescue": res.Rescue}
				if !res.Requested {
					out["status"], out["reason"], out["next_step"] = res.Standing.Status, res.Standing.Reason, res.Standing.Next
				}
				a.printJSON(out)
				return nil
			}
			if res.Requested {
				fmt.Fprintf(a.stdout, "undo of %s requested: run %s is running and takes it back at its next task boundary (lemmings log %s shows it)\n", task, id, id)
				return nil
			}
			u := res.Undone
			switch {
			case u.Revert != "":
				fmt.Fprintf(a.stdout, "undid %s (%s): commit %s reverted by %s on %s\n", task, u.Title, short(u.Commit), short(u.Revert), res.Branch)
			default:
				fmt.Fprintf(a.stdout, "undid %s (%s): back in the plan\n", task, u.Title)
			}
			if res.Rescue != "" {
				fmt.Fprintf(a.stdout, "what the cut-off step had left in the work tree is kept on the branch %s\n", res.Rescue)
			}
			fmt.Fprintf(a.stdout, "the task is back in the plan; the run is %s\nhow to go on: %s\n", res.Standing.Status, res.Standing.Next)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why: given to the planner and the Implementor with the task")
	return cmd
}

func newTellCmd(a *app) *cobra.Command {
	var priority string
	cmd := &cobra.Command{
		Use:   `tell [run-id] "message"`,
		Short: "Tell a running or paused run something: filed as your directive at its next checkpoint",
		Long: `Tell a run something: the message is filed as a directive of yours at the run's next checkpoint
(within the node in flight's end for a running run; on resume for a stopped or paused one), and
the planner must answer it like a supervisor's directive. lemmings directives shows its outcome.
Without a run id, the message goes to the run that is running.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := a.repoRoot()
			message := args[len(args)-1]
			id, err := a.pickRun(cmd.Context(), root, args[:len(args)-1], func(r graph.RunInfo) bool { return r.Active })
			if errors.Is(err, errNoMatchingRun) {
				return fmt.Errorf("no run is running in %s: name the run, lemmings tell RUN \"message\" (lemmings runs lists them)", root)
			}
			if err != nil {
				return err
			}
			cfg, _, err := a.loadRunConfig(root)
			if err != nil {
				return err
			}
			req, err := run.Tell(cmd.Context(), root, id, message, priority, cfg, a.red)
			if err != nil {
				return err
			}
			if a.jsonOut {
				a.printJSON(map[string]any{"kind": "tell", "run_id": id, "id": req.ID, "priority": req.Priority, "queued": true})
				return nil
			}
			fmt.Fprintf(a.stdout, "told %s: the run files it as your directive at its next checkpoint; lemmings directives %s shows what the planner made of it\n", id, id)
			return nil
		},
	}
	cmd.Flags().StringVar(&priority, "priority", runstate.PrioNormal, "critical (interrupts the plan), normal or low")
	return cmd
}
