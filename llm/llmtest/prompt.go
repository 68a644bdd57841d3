package llmtest

import "strings"

// Helpers for scripts that answer lemmings' own prompts: which role asks, and
// what a section of the prompt says. The markers follow the first lines of
// the role templates (nodes/prompts/*.tmpl); a template that changes its
// first line must change its marker here.

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
