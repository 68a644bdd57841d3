package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/runstate"
)

// A task a small local model can finish: few files, one behaviour, short
// instructions, criteria a gate or the diff can decide. A plan that breaks
// the limits goes back to the planner once with the reasons; what the second
// answer still breaks, lemmings cuts or splits itself (fitTask): a task over
// the file limit becomes one task per group of files, one that does two
// things two tasks, long instructions are cut, vague criteria dropped.

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
	name := textutil.ClipTrimmed(t.Title, 60)
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
			out = append(out, fmt.Sprintf("criterion %q of task %q cannot be checked in the diff or by a gate: name the function, file, output or test it is about", textutil.ClipTrimmed(c, 80), name))
		}
	}
	return out
}

// planProblems checks the tasks a planner's answer proposes (an operator's
// tasks are the operator's to size, and are not checked).
func (d planning) planProblems(s *runstate.State, r plannerReply) []string {
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
// back once, then fits what is still over.
func (d *Deps) enforcePlanLimits(ctx context.Context, s *runstate.State, c call, r plannerReply) plannerReply {
	r = resolvePlannerTargets(ctx, d.Work, sendBackOnce(ctx, d, s, c, r, func(r plannerReply) []string { return planningOf(d).planProblems(s, r) }))
	if len(planningOf(d).planProblems(s, r)) == 0 {
		return r
	}
	lim := d.Settings.Tasks
	fitted := r
	fitted.CarryForward = nil
	if r.Task != nil && (r.Decision == DecisionImplement || r.Decision == DecisionSplit) && !operatorTask(s, r.Task.Title) {
		parts := fitTask(*r.Task, lim)
		fitted.Task = &parts[0]
		fitted.CarryForward = append(fitted.CarryForward, parts[1:]...)
	}
	fitted.Subtasks = fitTasks(r.Subtasks, lim, func(t taskSpec) bool { return operatorTask(s, t.Title) })
	fitted.CarryForward = append(fitted.CarryForward, fitTasks(r.CarryForward, lim, func(t taskSpec) bool { return operatorTask(s, t.Title) })...)
	tasks := len(fitted.CarryForward) + len(fitted.Subtasks) + 1
	events.Emit(ctx, events.PlanFitted{Label: c.Label, Tasks: &tasks})
	return fitted
}

// operatorTask says whether title is an operator's task (theirs to size).
func operatorTask(s *runstate.State, title string) bool {
	if i := indexPlanned(s.CarryForward, title); i >= 0 && s.CarryForward[i].Operator {
		return true
	}
	ct := s.CurrentTask
	return ct != nil && ct.Operator && strings.EqualFold(ct.Title, title)
}

// enforceScopeLimits does the same for the ScopeAgent's milestones.
func (d *Deps) enforceScopeLimits(ctx context.Context, s *runstate.State, c call, r scopeReply) scopeReply {
	problems := func(r scopeReply) []string {
		var out []string
		for _, m := range r.Milestones {
			for _, t := range m.Tasks {
				out = append(out, taskProblems(t, d.Settings.Tasks)...)
			}
		}
		return out
	}
	r = resolveScopeTargets(ctx, d.Work, sendBackOnce(ctx, d, s, c, r, problems))
	if len(problems(r)) == 0 {
		return r
	}
	fitted := scopeReply{Milestones: slices.Clone(r.Milestones)}
	for i := range fitted.Milestones {
		fitted.Milestones[i].Tasks = fitTasks(fitted.Milestones[i].Tasks, d.Settings.Tasks, nil)
	}
	milestones := len(fitted.Milestones)
	events.Emit(ctx, events.PlanFitted{Label: c.Label, Milestones: &milestones})
	return fitted
}

// fitTasks fits each task of ts (but those keep says to leave alone).
func fitTasks(ts []taskSpec, lim TaskLimits, keep func(taskSpec) bool) []taskSpec {
	var out []taskSpec
	for _, t := range ts {
		if keep != nil && keep(t) {
			out = append(out, t)
			continue
		}
		out = append(out, fitTask(t, lim)...)
	}
	return out
}

// fitTask makes a task that still breaks the limits fit them, without a
// model: a title that joins two actions becomes two tasks; files over the
// limit are split into tasks of at most the limit each; instructions over
// the limit are cut at a sentence; criteria no one can check are dropped
// (the task keeps one that says what its title says).
func fitTask(t taskSpec, lim TaskLimits) []taskSpec {
	if lim.MaxInstructionChars > 0 && len(t.Instructions) > lim.MaxInstructionChars {
		t.Instructions = cutAtSentence(t.Instructions, lim.MaxInstructionChars)
	}
	var crit []string
	for _, c := range t.AcceptanceCriteria {
		if !(vagueWords.MatchString(c) && !concreteToken.MatchString(c) && !gatePhrase.MatchString(c)) {
			crit = append(crit, c)
		}
	}
	if len(crit) == 0 {
		crit = []string{"The change does what the task title says: " + t.Title}
	}
	t.AcceptanceCriteria = crit
	var out []taskSpec
	for _, titled := range splitTitle(t) {
		if n := lim.MaxTargetFiles; n > 0 && len(titled.TargetFiles) > n {
			parts := (len(titled.TargetFiles) + n - 1) / n
			for i := 0; i < parts; i++ {
				p := titled
				p.TargetFiles = titled.TargetFiles[i*n : min((i+1)*n, len(titled.TargetFiles))]
				p.Title = textutil.ClipTrimmed(fmt.Sprintf("%s (part %d of %d: %s)", titled.Title, i+1, parts, strings.Join(p.TargetFiles, ", ")), 120)
				p.Instructions = cutAtSentence("Only the part in "+strings.Join(p.TargetFiles, ", ")+". "+titled.Instructions, max(lim.MaxInstructionChars, 200))
				out = append(out, p)
			}
			continue
		}
		out = append(out, titled)
	}
	return out
}

// splitTitle splits a task whose title joins two actions ("Add X and update
// Y") into one task per action, each with the whole instructions.
func splitTitle(t taskSpec) []taskSpec {
	loc := twoBehaviours.FindStringIndex(t.Title)
	if loc == nil {
		return []taskSpec{t}
	}
	first := strings.TrimSpace(strings.TrimRight(t.Title[:loc[0]], " ,;"))
	second := strings.TrimSpace(t.Title[loc[0]:])
	for _, joiner := range []string{"and ", "then ", "also ", "plus ", ";"} {
		if strings.HasPrefix(strings.ToLower(second), joiner) {
			second = strings.TrimSpace(second[len(joiner):])
			break
		}
	}
	if first == "" || second == "" {
		return []taskSpec{t}
	}
	a, b := t, t
	a.Title = first
	b.Title = strings.ToUpper(second[:1]) + second[1:]
	b.Instructions = "Only this: " + b.Title + ". " + t.Instructions
	a.Instructions = "Only this: " + a.Title + ". " + t.Instructions
	return []taskSpec{a, b}
}

// cutAtSentence cuts text to at most n bytes, at the last sentence end that
// fits (else at a word).
func cutAtSentence(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := text[:n]
	if i := strings.LastIndexAny(cut, ".!?\n"); i > n/2 {
		return strings.TrimSpace(cut[:i+1])
	}
	if i := strings.LastIndex(cut, " "); i > 0 {
		return strings.TrimSpace(cut[:i])
	}
	return cut
}

// sendBackOnce asks again, once, when an answer has problems: the answer and
// the reasons are added as a follow-up turn of the same conversation. An
// unusable second answer keeps the first; the caller fits whatever is still
// over the limits.
func sendBackOnce[T any](ctx context.Context, d *Deps, s *runstate.State, c call, r T, problems func(T) []string) T {
	reasons := problems(r)
	if len(reasons) == 0 {
		return r
	}
	events.Emit(ctx, events.PlanSentBack{Label: c.Label, Reasons: reasons})
	prev, _ := json.Marshal(r)
	c.Messages = append(slices.Clone(c.Messages),
		llm.Message{Role: "assistant", Content: string(prev)},
		llm.Message{Role: "user", Content: "This plan breaks the task limits:\n- " + strings.Join(reasons, "\n- ") +
			"\nAnswer again with the whole JSON answer, every task within the limits."})
	again, _, err := ask[T](ctx, d, s, c)
	if err != nil {
		events.Emit(ctx, events.Warning{Message: "the plan sent back got no usable answer; keeping the first: " + err.Error()})
		return r
	}
	if left := problems(again); len(left) > 0 {
		events.Emit(ctx, events.Warning{Message: "the plan still breaks the task limits after being sent back once; lemmings cuts and splits it: " + strings.Join(left, "; ")})
	}
	return again
}
