// Package evaltest is a scripted team of models that solves eval exercises
// with lemmings: every role answers as a capable model would, and the
// implementor writes the solution it is given for each exercise. Tests use it
// to run lemmings eval end to end (real worktrees, gates, commits and tests)
// without a GPU.
package evaltest

import (
	"encoding/json"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"regexp"
	"sort"
	"strings"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// Script answers every role of a lemmings run on an eval exercise.
type Script struct {
	// Solutions maps an exercise ID ("go/leap") to the files the
	// implementor writes (path → content).
	Solutions map[string]map[string]string
	// FirstTry, when it has an exercise, is what the implementor writes on
	// the eval's first attempt at it; the second attempt (shown the failing
	// tests) writes Solutions. It makes pass@2 testable.
	FirstTry map[string]map[string]string
	// Remits maps a phrase of a task's remit (a task from real history names
	// no exercise) to the ID its files are under in Solutions and FirstTry.
	Remits map[string]string
}

// idIn finds the exercise or task a prompt is about.
func (sc *Script) idIn(prompt string) (string, bool) {
	if m := exerciseID.FindStringSubmatch(prompt); m != nil {
		return m[1], true
	}
	for phrase, id := range sc.Remits {
		if strings.Contains(prompt, phrase) {
			return id, true
		}
	}
	return "", false
}

// Steps returns the llmtest script: one catch-all step for the local roles.
func (sc *Script) Steps() []llmtest.Step {
	return []llmtest.Step{{Name: "eval-local", API: llmtest.Ollama, Times: -1, Respond: sc.respond}}
}

// NewServer starts a scripted model server answering with sc, with the
// demo's model names. Steps in first are tried before sc (tests use them to
// inject faults).
func NewServer(sc *Script, first ...llmtest.Step) *llmtest.Server {
	srv := llmtest.NewServer(llmtest.WithModels(
		llmtest.ModelInfo{Name: demo.PrimaryModel, ContextLength: 32768},
		llmtest.ModelInfo{Name: demo.SummarizerModel, ContextLength: 32768},
		llmtest.ModelInfo{Name: demo.EmbeddingModel, ContextLength: 8192, Capabilities: []string{"embedding"}},
	))
	srv.Script(append(first, sc.Steps()...)...)
	return srv
}

// Config points lemmings at the scripted server: local roles only, no
// supervisors, no retrieval (an exercise is a handful of files).
func Config(url string) *config.Config {
	c := demo.Config(url)
	c.Supervisors.Enabled = false
	c.RAG.Enabled = false
	c.Limits.MaxRetries = 1
	return c
}

var (
	exerciseID = regexp.MustCompile(`exercise "([^"]+)"`)
	plannedRe  = regexp.MustCompile(`(?m)^\d+\. (.+?)(?: \[directive (d\d+)\])?$`)
	inProgress = regexp.MustCompile(`(?m)^Task in progress: (t\d+) — (.+) \(attempt \d+\)$`)
	titleRe    = regexp.MustCompile(`^(Solve|Fix) (\S+)$`)
)

func (sc *Script) respond(c llmtest.Call) llmtest.Reply {
	var v any
	switch c.Role() {
	case prompts.ScopeAgent:
		v = sc.scope(c.FirstUser())
	case prompts.TaskPlanner:
		v = plan(c.FirstUser())
	case prompts.Implementor:
		if c.Format == nil { // a code call of the text protocol
			return llmtest.Reply{Content: sc.code(c)}
		}
		v = sc.implement(c)
	case prompts.QA:
		v = demo.PassingQA(c.FirstUser(), "the tests pass")
	case prompts.Assessor:
		v = map[string]any{"verdict": "all_done", "notes": "The tests pass.", "milestone_complete": true}
	case prompts.Summarizer:
		v = map[string]any{"summary": "Solved the exercise."}
	default:
		return llmtest.Reply{Status: 500, Body: `{"error":"evaltest script: unknown role"}`}
	}
	body, _ := json.Marshal(v)
	return llmtest.Reply{Content: string(body)}
}

type taskSpec struct {
	Title              string   `json:"title"`
	Instructions       string   `json:"instructions"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	TargetFiles        []string `json:"target_files,omitempty"`
}

func (sc *Script) spec(title string) taskSpec {
	m := titleRe.FindStringSubmatch(title)
	if m == nil {
		return taskSpec{Title: title, Instructions: title, AcceptanceCriteria: []string{"the tests pass"}}
	}
	var files []string
	for p := range sc.Solutions[m[2]] {
		files = append(files, p)
	}
	sort.Strings(files)
	return taskSpec{Title: title, Instructions: "Edit " + strings.Join(files, ", ") + " so that the exercise's tests pass; do not change the tests.",
		AcceptanceCriteria: []string{"the exercise's tests pass"}, TargetFiles: files}
}

func (sc *Script) scope(prompt string) any {
	id := "unknown"
	if found, ok := sc.idIn(prompt); ok {
		id = found
	}
	verb := "Solve"
	if strings.Contains(prompt, "# Test failures of the previous attempt") || strings.Contains(prompt, "# The repository's tests fail after the previous attempt") {
		verb = "Fix"
	}
	return map[string]any{"milestones": []any{map[string]any{
		"goal": "The tests of " + id + " pass.", "themes": []string{"exercise"},
		"tasks": []taskSpec{sc.spec(verb + " " + id)},
	}}}
}

func plan(prompt string) any {
	ms := llmtest.Section(prompt, prompts.SecMilestone)
	reply := map[string]any{"directives": []any{}, "carry_forward": []taskSpec{}}
	if m := inProgress.FindStringSubmatch(ms); m != nil {
		reply["decision"], reply["reasoning"], reply["task"] = "implement", "The last attempt failed; try again.", taskSpec{Title: m[2], Instructions: m[2], AcceptanceCriteria: []string{"the exercise's tests pass"}}
		return reply
	}
	_, rest, _ := strings.Cut(ms, "Planned next tasks (carry-forward):")
	var planned []taskSpec
	for _, m := range plannedRe.FindAllStringSubmatch(rest, -1) {
		planned = append(planned, taskSpec{Title: m[1], Instructions: m[1], AcceptanceCriteria: []string{"the exercise's tests pass"}})
	}
	if len(planned) == 0 {
		reply["decision"], reply["reasoning"] = "milestone_done", "The exercise is solved."
		return reply
	}
	reply["decision"], reply["reasoning"], reply["task"], reply["carry_forward"] = "implement", "Solve the exercise.", planned[0], planned[1:]
	return reply
}

// files is what the implementor writes on the exercise the prompt is about:
// the first try on a first attempt when the test sets one, else the solution.
func (sc *Script) files(c llmtest.Call) (string, map[string]string) {
	p := c.FirstUser()
	verb, id := "", ""
	if m := titleRe.FindStringSubmatch(llmtest.TaskTitle(p)); m != nil { // a task the ScopeAgent planned
		verb, id = m[1], m[2]
	} else if found, ok := sc.idIn(p); ok { // the remit as one task
		verb, id = "Solve", found
		if strings.Contains(p, "# Test failures of the previous attempt") || strings.Contains(p, "# The repository's tests fail after the previous attempt") {
			verb = "Fix"
		}
	}
	files, ok := sc.Solutions[id]
	if !ok {
		return "", nil
	}
	if first, ok := sc.FirstTry[id]; ok && verb == "Solve" {
		files = first
	}
	return id, files
}

// code answers a code call: the whole file the request names, fenced.
func (sc *Script) code(c llmtest.Call) string {
	_, files := sc.files(c)
	ask := c.LastUser()
	for _, p := range sortedPaths(files) {
		if strings.Contains(ask, p) {
			return "```\n" + files[p] + "```\n"
		}
	}
	return "I do not know which file to write."
}

func sortedPaths(files map[string]string) []string {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// implement writes the exercise's files one action at a time, then finishes.
func (sc *Script) implement(c llmtest.Call) any {
	step := 0
	for _, m := range c.Messages[2:] {
		if m.Role == "assistant" && strings.HasPrefix(strings.TrimSpace(m.Content), "{") {
			step++
		}
	}
	id, files := sc.files(c)
	if files == nil {
		return map[string]any{"thought": "no such exercise", "action": "blocked", "summary": "the script has no exercise " + id}
	}
	paths := sortedPaths(files)
	if step < len(paths) {
		return map[string]any{"thought": "write " + paths[step], "action": "write_file", "path": paths[step], "content": files[paths[step]]}
	}
	return map[string]any{"thought": "done", "action": "finish", "summary": "Wrote " + strings.Join(paths, ", ") + "."}
}
