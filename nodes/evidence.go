package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/runstate"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/sandbox"
	"github.com/lemmings-dev/lemmings/workspace"
)

// No success without evidence. A weak model's "milestone done" or "all done"
// is a claim, not a fact: a milestone ends only when its planned work was
// done, and a run ends done only when a task's work was committed and the
// gates passed on the branch's final tree. A claim without that evidence is
// overruled and recorded; the work goes on, or the run fails saying why.

// checks is what holds a claim to the evidence: the task moves, the
// settings, and the gates with the sandbox that confines them.
type checks struct {
	taskWork
	Settings Settings
	Gates    []workspace.Gate
	Sandbox  *sandbox.Box
}

func checksOf(d *Deps) checks {
	return checks{taskWork: tasksOf(d), Settings: d.Settings, Gates: d.Gates, Sandbox: d.Sandbox}
}

// overruleMilestoneClaim checks the planner's claim that the active
// milestone is done. With a task unfinished, the claim is overruled and the
// task gets its next attempt (its retries bound that); when planned tasks
// remain, the next of them starts (handled, with the state to go on with).
// When no task of the milestone passed and none is planned, the run stops
// with that reason. Otherwise the claim stands (handled false).
func (d checks) overruleMilestoneClaim(ctx context.Context, s runstate.State, reasoning string) (runstate.State, bool, error) {
	if t := s.CurrentTask; t != nil {
		recordOverrule(ctx, &s, "planner", fmt.Sprintf("the planner declared the milestone done with task %s unfinished (attempt %d)", t.ID, t.Attempt), reasoning)
		s.PlannerDecision = DecisionImplement
		return d.prepareAttempt(s), true, nil
	}
	m := s.ActiveMilestone()
	if m == nil || s.Phase == runstate.PhasePolish {
		return s, false, nil
	}
	if n := len(s.CarryForward); n > 0 {
		why := fmt.Sprintf("the planner declared milestone %s done with %s not done (next: %q)", m.ID, textutil.Count(n, "planned task"), s.CarryForward[0].Title)
		recordOverrule(ctx, &s, "planner", why, reasoning)
		next := s.CarryForward[0]
		s.CarryForward = s.CarryForward[1:]
		out, err := d.startTask(ctx, s, next)
		return out, true, err
	}
	if passed, failed := milestoneTasks(&s, m.ID); passed == 0 {
		why := fmt.Sprintf("the planner declared milestone %s done, but no task of it passed (%d failed) and none is planned: nothing shows its goal was reached", m.ID, failed)
		recordOverrule(ctx, &s, "planner", why, reasoning)
		err := d.stop(ctx, &s, runstate.FailureStop(why))
		return s, true, err
	}
	return s, false, nil
}

// milestoneTasks counts a milestone's tasks that passed (committed or
// skipped as already satisfied) and failed.
func milestoneTasks(s *runstate.State, id string) (passed, failed int) {
	for _, e := range s.DoneList {
		if e.Milestone == id && e.QA != runstate.QASplit {
			passed++
		}
	}
	for _, f := range s.Failures {
		if f.Milestone == id {
			failed++
		}
	}
	return passed, failed
}

// recordOverrule keeps an overruled claim in the state (the report lists
// them) and the event log.
func recordOverrule(ctx context.Context, s *runstate.State, who, why, reasoning string) {
	s.Overruled = append(s.Overruled, who+": "+why)
	events.Emit(ctx, events.ClaimOverruled{Who: who, Why: why, Claim: textutil.Clip(reasoning, 300)})
}

// settleOutcome settles a run that reached its end (runstate.Settle decides)
// with the evidence this workflow looks for, and says what it decided.
func (d checks) settleOutcome(ctx context.Context, s *runstate.State) error {
	overruled, err := runstate.Settle(s, func() (string, string, error) { return d.evidence(ctx, s) })
	switch {
	case err != nil:
		return err
	case overruled != "":
		recordOverrule(ctx, s, "report", overruled, "every milestone was declared done")
	case s.Outcome == runstate.OutcomeDone:
		events.Emit(ctx, events.Evidence{Evidence: s.Evidence})
	}
	return nil
}

// evidence looks for proof that a run whose milestones were all declared
// done did its work: at least one task done, and the gates passing on the
// final tree (run again when the tree changed since the last task whose
// gates passed). why says what is missing; evidence what was found.
func (d checks) evidence(ctx context.Context, s *runstate.State) (why, evidence string, err error) {
	committed, skipped, last := 0, 0, ""
	for _, e := range s.DoneList {
		switch {
		case e.Commit != "":
			committed++
			last = e.Commit
		case e.QA == "skipped":
			skipped++
		}
	}
	if committed == 0 && skipped == 0 {
		why := "no task was done: the milestones were declared done without any work, so nothing shows the remit was carried out"
		if n := len(s.Failures); n > 0 {
			// The cause the reader needs: a quick run's one task failed.
			f := s.Failures[n-1]
			why += fmt.Sprintf("; %s failed: %s", f.TaskID, textutil.Clip(f.Reason, 300))
		}
		return why, "", nil
	}
	tasks := textutil.Count(committed, "task") + " committed"
	if skipped > 0 {
		tasks += fmt.Sprintf(", %d skipped as already satisfied", skipped)
	}
	if len(d.Gates) == 0 || d.Work == nil {
		if committed == 0 {
			return "no gate is configured or detected and no task's work passed a review: nothing shows the remit was carried out", "", nil
		}
		return "", tasks + "; each passed QA's review (no gate is configured or detected: the gates key of lemmings.yaml adds them)", nil
	}
	head, err := d.Work.Head(ctx)
	if err != nil {
		return "", "", fmt.Errorf("report: final tree: %w", err)
	}
	names := gateNames(d.Gates)
	if last != "" {
		changed, err := d.Work.ChangedFiles(ctx, last)
		if err != nil {
			return "", "", fmt.Errorf("report: final tree: %w", err)
		}
		if len(changed) == 0 {
			return "", fmt.Sprintf("%s; the gates (%s) passed at the branch's last commit %s", tasks, names, short(head)), nil
		}
	}
	for _, r := range workspace.RunGates(ctx, d.Sandbox, d.Work.Dir(), d.Gates, d.Settings.GateOutputBytes) {
		events.Emit(ctx, events.Gate{Task: "final", Gate: r.Name, Passed: r.Passed, ExitCode: r.ExitCode, MS: r.Duration.Milliseconds()})
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		if !r.Passed {
			return fmt.Sprintf("the gate %s fails at the branch's last commit %s: %s", r.Name, short(head), textutil.Clip(textutil.FirstLine(r.Failure()), 300)), "", nil
		}
	}
	return "", fmt.Sprintf("%s; the gates (%s) passed at the branch's last commit %s", tasks, names, short(head)), nil
}

func gateNames(gates []workspace.Gate) string {
	names := make([]string, len(gates))
	for i, g := range gates {
		names[i] = g.Name
	}
	return strings.Join(names, ", ")
}

// short is a commit's abbreviation.
func short(sha string) string { return sha[:min(len(sha), 10)] }
