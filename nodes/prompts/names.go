package prompts

import "strings"

// The names a prompt is found by: the roles (each template's name, <role>.tmpl,
// and the words its first line starts with) and the section titles
// ("## TITLE"). The workflow writes them, and the scripted teams (demo,
// eval, llm/llmtest and the tests) find them, through these constants only:
// a retitled section or a reworded first line is one edit here.

// Role templates (the labels of their prompts).
const (
	ScopeAgent     = "scope_agent"
	TaskPlanner    = "task_planner"
	Implementor    = "implementor"
	ImplementorCLI = "implementor_cli"
	QA             = "qa"
	Assessor       = "assessor"
	Summarizer     = "summarizer"
	CodeStyle      = "code_style"
	Design         = "design"
	Internaliser   = "internaliser"
	Architect      = "architect"
	// Doctor is lemmings doctor's speed probe: no template, a system message
	// of its own (MarkerDoctor).
	Doctor = "doctor"
)

// MarkerDoctor starts lemmings doctor's speed probe.
const MarkerDoctor = "lemmings doctor measures your speed"

// MarkerBootstrap opens a supervisor's system message when the knowledge
// store is empty: it writes the first documents instead of comparing.
const MarkerBootstrap = "BOOTSTRAP MODE"

// Markers are the words each role's template starts with, in the order a
// prompt is matched against them (TestEveryTemplateStartsWithItsMarker).
// The coding CLI's template has none: its prompt goes to a CLI, not to a
// scripted model.
var Markers = []struct{ Role, Marker string }{
	{ScopeAgent, "You are the ScopeAgent"},
	{TaskPlanner, "You are the TaskPlanner"},
	{Implementor, "You are the Implementor"},
	{QA, "You are the QA reviewer"},
	{Assessor, "You are the Assessor"},
	{Summarizer, "You summarise a finished coding task"},
	{CodeStyle, "You are the Code Style supervisor"},
	{Design, "You are the Design supervisor"},
	{Internaliser, "You are the Internaliser"},
	{Architect, "You are the Architect"},
	{Doctor, MarkerDoctor},
}

// Marker is the words the role's template starts with ("" for none).
func Marker(role string) string {
	for _, m := range Markers {
		if m.Role == role {
			return m.Marker
		}
	}
	return ""
}

// RoleOf names the role whose template (or system message) text is ("" if none).
func RoleOf(text string) string {
	for _, m := range Markers {
		if strings.Contains(text, m.Marker) {
			return m.Role
		}
	}
	return ""
}

// Section titles, by the prompts that carry them. Each is rendered
// "## TITLE" (llm.Section); the role's own text is under llm.RoleSection.
const (
	// Every local role: the shared prefix, and the last section.
	SecProjectContext   = "PROJECT CONTEXT"
	SecProjectKnowledge = "PROJECT KNOWLEDGE"
	SecInstructions     = "INSTRUCTIONS"

	// The planning prompts (ScopeAgent, TaskPlanner).
	SecMilestone  = "CURRENT MILESTONE"
	SecDirectives = "ACTIVE DIRECTIVES"
	SecCompleted  = "COMPLETED WORK"

	// The Implementor, the coding CLI, QA and the Architect.
	SecTask            = "TASK"
	SecFeedback        = "FEEDBACK FROM THE LAST ATTEMPT"
	SecTargetFiles     = "TARGET FILES"
	SecSymbols         = "SYMBOLS"
	SecNearFiles       = "FILES NEAR THE TARGET"
	SecServedDirective = "DIRECTIVE THIS TASK SERVES"
	SecFailingCheck    = "FAILING CHECK"
	SecChecks          = "CHECKS"
	SecCriteria        = "ACCEPTANCE CRITERIA"
	SecGates           = "GATES"
	SecDiff            = "DIFF"
	SecChangedCode     = "CHANGED CODE"
	SecFailed          = "FAILED"
	SecLastDiff        = "DIFF OF THE LAST ATTEMPT"
	SecCode            = "CODE"

	// The Summarizer and the Assessor.
	SecTaskResult = "TASK RESULT"
	SecMilestones = "MILESTONES"
	SecFindings   = "SUPERVISOR FINDINGS"

	// The supervisors.
	SecRemitMilestones  = "REMIT AND MILESTONES"
	SecKnowledgeStore   = "KNOWLEDGE STORE"
	SecDoneList         = "DONE LIST (recent)"
	SecCarryForward     = "CARRY-FORWARD"
	SecRecentResults    = "RECENT RESULTS AND QA FEEDBACK"
	SecPreviousFindings = "YOUR PREVIOUS FINDINGS"
	SecFilesChanged     = "FILES CHANGED"
	SecCodeSample       = "CODE (changed files and a sample of the repository)"
)
