package llmtest

import (
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
)

// Helpers for scripts that answer lemmings' own prompts: which role asks
// (Call.Role), and what a section of the prompt says. The markers follow the
// first lines of the role templates (nodes/prompts/*.tmpl); a template that
// changes its first line must change its marker here.

var roleMarkers = []struct{ marker, role string }{
	{"You are the ScopeAgent", "scope_agent"},
	{"You are the TaskPlanner", "task_planner"},
	{"You are the Implementor", "implementor"},
	{"You are the QA reviewer", "qa"},
	{"You are the Assessor", "assessor"},
	{"You summarise a finished coding task", "summarizer"},
	{"You are the Code Style supervisor", "code_style"},
	{"You are the Design supervisor", "design"},
	{"You are the Internaliser", "internaliser"},
	{"You are the Architect", "architect"},
	{"lemmings doctor measures your speed", "doctor"},
}

// RoleOf names the role whose system prompt this is ("" if none).
func RoleOf(system string) string {
	for _, m := range roleMarkers {
		if strings.Contains(system, m.marker) {
			return m.role
		}
	}
	return ""
}

// Role names the role that asks in this call: the role template's first line
// in its ROLE section (a local role's prompt: the shared prefix first, the role
// after it), or in the system message (a supervisor's). "" if none.
func (c Call) Role() string {
	if r := RoleOf(Section(c.FirstUser(), "ROLE")); r != "" {
		return r
	}
	for _, m := range c.Messages {
		if m.Role == "system" {
			return RoleOf(m.Content)
		}
	}
	return ""
}

// Section returns the body of "## TITLE" in a prompt, up to the next "## "
// heading ("" when the prompt has no such section).
func Section(prompt, title string) string {
	_, rest, ok := strings.Cut(prompt, "## "+title+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// FirstUser is the first user message of the call: lemmings' composed prompt
// (later user messages are tool results or a re-ask).
func (c Call) FirstUser() string {
	for _, m := range c.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// TaskTitle finds the title of "tN: Title" at the start of the prompt's TASK
// section, or of "Task tN: Title" in its TASK RESULT section.
func TaskTitle(prompt string) string {
	sec := Section(prompt, "TASK")
	if sec == "" {
		sec = strings.TrimPrefix(textutil.FirstLine(Section(prompt, "TASK RESULT")), "Task ")
	}
	_, title, _ := strings.Cut(textutil.FirstLine(sec), ": ")
	return strings.TrimSpace(title)
}
