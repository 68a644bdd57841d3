package nodes

import (
	"errors"
	"fmt"
	"os"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
	"github.com/lemmings-dev/lemmings/runstate"
)

// maxPlanDepth bounds the nesting of a plan's flow brackets ([…], {…}).
const maxPlanDepth = 64

// LoadPlan reads an operator plan (lemmings run --plan plan.yaml). A
// syntax error shows the lines around it.
func LoadPlan(path string) (*runstate.Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return ParsePlan(data, path, true)
}

// ParsePlan checks an operator plan named path; with source false, an
// error names the line and column but quotes none of the file (a plan
// named by an MCP client could be any file the user can read).
func ParsePlan(data []byte, path string, source bool) (*runstate.Plan, error) {
	var p runstate.Plan
	// The YAML parser recurses per flow bracket ([[[[…): bound the nesting
	// first, a Go stack overflow being fatal.
	depth, deepest := 0, 0
	for _, c := range data {
		switch c {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth = max(0, depth-1)
		}
	}
	if deepest > maxPlanDepth {
		return nil, fmt.Errorf("plan %s: brackets nest %d deep, over the %d a plan may have", path, deepest, maxPlanDepth)
	}
	if err := yaml.UnmarshalWithOptions(data, &p, yaml.Strict()); err != nil {
		if !source {
			return nil, fmt.Errorf("plan %s: not a plan (YAML error at %s); lemmings run --plan-example shows the format", path, yamlPosition(err))
		}
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

// yamlPosition is where a YAML error is, without the text there.
func yamlPosition(err error) string {
	var se interface{ GetToken() *token.Token }
	if errors.As(err, &se) {
		if tk := se.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Sprintf("line %d, column %d", tk.Position.Line, tk.Position.Column)
		}
	}
	return "an unknown place"
}
