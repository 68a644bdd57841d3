package nodes

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/nodes/supervisors"
	"github.com/lemmings-dev/lemmings/runstate"
)

// supDueNames lists the due supervisors as "name:trigger".
func supDueNames(s runstate.State, set Settings) []string {
	var out []string
	for _, d := range supervisors.DueNow(s, set.Supervisors) {
		out = append(out, d.Name+":"+d.Trigger)
	}
	return out
}

func supExecState() runstate.State {
	return runstate.State{Phase: runstate.PhaseExecute, Supervisors: map[string]runstate.SupervisorTrack{}}
}

// supCompleteTask does what mark_complete does for the triggers.
func supCompleteTask(s *runstate.State) {
	s.TasksCompleted++
	supervisors.CountTask(s)
}

// supLandAll plays every job in flight as landed.
func supLandAll(s *runstate.State) { s.SupervisorJobs = nil }

// TestSupPeriodicTriggers walks 30 completed tasks: Code Style runs every 5th,
// the Internaliser every 3rd, Design never (it has no periodic trigger), and
// never a supervisor that is not due.
func TestSupPeriodicTriggers(t *testing.T) {
	t.Parallel()
	set := DefaultSettings()
	s := supExecState()
	ran := map[string][]int{}
	for n := 1; n <= 30; n++ {
		supCompleteTask(&s)
		for _, d := range supervisors.DueNow(s, set.Supervisors) {
			if d.Trigger != supervisors.TriggerInterval {
				t.Fatalf("after task %d: %s due by %q, want interval", n, d.Name, d.Trigger)
			}
			ran[d.Name] = append(ran[d.Name], n)
			supervisors.StartJob(&s, d, false)
		}
		supLandAll(&s)
	}
	want := map[string][]int{
		prompts.CodeStyle:    {5, 10, 15, 20, 25, 30},
		prompts.Internaliser: {3, 6, 9, 12, 15, 18, 21, 24, 27, 30},
	}
	for _, name := range supervisors.Order {
		if !slices.Equal(ran[name], want[name]) {
			t.Errorf("%s ran after tasks %v, want %v", name, ran[name], want[name])
		}
	}
}

// TestSupIntervalsConfigurable: intervals are settings (run.SettingsFrom
// fills them from the configuration).
func TestSupIntervalsConfigurable(t *testing.T) {
	t.Parallel()
	set := DefaultSettings()
	set.Supervisors.CodeStyle.Interval = 2
	set.Supervisors.Internaliser.Interval = 0 // no periodic run
	s := supExecState()
	for range 2 {
		supCompleteTask(&s)
	}
	if got := supDueNames(s, set); !slices.Equal(got, []string{"code_style:interval"}) {
		t.Fatalf("due after 2 tasks = %v, want only code_style by interval", got)
	}
}

