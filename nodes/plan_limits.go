package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/llm"
)

// A task a small local model can finish: few files, one behaviour, short
// instructions, criteria a gate or the diff can decide. A plan that breaks
// the limits goes back to the planner once with the reasons; the second
// answer is taken as it is (a warning says what is still over).

// vagueWords mark a criterion that asks for a quality rather than a fact.
var vagueWords = regexp.MustCompile(`(?i)\b(?:clean|cleaner|readable|readability|better|improved?|properly|correctly|robust|maintainable|nice|good|quality|as expected|appropriate(?:ly)?|well[- ]\w+|works?)\b`)

// concreteToken marks something a reviewer can find in a diff or a gate can
// run: code in quotes, an identifier (CamelCase, snake_case, call), a path,
// a flag, a number.
var concreteToken = regexp.MustCompile("[`\"']|\\b[a-z]+[A-Z]\\w*|\\b[A-Z][a-z0-9]+[A-Z]\\w*|\\w_\\w|\\w\\(|\\w\\.\\w|/|\\s-{1,2}\\w|\\d")

// twoBehaviours finds a title that joins two actions ("Add X and update Y").
var twoBehaviours = regexp.MustCompile(`(?i)\b(?:and|then|also|plus)\s+(?:add|update|fix|remove|refactor|rename|write|create|change|implement|move|delete|document|test)\b|;`)

// taskProblems lists the limits a planned task breaks.
func taskProblems(t taskSpec, lim TaskLimits) []string {
	var out []string
	name := clip(t.Title, 60)
	if lim.MaxTargetFiles > 0 && len(t.TargetFiles) > lim.MaxTargetFiles {
		out = append(out, fmt.Sprintf("task %q names %d target files: at most %d, so split it into tasks of one behaviour each", name, len(t.TargetFiles), lim.MaxTargetFiles))
	}
	if lim.MaxInstructionChars > 0 && len(t.Instructions) > lim.MaxInstructionChars {
		out = append(out, fmt.Sprintf("task %q has %d characters of instructions: at most %d; say only which function to change and how", name, len(t.Instructions), lim.MaxInstructionChars))
	}
	if twoBehaviours.MatchString(t.Title) {
		out = append(out, fmt.Sprintf("task %q does two things: one behaviour per task (plan the second as another task)", name))
	}
	if len(t.AcceptanceCriteria) == 0 {
		out = append(out, fmt.Sprintf("task %q has no acceptance criteria: give ones a reviewer can check in the diff or a gate can check", name))
	}
	for _, c := range t.AcceptanceCriteria {
		if vagueWords.MatchString(c) && !concreteToken.MatchString(c) && !gatePhrase.MatchString(c) {
			out = append(out, fmt.Sprintf("criterion %q of task %q cannot be checked in the diff or by a gate: name the function, file, output or test it is about", clip(c, 80), name))
		}
	}
	return out
}

// planProblems checks the tasks a planner's answer proposes (an operator's
// tasks are the operator's to size, and are not checked).
func (d *Deps) planProblems(s *WorkflowState, r plannerReply) []string {
	lim := d.Settings.Tasks
	var out []string
	check := func(t taskSpec) {
		if strings.TrimSpace(t.Title) == "" {
			return
		}
		if i := indexPlanned(s.CarryForward, t.Title); i >= 0 && s.CarryForward[i].Operator {
			return
		}
		if ct := s.CurrentTask; ct != nil && ct.Operator && strings.EqualFold(ct.Title, t.Title) {
			return
		}
		out = append(out, taskProblems(t, lim)...)
	}
	if r.Task != nil && (r.Decision == DecisionImplement || r.Decision == DecisionSplit) {
		check(*r.Task)
	}
	for _, t := range r.Subtasks {
		check(t)
	}
	for _, t := range r.CarryForward {
		check(t)
	}
	return out
}

// enforcePlanLimits sends a planner's answer that breaks the task limits
// back once.
func (d *Deps) enforcePlanLimits(ctx context.Context, s *WorkflowState, c call, r plannerReply) plannerReply {
	return sendBackOnce(ctx, d, s, c, r, func(r plannerReply) []string { return d.planProblems(s, r) })
}

// enforceScopeLimits does the same for the ScopeAgent's milestones.
func (d *Deps) enforceScopeLimits(ctx context.Context, s *WorkflowState, c call, r scopeReply) scopeReply {
	return sendBackOnce(ctx, d, s, c, r, func(r scopeReply) []string {
		var out []string
		for _, m := range r.Milestones {
			for _, t := range m.Tasks {
				out = append(out, taskProblems(t, d.Settings.Tasks)...)
			}
		}
		return out
	})
}

// sendBackOnce asks again, once, when an answer has problems: the answer and
// the reasons are added as a follow-up turn of the same conversation. The
// second answer is taken as it is (a warning says what is still wrong); an
// unusable second answer keeps the first.
func sendBackOnce[T any](ctx context.Context, d *Deps, s *WorkflowState, c call, r T, problems func(T) []string) T {
	reasons := problems(r)
	if len(reasons) == 0 {
		return r
	}
	graph.Emit(ctx, "plan_sent_back", map[string]any{"label": c.Label, "reasons": reasons})
	prev, _ := json.Marshal(r)
	c.Messages = append(slices.Clone(c.Messages),
		llm.Message{Role: "assistant", Content: string(prev)},
		llm.Message{Role: "user", Content: "This plan breaks the task limits:\n- " + strings.Join(reasons, "\n- ") +
			"\nAnswer again with the whole JSON answer, every task within the limits."})
	again, _, err := ask[T](ctx, d, s, c)
	if err != nil {
		graph.Emit(ctx, "warning", map[string]any{"message": "the plan sent back got no usable answer; keeping the first: " + err.Error()})
		return r
	}
	if left := problems(again); len(left) > 0 {
		graph.Emit(ctx, "warning", map[string]any{"message": "the plan still breaks the task limits after being sent back once: " + strings.Join(left, "; ")})
	}
	return again
}
