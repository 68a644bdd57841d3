package prompts

// What several roles' prompts write the same way: the priorities sections
// are packed by, a task's lines, the gate list, a directive's line.

import (
	"fmt"
	"strings"

	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Section priorities for packing: the lowest goes first when a prompt is over
// budget. Required sections (the task, the instructions) are never dropped.
const (
	PrioHistory   = 10
	PrioOverview  = 20
	PrioKnowledge = 30
	PrioContext   = 40
)

// WriteTask writes a task's instructions, acceptance criteria and files.
func WriteTask(b *strings.Builder, instructions string, criteria, files []string) {
	if instructions != "" {
		fmt.Fprintf(b, "Instructions: %s\n", instructions)
	}
	for _, c := range criteria {
		fmt.Fprintf(b, "- Acceptance: %s\n", c)
	}
	if len(files) > 0 {
		fmt.Fprintf(b, "Files: %s\n", strings.Join(files, ", "))
	}
}

// GateList lists the gates as a prompt shows them.
func GateList(gates []workspace.Gate) string {
	if len(gates) == 0 {
		return "(no gates configured or detected)"
	}
	var b strings.Builder
	for _, g := range gates {
		fmt.Fprintf(&b, "- %s: %s\n", g.Name, g.Command)
	}
	return strings.TrimSpace(b.String())
}

// DirectiveLine is how a directive reads in a prompt: id, priority, type,
// source, what to do, why and where.
func DirectiveLine(d runstate.Directive) string {
	out := fmt.Sprintf("[%s] %s %s from %s: %s", d.ID, strings.ToUpper(d.Priority), d.Type, d.Source, d.Description)
	if d.Rationale != "" {
		out += " (why: " + d.Rationale + ")"
	}
	if len(d.Files) > 0 {
		out += " files: " + strings.Join(d.Files, ", ")
	}
	return out
}
