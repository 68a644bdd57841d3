package runstate

// The supervisors' part of the state: the directives they file and what
// became of them, and their runs and jobs.

import "time"

// Directive is a supervisor's instruction to the TaskPlanner (docs/supervisors.md
// "Directives").
type Directive struct {
	ID          string   `json:"id"`
	Type        string   `json:"type"` // functional | cleanup
	Source      string   `json:"source"`
	Description string   `json:"description"`
	Rationale   string   `json:"rationale,omitempty"`
	Priority    string   `json:"priority"` // critical | normal | low
	Files       []string `json:"files,omitempty"`
	// CreatedAtTask is TasksCompleted when the directive arrived (for aging).
	CreatedAtTask int `json:"created_at_task"`
	// TaskID is set once a task addressing the directive is planned.
	TaskID string `json:"task_id,omitempty"`
	// IgnoredRounds counts planning rounds that did not address it.
	IgnoredRounds int `json:"ignored_rounds,omitempty"`
}

// DirectiveFate records what became of a directive.
type DirectiveFate struct {
	DirectiveID string    `json:"directive_id"`
	Source      string    `json:"source"`
	Description string    `json:"description"`
	Fate        string    `json:"fate"` // task | handled | escalated | completed | failed | aged_out | capped
	Note        string    `json:"note,omitempty"`
	TaskID      string    `json:"task_id,omitempty"`
	At          time.Time `json:"at"`
}

// SupervisorTrack holds one supervisor's trigger counter and convergence data.
type SupervisorTrack struct {
	TasksSinceRun int      `json:"tasks_since_run"`
	Interval      int      `json:"interval"`
	Runs          int      `json:"runs"`
	LastFindings  []string `json:"last_findings,omitempty"`
	// LastRunAt is tasksSettled+1 at its last launch (0: never ran).
	LastRunAt  int  `json:"last_run_at,omitempty"`
	Converging bool `json:"converging,omitempty"`
}

// SupervisorRun is one entry of the supervisor run log.
type SupervisorRun struct {
	JobID            string    `json:"job_id"`
	Supervisor       string    `json:"supervisor"`
	Trigger          string    `json:"trigger"`
	AtTask           int       `json:"at_task"`
	Status           string    `json:"status"` // ok | skipped | failed | discarded
	Summary          string    `json:"summary"`
	Directives       []string  `json:"directives,omitempty"`
	Docs             []string  `json:"docs,omitempty"`
	PromptTokens     int       `json:"prompt_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	CostUSD          float64   `json:"cost_usd"`
	Warning          string    `json:"warning,omitempty"`
	Bootstrap        bool      `json:"bootstrap,omitempty"`
	At               time.Time `json:"at"`
}

// SupervisorJob is a supervisor run launched but whose result is not merged yet.
// On resume a job still listed here runs again: nothing is lost, nothing applied twice.
type SupervisorJob struct {
	ID         string `json:"id"`
	Supervisor string `json:"supervisor"`
	Trigger    string `json:"trigger"`
	AtTask     int    `json:"at_task"`
	// AfterTask is the id of the last task settled when the job started
	// ("t3"): what its knowledge documents say they were written after.
	AfterTask string `json:"after_task,omitempty"`
	Bootstrap bool   `json:"bootstrap,omitempty"`
}
