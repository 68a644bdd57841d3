package llmtest

import (
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// Helpers for scripts that answer lemmings' own prompts: which role asks
// (Call.Role), and what a section of the prompt says. Roles are found by
// the first lines of their templates and sections by their titles, both
// named in nodes/prompts (names.go): a retitled section is one edit there.

// roleSection is the title of a local role's own part of its prompt
// (llm.RoleSection; TestRoleSectionIsLLMs keeps them equal).
const roleSection = "ROLE"

// RoleOf names the role whose system prompt this is ("" if none).
func RoleOf(system string) string { return prompts.RoleOf(system) }

// Role names the role that asks in this call: the role template's first line
// in its ROLE section (a local role's prompt: the shared prefix first, the role
// after it), or in the system message (a supervisor's). "" if none.
func (c Call) Role() string {
	if r := RoleOf(Section(c.FirstUser(), roleSection)); r != "" {
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
	sec := Section(prompt, prompts.SecTask)
	if sec == "" {
		sec = strings.TrimPrefix(textutil.FirstLine(Section(prompt, prompts.SecTaskResult)), "Task ")
	}
	_, title, _ := strings.Cut(textutil.FirstLine(sec), ": ")
	return strings.TrimSpace(title)
}
