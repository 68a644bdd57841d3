package nodes

import (
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
)

// The nodes that ask a model are named as their templates are.
func TestNodeNamesAreTheirTemplatesNames(t *testing.T) {
	t.Parallel()
	for node, tmpl := range map[string]string{
		runstate.NodeScope: prompts.ScopeAgent, runstate.NodePlanner: prompts.TaskPlanner, runstate.NodeImplementor: prompts.Implementor,
		runstate.NodeQA: prompts.QA, runstate.NodeAssessor: prompts.Assessor,
	} {
		if node != tmpl {
			t.Errorf("node %q, template %q", node, tmpl)
		}
	}
}
