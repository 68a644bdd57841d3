package nodes

// Bounds on the structured replies, set per call: a grammar-constrained model
// can only answer within them, so a one-function remit cannot come back as
// five milestones, and no answer rambles until its reply budget runs out.

import (
	"encoding/json"
	"fmt"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// itemBounds are the maxLength of the strings in a list, by the list's name:
// the struct tags ask for them, but the schema generator does not carry a
// tag's items.* bounds over.
var itemBounds = map[string]int{
	"acceptance_criteria": 300, "target_files": 200, "themes": 40, "missing": 300,
	"files": 200, "rules": 200, "findings": 160, "conventions_updated": 200, "design_updates": 200,
}

// stringBounds are the maxLength of string fields the tags leave open.
var stringBounds = map[string]int{"id": 40, "note": 300}

// scopeLimits bound the ScopeAgent's plan.
type scopeLimits struct {
	Milestones, Tasks int // at most, and tasks per milestone
}

// scopeBounds sizes the plan to the remit: a milestone per behaviour it
// names (at most 5), a few tasks each.
func scopeBounds(remit string) scopeLimits {
	b := readRemit(remit).Behaviours
	return scopeLimits{Milestones: min(max(b, 1), 5), Tasks: min(max(b+2, 3), 5)}
}

// reply is the scope reply's budget within these bounds: a task is about 200
// tokens of JSON at its bounds, a milestone's goal and themes 100.
func (b scopeLimits) reply() int {
	return min(150+b.Milestones*(100+b.Tasks*200), 3072)
}

// schemaFor is the JSON schema of T for one call: the type's own, with the
// bounds of this remit and the task limits.
func schemaFor[T any](d *Deps, s *runstate.State) (json.RawMessage, error) {
	raw, err := llm.SchemaFor[T]()
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	boundLists(root)
	var zero T
	instr := d.Settings.Tasks.MaxInstructionChars
	switch any(zero).(type) {
	case scopeReply:
		b := scopeBounds(s.Remit)
		ms := prop(root, "milestones")
		ms["maxItems"] = b.Milestones
		tasks := prop(items(ms), "tasks")
		tasks["maxItems"] = b.Tasks
		boundTask(items(tasks), instr)
	case plannerReply:
		prop(root, "reasoning")["maxLength"] = 400
		prop(root, "carry_forward")["maxItems"] = 5
		boundTask(prop(root, "task"), instr)
		boundTask(items(prop(root, "subtasks")), instr)
		boundTask(items(prop(root, "carry_forward")), instr)
	}
	return json.Marshal(root)
}

// boundTask caps a task's instructions at twice the task limit: a hard
// ceiling for the grammar, with room left for the send-back (a plan over the
// limit goes back once with the reasons, then lemmings cuts it: fitPlan),
// which serves providers that ignore the schema too.
func boundTask(task map[string]any, maxChars int) {
	if maxChars > 0 {
		prop(task, "instructions")["maxLength"] = 2 * maxChars
	}
}

// boundLists walks a schema and gives every list of strings, and the string
// fields named in stringBounds, the maxLength they lack.
func boundLists(node map[string]any) {
	props, _ := node["properties"].(map[string]any)
	for name, v := range props {
		p, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if n, ok := stringBounds[name]; ok && p["type"] == "string" && p["maxLength"] == nil && p["enum"] == nil {
			p["maxLength"] = n
		}
		if it, ok := p["items"].(map[string]any); ok && it["type"] == "string" && it["maxLength"] == nil {
			if n, ok := itemBounds[name]; ok {
				it["maxLength"] = n
			}
		}
		boundLists(p)
	}
	if it, ok := node["items"].(map[string]any); ok {
		boundLists(it)
	}
}

// prop is a property's schema ({} when missing, so setting it is harmless).
func prop(node map[string]any, name string) map[string]any {
	props, _ := node["properties"].(map[string]any)
	if p, ok := props[name].(map[string]any); ok {
		return p
	}
	return map[string]any{}
}

func items(node map[string]any) map[string]any {
	if it, ok := node["items"].(map[string]any); ok {
		return it
	}
	return map[string]any{}
}
