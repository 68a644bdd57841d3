package nodes

import (
	"slices"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// Supervisor names, also the knowledge writers they act as.
const (
	SupCodeStyle    = prompts.CodeStyle
	SupDesign       = prompts.Design
	SupInternaliser = prompts.Internaliser
)

// Trigger events a supervisor reacts to (the table in docs/supervisors.md).
const (
	TriggerInterval          = "interval"
	TriggerMilestoneComplete = "milestone_complete"
	TriggerScopeReplan       = "scope_replan"
	TriggerTaskAbort         = "task_abort"
	TriggerUrgency           = "urgency"
)

var supervisorOrder = []string{SupCodeStyle, SupDesign, SupInternaliser}

func (s SupervisorSettings) kind(name string) SupervisorKind {
	switch name {
	case SupCodeStyle:
		return s.CodeStyle
	case SupDesign:
		return s.Design
	default:
		return s.Internaliser
	}
}

// eventTriggers lists which events trigger which supervisor.
var eventTriggers = map[string][]string{
	SupCodeStyle:    {TriggerMilestoneComplete},
	SupDesign:       {TriggerMilestoneComplete, TriggerScopeReplan, TriggerTaskAbort},
	SupInternaliser: {TriggerMilestoneComplete},
}

// DueSupervisor is a supervisor that should run now and why.
type DueSupervisor struct {
	Name    string
	Trigger string
}

// dueSupervisors decides which supervisors run now. A supervisor with a job in
// flight is not started again; the polish phase starts none (polish works off
// the cleanup directives already filed); a spent budget stops them all.
func dueSupervisors(s WorkflowState, set Settings) []DueSupervisor {
	sup := set.Supervisors
	if !sup.Enabled || s.Phase != PhaseExecute {
		return nil
	}
	if sup.BudgetUSD > 0 && s.SupervisorSpendUSD >= sup.BudgetUSD {
		return nil
	}
	urgent := urgencyReached(s, sup)
	var due []DueSupervisor
	for _, name := range supervisorOrder {
		k := sup.kind(name)
		if !k.Enabled || jobInFlight(s, name) {
			continue
		}
		if trig := supervisorTrigger(s, name, k, urgent); trig != "" {
			due = append(due, DueSupervisor{Name: name, Trigger: trig})
		}
	}
	return due
}

func supervisorTrigger(s WorkflowState, name string, k SupervisorKind, urgent bool) string {
	ranNothingNew := s.Supervisors[name].LastRunAt == tasksSettled(s)+1
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

func jobInFlight(s WorkflowState, name string) bool {
	for _, j := range s.SupervisorJobs {
		if j.Supervisor == name {
			return true
		}
	}
	return false
}

// urgencyEpsilon absorbs float rounding: ten weights of 0.1 reach 1.0.
const urgencyEpsilon = 1e-9

// urgencyReached says whether accumulated urgency pulls every supervisor
// forward (docs/supervisors.md, "Urgency pulls them forward").
func urgencyReached(s WorkflowState, sup SupervisorSettings) bool {
	return sup.UrgencyThreshold > 0 && s.SupervisorUrgency+urgencyEpsilon >= sup.UrgencyThreshold
}

// triggerPending says whether ev waits for supervisor name: as an event for
// every supervisor, or kept for this one because its job was in flight when
// the others reacted (recorded as "event@supervisor").
func triggerPending(s WorkflowState, name, ev string) bool {
	return slices.Contains(s.PendingTriggers, ev) || slices.Contains(s.PendingTriggers, ev+"@"+name)
}

// remainingTriggers is what is left of the pending events after the due
// supervisors were started: an event is kept, for it alone, for each enabled
// supervisor that reacts to it but could not start because its job was still
// in flight, so that supervisor still reviews the milestone, re-plan or abort
// once its job lands.
func remainingTriggers(s WorkflowState, sup SupervisorSettings, started []DueSupervisor) []string {
	var keep []string
	for _, name := range supervisorOrder {
		if !sup.kind(name).Enabled || !jobInFlight(s, name) || slices.ContainsFunc(started, func(d DueSupervisor) bool { return d.Name == name }) {
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

// addUrgency accumulates the urgency that pulls supervisors forward.
func addUrgency(s *WorkflowState, w float64) {
	s.SupervisorUrgency += w
}

// addTrigger records an event for the supervisors, once.
func addTrigger(s *WorkflowState, ev string) {
	if !slices.Contains(s.PendingTriggers, ev) {
		s.PendingTriggers = append(s.PendingTriggers, ev)
	}
}

// countTaskForSupervisors advances every supervisor's periodic counter.
func countTaskForSupervisors(s *WorkflowState) {
	if s.Supervisors == nil {
		s.Supervisors = map[string]SupervisorTrack{}
	}
	for _, name := range supervisorOrder {
		t := s.Supervisors[name]
		t.TasksSinceRun++
		s.Supervisors[name] = t
	}
}

// tasksSettled counts tasks that ended, completed or failed.
func tasksSettled(s WorkflowState) int { return s.TasksCompleted + s.TasksFailed }