// TestSupEventTriggers: each event wakes exactly the supervisors
// docs/supervisors.md names for it.
func TestSupEventTriggers(t *testing.T) {
	t.Parallel()
	set := DefaultSettings()
	set.Supervisors.UrgencyThreshold = 0 // events alone, without the abort's urgency
	cases := []struct {
		event string
		want  []string
	}{
		{supervisors.TriggerMilestoneComplete, []string{"code_style:milestone_complete", "design:milestone_complete", "internaliser:milestone_complete"}},
		{supervisors.TriggerScopeReplan, []string{"design:scope_replan"}},
		{supervisors.TriggerTaskAbort, []string{"design:task_abort"}},
	}
	for _, tc := range cases {
		t.Run(tc.event, func(t *testing.T) {
			s := supExecState()
			s.TasksCompleted = 1 // one task done: periodic counters are far from due
			supervisors.CountTask(&s)
			if got := supDueNames(s, set); len(got) != 0 {
				t.Fatalf("due before the event: %v", got)
			}
			supervisors.AddTrigger(&s, tc.event)
			supervisors.AddTrigger(&s, tc.event) // recorded once
			if len(s.PendingTriggers) != 1 {
				t.Fatalf("pending triggers %v, want the event once", s.PendingTriggers)
			}
			if got := supDueNames(s, set); !slices.Equal(got, tc.want) {
				t.Fatalf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSupNotDue: a disabled layer or supervisor, the polish phase, a spent
// budget and a job in flight all keep supervisors from starting.
func TestSupNotDue(t *testing.T) {
	t.Parallel()
	base := func() runstate.State {
		s := supExecState()
		s.TasksCompleted = 4
		supervisors.AddTrigger(&s, supervisors.TriggerMilestoneComplete)
		return s
	}
	all := []string{"code_style:milestone_complete", "design:milestone_complete", "internaliser:milestone_complete"}
	if got := supDueNames(base(), DefaultSettings()); !slices.Equal(got, all) {
		t.Fatalf("baseline due = %v, want %v", got, all)
	}
	cases := []struct {
		name   string
		adjust func(*runstate.State, *Settings)
		want   []string
	}{
		{"layer disabled", func(_ *runstate.State, set *Settings) { set.Supervisors.Enabled = false }, nil},
		{"design disabled", func(_ *runstate.State, set *Settings) { set.Supervisors.Design.Enabled = false },
			[]string{"code_style:milestone_complete", "internaliser:milestone_complete"}},
		{"polish phase", func(s *runstate.State, _ *Settings) { s.Phase = runstate.PhasePolish }, nil},
		{"run done", func(s *runstate.State, _ *Settings) { s.Phase = runstate.PhaseDone }, nil},
		{"budget spent", func(s *runstate.State, set *Settings) { set.Supervisors.BudgetUSD = 0.5; s.SupervisorSpendUSD = 0.5 }, nil},
		{"budget not yet spent", func(s *runstate.State, set *Settings) { set.Supervisors.BudgetUSD = 0.5; s.SupervisorSpendUSD = 0.49 }, all},
		{"no budget limit", func(s *runstate.State, set *Settings) { set.Supervisors.BudgetUSD = 0; s.SupervisorSpendUSD = 99 }, all},
		{"code style job in flight", func(s *runstate.State, _ *Settings) {
			s.SupervisorJobs = []runstate.SupervisorJob{{ID: "code_style-3-1", Supervisor: prompts.CodeStyle}}
		}, []string{"design:milestone_complete", "internaliser:milestone_complete"}},
		{"already ran with nothing new", func(s *runstate.State, _ *Settings) {
			s.Supervisors[prompts.Internaliser] = runstate.SupervisorTrack{LastRunAt: supervisors.TasksSettled(*s) + 1, Runs: 1}
		}, []string{"code_style:milestone_complete", "design:milestone_complete"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, set := base(), DefaultSettings()
			tc.adjust(&s, &set)
			if got := supDueNames(s, set); !slices.Equal(got, tc.want) {
				t.Fatalf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSupReplanReviewedAfterAbort: a Design run at a task abort does not
// swallow the re-plan that follows with no task ended in between.
func TestSupReplanReviewedAfterAbort(t *testing.T) {
	t.Parallel()
	set := DefaultSettings()
	s := supExecState()
	s.TasksCompleted, s.TasksFailed = 2, 1
	s.Supervisors[prompts.Design] = runstate.SupervisorTrack{LastRunAt: supervisors.TasksSettled(s) + 1, Runs: 1}
	supervisors.AddTrigger(&s, supervisors.TriggerTaskAbort)
	if got := supDueNames(s, set); len(got) != 0 {
		t.Fatalf("the abort Design already reviewed made %v due", got)
	}
	supervisors.AddTrigger(&s, supervisors.TriggerScopeReplan)
	if got := supDueNames(s, set); !slices.Equal(got, []string{"design:scope_replan"}) {
		t.Fatalf("due after the re-plan = %v, want design:scope_replan", got)
	}
}

// TestSupTriggerKeptForJobInFlight: an event that arrives while a supervisor's
// job is running is kept for that supervisor alone, not lost when the others
// react to it, and not replayed to the others.
func TestSupTriggerKeptForJobInFlight(t *testing.T) {
	t.Parallel()
	set := DefaultSettings()
	d := &Deps{Settings: set, Supervisors: supervisors.NewJobs(context.Background(), nil)}
	defer d.Supervisors.Close()
	s := supExecState()
	s.TasksCompleted = 2
	s.SupervisorJobs = []runstate.SupervisorJob{{ID: "design-1-1", Supervisor: prompts.Design}}
	supervisors.AddTrigger(&s, supervisors.TriggerMilestoneComplete)
	due := supervisors.DueNow(s, set.Supervisors)
	if got := supDueNames(s, set); !slices.Equal(got, []string{"code_style:milestone_complete", "internaliser:milestone_complete"}) {
		t.Fatalf("due = %v", got)
	}
	s.PendingTriggers = supervisors.Remaining(s, set.Supervisors, due)
	for _, ds := range due {
		supervisors.StartJob(&s, ds, false)
	}
	if !slices.Equal(s.PendingTriggers, []string{"milestone_complete@design"}) {
		t.Fatalf("pending after dispatch = %v, want the event kept for design", s.PendingTriggers)
	}
	// Design's job lands, the next task ends: Design reviews the milestone,
	// the others (who already did) do not run again for it.
	s.SupervisorJobs = nil
	supCompleteTask(&s)
	if got := supDueNames(s, set); !slices.Equal(got, []string{"design:milestone_complete"}) {
		t.Fatalf("due after design's job landed = %v, want only design", got)
	}
}

// TestSupUrgencyWeights: each signal adds its configured weight: the node
// that sees it reports the fact, the supervisors' hook after it weighs it.
func TestSupUrgencyWeights(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := &Deps{Settings: DefaultSettings()}

	s := supExecState()
	s.CurrentTask, s.QA = &runstate.Task{ID: "t1"}, &runstate.QAResult{}
	s = qaFailed(ctx, s, "gate failed")
	supWantUrgency(t, "QA failure before the hook", s, 0)
	supervisors.Facts(&s, d.Settings.Supervisors)
	supWantUrgency(t, "QA failure", s, 0.3)

	s = supExecState()
	s.CarryForward = []runstate.PlannedTask{{Title: "a"}, {Title: "b"}}
	tasksOf(d).updateCarryForward(ctx, &s, []taskSpec{{Title: "x"}, {Title: "y"}})
	supervisors.Facts(&s, d.Settings.Supervisors)
	supWantUrgency(t, "carry-forward churn", s, 0.2)

	s = supExecState()
	s.CarryForward = []runstate.PlannedTask{{Title: "a"}, {Title: "b"}}
	tasksOf(d).updateCarryForward(ctx, &s, []taskSpec{{Title: "a"}, {Title: "b"}, {Title: "c"}})
	supervisors.Facts(&s, d.Settings.Supervisors)
	supWantUrgency(t, "a plan that only grew", s, 0)

	s = supExecState()
	s.Milestones = []runstate.Milestone{{ID: "m1", Goal: "g", Status: runstate.MilestoneActive}}
	m := &supFakeModel{answer: supAnswerAssessor("minor_drift")}
	da := supDeps(t, m, false)
	s, err := around(runstate.NodeAssessor, da.hooks(), da.Assessor)(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	supWantUrgency(t, "Assessor minor drift", s, 0.5)
	if len(s.Happened) != 0 {
		t.Errorf("facts %v left in the state after the hooks", s.Happened)
	}

	// Weights are settings (run.SettingsFrom fills them from the configuration).
	set := DefaultSettings()
	set.Supervisors.WeightQAFailure = 0.45
	d2 := &Deps{Settings: set}
	s = supExecState()
	s.CurrentTask, s.QA = &runstate.Task{ID: "t1"}, &runstate.QAResult{}
	s = qaFailed(ctx, s, "gate failed")
	supervisors.Facts(&s, d2.Settings.Supervisors)
	supWantUrgency(t, "configured QA failure", s, 0.45)
}

// TestSupTaskAbortUrgency: a failed task adds +1.0, which alone pulls every
// supervisor forward; Design reacts to the abort itself.
func TestSupTaskAbortUrgency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := supDeps(t, nil, true)
	head, err := d.Work.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := supExecState()
	s.TasksCompleted = 1
	supervisors.CountTask(&s)
	s.CurrentTask = &runstate.Task{ID: "t2", Title: "doomed", StartCommit: head, AttemptBase: head, Feedback: "cannot be done"}
	s, err = around(runstate.NodeFailed, d.hooks(), d.MarkFailed)(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	supWantUrgency(t, "task abort", s, 1.0)
	want := []string{"code_style:urgency", "design:task_abort", "internaliser:urgency"}
	if got := supDueNames(s, d.Settings); !slices.Equal(got, want) {
		t.Fatalf("due after an abort = %v, want %v", got, want)
	}
}

// TestSupUrgencyPullForward: signals accumulate; below the threshold nothing
// is pulled forward, at it every enabled supervisor runs and the urgency
// resets.
func TestSupUrgencyPullForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := DefaultSettings()
	s := supExecState()
	s.TasksCompleted = 1
	supervisors.CountTask(&s)

	steps := []struct {
		what   string
		weight float64
		due    bool
	}{
		{"QA failure", set.Supervisors.WeightQAFailure, false},
		{"churn", set.Supervisors.WeightChurn, false},
		{"minor drift", set.Supervisors.WeightMinorDrift, true}, // 0.3+0.2+0.5 = 1.0
	}
	for _, st := range steps {
		supervisors.AddUrgency(&s, st.weight)
		got := supDueNames(s, set)
		if st.due != (len(got) > 0) {
			t.Fatalf("after %s (urgency %.2f): due = %v, want due=%v", st.what, s.SupervisorUrgency, got, st.due)
		}
	}
	want := []string{"code_style:urgency", "design:urgency", "internaliser:urgency"}
	if got := supDueNames(s, set); !slices.Equal(got, want) {
		t.Fatalf("due at the threshold = %v, want %v", got, want)
	}

	m := &supFakeModel{answer: supAnswerEmptySupervisor}
	d := supDeps(t, m, true)
	d.Supervisors = supervisors.NewJobs(ctx, m)
	defer d.Supervisors.Close()
	out, err := d.supervisors().Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	supWantUrgency(t, "after the supervisors ran", out, 0)
	if len(out.SupervisorJobs) != 3 {
		t.Fatalf("jobs = %+v, want one per supervisor", out.SupervisorJobs)
	}
	if got := supDueNames(out, set); len(got) != 0 {
		t.Fatalf("still due after running: %v", got)
	}
}

// TestSupUrgencyRounding: configured weights that sum to the threshold in
// decimal reach it in floating point too.
func TestSupUrgencyRounding(t *testing.T) {
	t.Parallel()
	set := DefaultSettings()
	s := supExecState()
	s.TasksCompleted = 1
	for range 10 {
		supervisors.AddUrgency(&s, 0.1)
	}
	if got := supDueNames(s, set); len(got) != 3 {
		t.Fatalf("ten signals of 0.1 (urgency %v) pulled forward %v, want all three", s.SupervisorUrgency, got)
	}
}

func supWantUrgency(t *testing.T, what string, s runstate.State, want float64) {
	t.Helper()
	if d := s.SupervisorUrgency - want; d > 1e-9 || d < -1e-9 {
		t.Errorf("%s: urgency %.3f, want %.3f", what, s.SupervisorUrgency, want)
	}
}

// TestSupConvergenceDoubling: findings that barely change double the
// supervisor's interval (up to the cap), and new findings reset it.
func TestSupConvergenceDoubling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := DefaultSettings()
	set.Supervisors.MaxInterval = 20
	d := &Deps{Settings: set}
	s := supExecState()
	same := []string{"Error wrapping differs", "Test names vary"}
	run := func(findings []string) runstate.SupervisorTrack {
		t.Helper()
		supervisors.StartJob(&s, supervisors.Due{Name: prompts.CodeStyle, Trigger: supervisors.TriggerInterval}, false)
		supLandAll(&s)
		supervisors.Converge(ctx, &s, d.Settings.Supervisors, prompts.CodeStyle, findings)
		return s.Supervisors[prompts.CodeStyle]
	}
	if tr := run(same); tr.Interval != 0 || tr.Converging {
		t.Fatalf("first run: %+v, want the base interval", tr)
	}
	for _, want := range []int{10, 20, 20} {
		// The same findings, worded with other case and spacing.
		tr := run([]string{" error wrapping differs", "TEST NAMES VARY "})
		if tr.Interval != want || !tr.Converging {
			t.Fatalf("converging run: interval %d converging %v, want %d", tr.Interval, tr.Converging, want)
		}
	}
	// The doubled interval governs the periodic trigger.
	for n := 1; n <= 19; n++ {
		supCompleteTask(&s)
		if got := supDueNames(s, set); slices.Contains(got, "code_style:interval") {
			t.Fatalf("code_style due after %d tasks with interval 20", n)
		}
	}
	supCompleteTask(&s)
	if got := supDueNames(s, set); !slices.Contains(got, "code_style:interval") {
		t.Fatalf("code_style not due after 20 tasks: %v", got)
	}
	// Mostly new findings: back to the configured interval.
	tr := run([]string{"error wrapping differs", "logging uses fmt", "package names stutter", "globals in cmd"})
	if tr.Interval != 0 || tr.Converging {
		t.Fatalf("after new findings: %+v, want the base interval back", tr)
	}
	for n := 1; n <= 5; n++ {
		supCompleteTask(&s)
	}
	if got := supDueNames(s, set); !slices.Contains(got, "code_style:interval") {
		t.Fatalf("code_style not due after 5 tasks once reset: %v", got)
	}
}

// TestSupConvergenceNeedsComparison: a single run, and a supervisor without a
// periodic interval (Design), never double anything.
func TestSupConvergenceNeedsComparison(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := &Deps{Settings: DefaultSettings()}
	s := supExecState()
	for range 3 {
		supervisors.StartJob(&s, supervisors.Due{Name: prompts.Design, Trigger: supervisors.TriggerMilestoneComplete}, false)
		supervisors.Converge(ctx, &s, d.Settings.Supervisors, prompts.Design, []string{"same finding"})
	}
	if tr := s.Supervisors[prompts.Design]; tr.Interval != 0 {
		t.Fatalf("design interval %d, want 0 (event-driven only)", tr.Interval)
	}
	if !strings.EqualFold(s.Supervisors[prompts.Design].LastFindings[0], "same finding") {
		t.Fatalf("findings not kept: %+v", s.Supervisors[prompts.Design])
	}
}
