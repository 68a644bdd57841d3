package supervisors

import (
	"slices"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
)

// eventTriggers lists which events trigger which supervisor.
var eventTriggers = map[string][]string{
	prompts.CodeStyle:    {TriggerMilestoneComplete},
	prompts.Design:       {TriggerMilestoneComplete, TriggerScopeReplan, TriggerTaskAbort},
	prompts.Internaliser: {TriggerMilestoneComplete},
}

// Due is a supervisor that should run now and why.
type Due struct {
	Name    string
	Trigger string
}

// DueNow decides which supervisors run now. A supervisor with a job in
// flight is not started again; the polish phase starts none (polish works
// off the cleanup directives already filed); a spent budget stops them all.
func DueNow(s runstate.State, sup Settings) []Due {
	if !sup.Enabled || s.Phase != runstate.PhaseExecute {
		return nil
	}
	if sup.BudgetUSD > 0 && s.SupervisorSpendUSD >= sup.BudgetUSD {
		return nil
	}
	urgent := UrgencyReached(s, sup)
	var due []Due
	for _, name := range Order {
		k := sup.Of(name)
		if !k.Enabled || JobInFlight(s, name) {
			continue
		}
		if trig := Trigger(s, name, k, urgent); trig != "" {
			due = append(due, Due{Name: name, Trigger: trig})
		}
	}
	return due
}

// Trigger is why supervisor name (settings k) runs now, or "" when it does
// not; urgent says the run's urgency pulls every supervisor forward.
func Trigger(s runstate.State, name string, k Kind, urgent bool) string {
	ranNothingNew := s.Supervisors[name].LastRunAt == TasksSettled(s)+1
	for _, ev := range eventTriggers[name] {
		if !triggerPending(s, name, ev) {
			continue
		}
		// A re-plan is new work to review even when no task ended since the
		// last run; the other events are not.
		if ev == TriggerScopeReplan || !ranNothingNew {
			return ev
		}
	}
	if ranNothingNew {
		return "" // it already ran with nothing finished since: no new work to review
	}
	interval := k.Interval
	if t, ok := s.Supervisors[name]; ok && t.Interval > 0 {
		interval = t.Interval // convergence may have doubled it
	}
	if interval > 0 && s.Supervisors[name].TasksSinceRun >= interval {
		return TriggerInterval
	}
	if urgent {
		return TriggerUrgency
	}
	return ""
}

// JobInFlight says whether supervisor name has a job listed in the state.
func JobInFlight(s runstate.State, name string) bool {
	for _, j := range s.SupervisorJobs {
		if j.Supervisor == name {
			return true
		}
	}
	return false
}

// urgencyEpsilon absorbs float rounding: ten weights of 0.1 reach 1.0.
const urgencyEpsilon = 1e-9

// UrgencyReached says whether accumulated urgency pulls every supervisor
// forward (docs/supervisors.md, "Urgency pulls them forward").
func UrgencyReached(s runstate.State, sup Settings) bool {
	return sup.UrgencyThreshold > 0 && s.SupervisorUrgency+urgencyEpsilon >= sup.UrgencyThreshold
}

// triggerPending says whether ev waits for supervisor name: as an event for
// every supervisor, or kept for this one because its job was in flight when
// the others reacted (recorded as "event@supervisor").
func triggerPending(s runstate.State, name, ev string) bool {
	return slices.Contains(s.PendingTriggers, ev) || slices.Contains(s.PendingTriggers, ev+"@"+name)
}

// Remaining is what is left of the pending events after the due
// supervisors were started: an event is kept, for it alone, for each enabled
// supervisor that reacts to it but could not start because its job was still
// in flight, so that supervisor still reviews the milestone, re-plan or abort
// once its job lands.
func Remaining(s runstate.State, sup Settings, started []Due) []string {
	var keep []string
	for _, name := range Order {
		if !sup.Of(name).Enabled || !JobInFlight(s, name) || slices.ContainsFunc(started, func(d Due) bool { return d.Name == name }) {
			continue
		}
		for _, ev := range eventTriggers[name] {
			if triggerPending(s, name, ev) {
				keep = append(keep, ev+"@"+name)
			}
		}
	}
	return keep
}

// AddUrgency accumulates the urgency that pulls supervisors forward.
func AddUrgency(s *runstate.State, w float64) {
	s.SupervisorUrgency += w
}

// AddTrigger records an event for the supervisors, once.
func AddTrigger(s *runstate.State, ev string) {
	if !slices.Contains(s.PendingTriggers, ev) {
		s.PendingTriggers = append(s.PendingTriggers, ev)
	}
}

// CountTask advances every supervisor's periodic counter.
func CountTask(s *runstate.State) {
	if s.Supervisors == nil {
		s.Supervisors = map[string]runstate.SupervisorTrack{}
	}
	for _, name := range Order {
		t := s.Supervisors[name]
		t.TasksSinceRun++
		s.Supervisors[name] = t
	}
}

// TasksSettled counts tasks that ended, completed or failed.
func TasksSettled(s runstate.State) int { return s.TasksCompleted + s.TasksFailed }
