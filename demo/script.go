package demo

import (
	"encoding/json"
	"fmt"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// Script is the scripted team of models the demo runs against. Every reply is
// a pure function of the request (which role asks, what the prompt says), so a
// run killed and resumed gets the same answers as one that never stopped.
type Script struct {
	// LocalLatency and SupervisorLatency are added to every local (Ollama) and
	// cloud (OpenAI-compatible) answer, to make runs look and time like real ones.
	LocalLatency      time.Duration
	SupervisorLatency time.Duration
	// ImplementorLatency, when set, replaces LocalLatency for implementor steps
	// (tests use it to catch a run in the middle of a task).
	ImplementorLatency time.Duration
}

// Steps returns the llmtest script: one catch-all step per protocol.
func (sc *Script) Steps() []llmtest.Step {
	return []llmtest.Step{
		{Name: "demo-local", API: llmtest.Ollama, Times: -1, Respond: sc.respond},
		{Name: "demo-cloud", API: llmtest.OpenAI, Times: -1, Respond: sc.respond},
	}
}

func (sc *Script) respond(c llmtest.Call) llmtest.Reply {
	role := c.Role()

	var v any
	switch role {
	case prompts.ScopeAgent:
		v = scopeReply()
	case prompts.TaskPlanner:
		v = plannerReply(c)
	case prompts.Implementor:
		v = implementorReply(c)
	case prompts.QA:
		v = PassingQA(c.FirstUser(), "the diff implements it and the tests pass")
	case prompts.Assessor:
		v = assessorReply(c)
	case prompts.Summarizer:
		v = map[string]any{"summary": "Completed: " + llmtest.TaskTitle(c.FirstUser()) + "."}
	case prompts.CodeStyle, prompts.Design, prompts.Internaliser:
		v = supervisorReply(role, c)
	case prompts.Doctor:
		return llmtest.Reply{Content: DoctorReply, Latency: sc.LocalLatency}
	default:
		return llmtest.Reply{Status: 500, Body: `{"error":"demo script: unknown role"}`}
	}
	body, _ := json.Marshal(v)
	r := llmtest.Reply{Content: string(body), Latency: sc.LocalLatency}
	switch role {
	case prompts.Implementor:
		if sc.ImplementorLatency > 0 {
			r.Latency = sc.ImplementorLatency
		}
	case prompts.CodeStyle, prompts.Design, prompts.Internaliser:
		r.Latency = sc.SupervisorLatency
		r.PromptTokens, r.CompletionTokens, r.Cost = 4200, 380, 0.0183
	}
	return r
}

// DoctorReply is the scripted answer to lemmings doctor's speed check.
const DoctorReply = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30"

// The demo's tasks, by title.
const (
	titleFixMean  = "Fix MeanWordLength integer division"
	titleTopWords = "Add TopWords with a test"
	titleTopFlag  = "Add a -top flag to the textstats command"
	titleDocMean  = "Add a doc comment to MeanWordLength in textstats.go"
)

type taskSpec struct {
	Title              string   `json:"title"`
	Instructions       string   `json:"instructions"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	TargetFiles        []string `json:"target_files,omitempty"`
}

var specs = map[string]taskSpec{
	titleFixMean: {titleFixMean,
		"MeanWordLength in textstats.go divides two ints before converting to float64, so TestMeanWordLength fails. Convert before dividing.",
		[]string{"MeanWordLength returns the exact mean (7/3 for \"go is fun\")", "go test ./... passes"}, []string{"textstats.go"}},
	titleTopWords: {titleTopWords,
		"Add func TopWords(text string, n int) []string in topwords.go returning the n most frequent words, most frequent first, ties in alphabetical order; add topwords_test.go.",
		[]string{"TopWords returns the n most frequent words, most frequent first", "topwords_test.go tests TopWords"}, []string{"topwords.go", "topwords_test.go"}},
	titleTopFlag: {titleTopFlag,
		"In cmd/textstats/main.go add a -top N flag (default 0) that prints the N most frequent words using textstats.TopWords.",
		[]string{"textstats -top 3 prints the three most frequent words"}, []string{"cmd/textstats/main.go"}},
}

func scopeReply() any {
	return map[string]any{"milestones": []any{
		map[string]any{"goal": "The test suite passes: MeanWordLength computes an exact mean.", "themes": []string{"statistics", "tests"}, "tasks": []taskSpec{specs[titleFixMean]}},
		map[string]any{"goal": "Users can list the most frequent words: TopWords in the package and a -top flag in the command.", "themes": []string{"cli", "statistics"}, "tasks": []taskSpec{specs[titleTopWords], specs[titleTopFlag]}},
	}}
}

var (
	directiveID = regexp.MustCompile(`\[(d\d+)\]`)
	plannedLine = regexp.MustCompile(`(?m)^\d+\. (.+?)(?: \[directive (d\d+)\])?$`)
	inProgress  = regexp.MustCompile(`(?m)^Task in progress: (t\d+) — (.+) \(attempt \d+\)$`)
)

func plannerReply(c llmtest.Call) any {
	p := c.FirstUser()
	answers := []map[string]string{}
	for _, m := range directiveID.FindAllStringSubmatch(llmtest.Section(p, prompts.SecDirectives), -1) {
		answers = append(answers, map[string]string{"id": m[1], "fate": "task", "note": "planned as a cleanup task after the feature work"})
	}
	reply := map[string]any{"directives": answers, "carry_forward": []taskSpec{}}
	ms := llmtest.Section(p, prompts.SecMilestone)
	if m := inProgress.FindStringSubmatch(ms); m != nil {
		spec := specFor(m[2])
		spec.Instructions = "Fix what QA reported: " + textutil.FirstLine(llmtest.Section(p, prompts.SecInstructions)) + " " + spec.Instructions
		reply["decision"], reply["reasoning"], reply["task"] = "implement", "QA failed the last attempt; re-plan it with the feedback.", spec
		return reply
	}
	var planned []taskSpec
	for _, m := range plannedLine.FindAllStringSubmatch(after(ms, "Planned next tasks (carry-forward):"), -1) {
		planned = append(planned, specFor(m[1]))
	}
	if len(planned) == 0 {
		reply["decision"], reply["reasoning"] = "milestone_done", "Every planned task of the milestone is done and tested."
		return reply
	}
	reply["decision"], reply["reasoning"], reply["task"], reply["carry_forward"] = "implement", "Next planned task.", planned[0], planned[1:]
	return reply
}

func specFor(title string) taskSpec {
	if s, ok := specs[title]; ok {
		return s
	}
	return taskSpec{Title: title, Instructions: title, AcceptanceCriteria: []string{title}, TargetFiles: []string{"textstats.go"}}
}

func after(s, marker string) string {
	_, rest, _ := strings.Cut(s, marker)
	return rest
}

// PassingQA is a QA reply that passes every acceptance criterion of the
// prompt, quoting the first line the diff added and giving evidence.
func PassingQA(prompt, evidence string) map[string]any {
	quote := AddedLine(llmtest.Section(prompt, prompts.SecDiff))
	var verdicts []map[string]any
	for _, line := range strings.Split(llmtest.Section(prompt, prompts.SecCriteria), "\n") {
		num, crit, ok := strings.Cut(strings.TrimSpace(line), ". ")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(num)
		verdicts = append(verdicts, map[string]any{"number": n, "criterion": crit, "met": true, "quote": quote, "evidence": evidence})
	}
	return map[string]any{"criteria": verdicts, "feedback": ""}
}

// AddedLine is the first added line of a diff, the quote a reviewer gives as
// evidence ("" when the diff adds nothing).
func AddedLine(diff string) string {
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") && strings.TrimSpace(l[1:]) != "" {
			return strings.TrimSpace(l[1:])
		}
	}
	return ""
}

var milestoneLine = regexp.MustCompile(`(?m)^- (m\d+) \[.*?( \(current\))?$`)

func assessorReply(c llmtest.Call) any {
	p := c.FirstUser()
	lines := milestoneLine.FindAllStringSubmatch(llmtest.Section(p, prompts.SecMilestones), -1)
	last := len(lines) > 0 && lines[len(lines)-1][2] != ""
	if strings.Contains(llmtest.Section(p, prompts.SecInstructions), "says milestone") {
		verdict := "aligned"
		if last {
			verdict = "all_done"
		}
		return map[string]any{"verdict": verdict, "notes": "The milestone's goal is met and tested.", "milestone_complete": true}
	}
	return map[string]any{"verdict": "aligned", "notes": "On track.", "milestone_complete": false}
}

func supervisorReply(role string, c llmtest.Call) any {
	first := strings.Contains(c.Messages[0].Content, prompts.MarkerBootstrap)
	switch role {
	case prompts.CodeStyle:
		r := map[string]any{"conventions_updated": []string{}, "docs": []any{}, "directives": []any{},
			"findings": []string{"MeanWordLength has no doc comment"}, "summary": "No new inconsistencies."}
		if first {
			r["conventions_updated"] = []string{"conventions/doc-comments.md"}
			r["docs"] = []any{map[string]any{
				"path": "conventions/doc-comments.md", "title": "Doc comments on exported identifiers",
				"rules":     []string{"Every exported function, type and constant has a doc comment.", "A doc comment is a full sentence that starts with the identifier's name."},
				"examples":  "Good:\n  // WordCount returns the number of words in text.\n  func WordCount(text string) int\n\nBad:\n  func MeanWordLength(text string) float64 // no doc comment",
				"rationale": "go doc and editors show these comments; the package is read more than it is written.",
				"themes":    []string{"documentation"},
			}}
			r["directives"] = []any{map[string]any{"type": "cleanup", "description": titleDocMean,
				"rationale": "Exported functions need a doc comment (conventions/doc-comments.md).", "priority": "low", "files": []string{"textstats.go"}}}
			r["summary"] = "Bootstrap: established the doc-comment convention from the code; one cleanup directive."
		}
		return r
	case prompts.Design:
		r := map[string]any{"design_updates": []string{}, "docs": []any{}, "directives": []any{}, "findings": []string{}, "summary": "The work matches the design."}
		if first {
			r["design_updates"] = []string{"design/architecture.md"}
			r["docs"] = []any{map[string]any{
				"path": "design/architecture.md", "title": "textstats architecture",
				"rules":     []string{"Statistics are pure functions of a string in package textstats.", "cmd/textstats only reads input, calls the package and prints."},
				"rationale": "Pure functions keep every statistic testable without I/O.",
				"themes":    []string{"statistics", "cli"},
			}}
			r["summary"] = "Bootstrap: captured the package/command split."
		}
		return r
	default:
		r := map[string]any{"knowledge_items": []any{}, "summary": "Nothing new to capture."}
		if strings.Contains(c.FirstUser(), titleFixMean) && first {
			r["knowledge_items"] = []any{map[string]any{"category": "lesson", "title": "Integer division truncates averages",
				"content": "Convert to float64 before dividing: float64(total / n) truncates first.", "source_task": "t1", "confidence": "high", "needs_user_review": false}}
			r["summary"] = "Captured one lesson from the MeanWordLength fix."
		}
		return r
	}
}

// implementorReply plays the implementor: the step is the number of actions
// already taken in this attempt, the attempt shows in the feedback section.
func implementorReply(c llmtest.Call) any {
	p := c.FirstUser()
	step := 0
	for _, m := range c.Messages[2:] {
		if m.Role == "assistant" {
			step++
		}
	}
	retry := llmtest.Section(p, prompts.SecFeedback) != ""
	title := llmtest.TaskTitle(p)
	acts := implementorPlan(title, retry)
	if step >= len(acts) {
		return act("finish", "summary", "Done.")
	}
	return acts[step]
}

func act(action string, kv ...string) map[string]any {
	a := map[string]any{"thought": action + " step", "action": action}
	for i := 0; i+1 < len(kv); i += 2 {
		a[kv[i]] = kv[i+1]
	}
	return a
}

func edit(path, search, replace string) map[string]any {
	return map[string]any{"thought": "edit " + path, "action": "edit",
		"edits": []map[string]string{{"path": path, "search": search, "replace": replace}}}
}

func implementorPlan(title string, retry bool) []map[string]any {
	switch title {
	case titleFixMean:
		return []map[string]any{
			act("read_file", "path", "textstats.go"),
			edit("textstats.go", "\treturn float64(total / len(words))", "\treturn float64(total) / float64(len(words))"),
			act("run_gate", "gate", "test"),
			act("finish", "summary", "MeanWordLength converts to float64 before dividing; the tests pass."),
		}
	case titleTopWords:
		if retry {
			return []map[string]any{
				act("read_file", "path", "topwords.go"),
				edit("topwords.go", "\t\treturn counts[ws[i]] < counts[ws[j]]", "\t\treturn counts[ws[i]] > counts[ws[j]]"),
				act("run_gate", "gate", "test"),
				act("finish", "summary", "TopWords sorts by descending count; its test passes."),
			}
		}
		return []map[string]any{
			act("write_file", "path", "topwords.go", "content", topWordsBuggy),
			act("write_file", "path", "topwords_test.go", "content", topWordsTest),
			act("finish", "summary", "Added TopWords and its test."),
		}
	case titleTopFlag:
		return []map[string]any{
			act("read_file", "path", "cmd/textstats/main.go"),
			act("edit_blocks", "blocks", topFlagBlocks),
			act("finish", "summary", "The command takes -top N and prints the N most frequent words."),
		}
	case titleDocMean:
		return []map[string]any{
			edit("textstats.go", "func MeanWordLength(", "// MeanWordLength returns the mean number of bytes per word of text.\nfunc MeanWordLength("),
			act("finish", "summary", "MeanWordLength has a doc comment."),
		}
	}
	return []map[string]any{act("blocked", "summary", "the demo script has no plan for task "+strconv.Quote(title))}
}

const topWordsBuggy = `package textstats

import "sort"

// TopWords returns the n most frequent words of text, most frequent first;
// ties are in alphabetical order.
func TopWords(text string, n int) []string {
	counts := map[string]int{}
	for _, w := range Words(text) {
		counts[w]++
	}
	ws := make([]string, 0, len(counts))
	for w := range counts {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	sort.SliceStable(ws, func(i, j int) bool {
		return counts[ws[i]] < counts[ws[j]]
	})
	if n < len(ws) {
		ws = ws[:n]
	}
	return ws
}
`

const topWordsTest = `package textstats

import (
	"reflect"
	"testing"
)

func TestTopWords(t *testing.T) {
	got := TopWords("b a b c b a", 2)
	want := []string{"b", "a"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TopWords = %v, want %v", got, want)
	}
}
`

var topFlagBlocks = fmt.Sprintf(`cmd/textstats/main.go
%[1]s
import (
	"fmt"
	"io"
	"os"
%[2]s
import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
%[3]s

cmd/textstats/main.go
%[1]s
func main() {
	data, err := io.ReadAll(os.Stdin)
%[2]s
func main() {
	top := flag.Int("top", 0, "print the `+"`N`"+` most frequent words")
	flag.Parse()
	data, err := io.ReadAll(os.Stdin)
%[3]s

cmd/textstats/main.go
%[1]s
	fmt.Printf("mean word length: %%.2f\n", textstats.MeanWordLength(text))
}
%[2]s
	fmt.Printf("mean word length: %%.2f\n", textstats.MeanWordLength(text))
	if *top > 0 {
		fmt.Printf("top words: %%s\n", strings.Join(textstats.TopWords(text, *top), " "))
	}
}
%[3]s
`, "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE")
