package nodes

import (
	"fmt"
	"os"

	"github.com/goccy/go-yaml"
)

// LoadPlan reads an operator plan (lemmings run --plan plan.yaml).
func LoadPlan(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	var p Plan
	if err := yaml.UnmarshalWithOptions(data, &p, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("plan %s: %s", path, yaml.FormatError(err, false, true))
	}
	if len(p.Milestones) == 0 {
		return nil, fmt.Errorf("plan %s: no milestones (expected milestones: [{goal, tasks: [{title, instructions, acceptance_criteria}]}])", path)
	}
	for i, m := range p.Milestones {
		if m.Goal == "" {
			return nil, fmt.Errorf("plan %s: milestone %d has no goal", path, i+1)
		}
		if len(m.Tasks) == 0 {
			return nil, fmt.Errorf("plan %s: milestone %d (%s) has no tasks", path, i+1, m.Goal)
		}
		for j, t := range m.Tasks {
			if t.Title == "" || len(t.AcceptanceCriteria) == 0 {
				return nil, fmt.Errorf("plan %s: milestone %d task %d needs a title and acceptance_criteria", path, i+1, j+1)
			}
		}
	}
	return &p, nil
}
