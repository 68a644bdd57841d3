package llmtest

import (
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
)

func TestPromptHelpersReadLemmingsPrompts(t *testing.T) {
	t.Parallel()
	prompt := "## TASK\nt3: Add TopWords\nWrite it.\n## DIFF\n+func TopWords() {}\n"
	if got := Section(prompt, "TASK"); got != "t3: Add TopWords\nWrite it." {
		t.Errorf("Section(TASK) = %q", got)
	}
	if got := Section(prompt, "MISSING"); got != "" {
		t.Errorf("Section of a missing title = %q", got)
	}
	if got := TaskTitle(prompt); got != "Add TopWords" {
		t.Errorf("TaskTitle = %q", got)
	}
	if got := TaskTitle("## TASK RESULT\nTask t4: Count words\ndone\n"); got != "Count words" {
		t.Errorf("TaskTitle of a task result = %q", got)
	}
	if got := RoleOf("You are the QA reviewer of a change."); got != "qa" {
		t.Errorf("RoleOf = %q", got)
	}
	if got := RoleOf("You are someone else."); got != "" {
		t.Errorf("RoleOf of an unknown prompt = %q", got)
	}
	c := Call{Messages: []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "first"}, {Role: "user", Content: "re-ask"}}}
	if got := c.FirstUser(); got != "first" {
		t.Errorf("FirstUser = %q", got)
	}
}

// The scripted teams find a local role's own part of its prompt under the
// title the composer writes.
func TestRoleSectionIsLLMs(t *testing.T) {
	if roleSection != llm.RoleSection {
		t.Errorf("llmtest finds the role under %q, llm writes %q", roleSection, llm.RoleSection)
	}
}
