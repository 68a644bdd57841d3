package nodes

import "slices"

// Supervisor names, also the knowledge writers they act as.
const (
	SupCodeStyle    = "code_style"
	SupDesign       = "design"
	SupInternaliser = "internaliser"
)

// Trigger events a supervisor reacts to (seed 003 "Trigger Conditions").
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
// flight is not started again; the polish phase starts none (seed 003: polish
// works off existing cleanup directives only); a spent budget stops them all.
func dueSupervisors(s WorkflowState, set Settings) []DueSupervisor {
	sup := set.Supervisors
	if !sup.Enabled || s.Phase != PhaseExecute {
		return nil
	}
	if sup.BudgetUSD > 0 && s.SupervisorSpendUSD >= sup.BudgetUSD {
		return nil
	}
	urgent := sup.UrgencyThreshold > 0 && s.SupervisorUrgency >= sup.UrgencyThreshold
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
	if s.Supervisors[name].LastRunAt == tasksSettled(s)+1 {
		return "" // it already ran with nothing finished since: no new work to review
	}
	for _, ev := range eventTriggers[name] {
		if slices.Contains(s.PendingTriggers, ev) {
			return ev
		}
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

// addUrgency accumulates pull-forward urgency (seed 003 "Pull-Forward Mechanism").
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
