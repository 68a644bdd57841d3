package nodes

import (
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// The nodes that ask a model are named as their templates are.
func TestNodeNamesAreTheirTemplatesNames(t *testing.T) {
	t.Parallel()
	for node, tmpl := range map[string]string{
		NodeScope: prompts.ScopeAgent, NodePlanner: prompts.TaskPlanner, NodeImplementor: prompts.Implementor,
		NodeQA: prompts.QA, NodeAssessor: prompts.Assessor,
	} {
		if node != tmpl {
			t.Errorf("node %q, template %q", node, tmpl)
		}
	}
}
