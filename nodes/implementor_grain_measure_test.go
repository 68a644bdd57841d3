package nodes

// Edits measured at their grain with a scripted model that knows the change:
// whatever the code call asks for (the whole file, SEARCH/REPLACE blocks, one
// function) it answers right, and it obeys the prompt's rules (a prompt that
// says "read a file before you edit it" gets a read first). What differs
// between protocols is then what they cost: calls, actions, prompt and reply
// tokens per attempt. The same file ran on the code before function-sized
// edits; docs/implementor.md quotes both.
//
//	LEMMINGS_MEASURE_GRAIN=1 go test ./nodes -run TestMeasureEditGrain -v

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
)

// grainTask is one change: the file before and after, the function it is in.
type grainTask struct {
	name, path, unit, before, after, instructions string
}

// bigGoFile is a Go file of about n lines: filler functions around Mean.
func bigGoFile(n int, fixed bool) string {
	var b strings.Builder
	b.WriteString("package stats\n\nimport \"strings\"\n\n")
	i := 0
	for strings.Count(b.String(), "\n") < n/2 {
		fmt.Fprintf(&b, "// Helper%d joins its words with %d dashes.\nfunc Helper%d(words []string) string {\n\tsep := strings.Repeat(\"-\", %d)\n\tout := \"\"\n\tfor _, w := range words {\n\t\tout += w + sep\n\t}\n\treturn out\n}\n\n", i, i%5+1, i, i%5+1)
		i++
	}
	ret := "\treturn float64(total / len(xs))\n"
	if fixed {
		ret = "\treturn float64(total) / float64(len(xs))\n"
	}
	b.WriteString("// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n" + ret + "}\n\n")
	for strings.Count(b.String(), "\n") < n {
		fmt.Fprintf(&b, "// Helper%d joins its words with %d dashes.\nfunc Helper%d(words []string) string {\n\tsep := strings.Repeat(\"-\", %d)\n\tout := \"\"\n\tfor _, w := range words {\n\t\tout += w + sep\n\t}\n\treturn out\n}\n\n", i, i%5+1, i, i%5+1)
		i++
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func bigPyFile(n int, fixed bool) string {
	var b strings.Builder
	b.WriteString("import math\n\n\n")
	i := 0
	for strings.Count(b.String(), "\n") < n/2 {
		fmt.Fprintf(&b, "def helper%d(words):\n    \"\"\"Join words with %d dashes.\"\"\"\n    sep = \"-\" * %d\n    return sep.join(words)\n\n\n", i, i%5+1, i%5+1)
		i++
	}
	ret := "    return total // len(xs)\n"
	if fixed {
		ret = "    return total / len(xs)\n"
	}
	b.WriteString("def mean(xs):\n    \"\"\"Return the mean of xs.\"\"\"\n    total = 0\n    for x in xs:\n        total += x\n" + ret + "\n\n")
	for strings.Count(b.String(), "\n") < n {
		fmt.Fprintf(&b, "def helper%d(words):\n    \"\"\"Join words with %d dashes.\"\"\"\n    sep = \"-\" * %d\n    return sep.join(words)\n\n\n", i, i%5+1, i%5+1)
		i++
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// unitText cuts the function name's text (with its doc comment) out of src.
func unitText(src, head string) string {
	i := strings.Index(src, head)
	if i < 0 {
		return ""
	}
	// back to the doc comment
	start := i
	for {
		prev := strings.LastIndex(src[:max(start-1, 0)], "\n")
		line := src[prev+1 : max(start-1, 0)]
		if start == 0 || !(strings.HasPrefix(line, "//") || strings.HasPrefix(line, "#")) {
			break
		}
		start = prev + 1
	}
	rest := src[i:]
	end := strings.Index(rest, "\n}\n")
	if strings.HasSuffix(head, ":") || strings.HasPrefix(head, "def ") {
		end = strings.Index(rest, "\n\n\n")
		if end < 0 {
			end = len(rest) - 1
		}
		return src[start:i] + rest[:end+1]
	}
	return src[start:i] + rest[:end+3]
}

// knowingModel answers every call of the implementor right for one task.
type knowingModel struct {
	task  grainTask
	calls int
	// reply tokens per call and what was asked
	replyTokens int
	promptTok   int
	edited      bool
	read        bool
}

func (m *knowingModel) respond(c llmtest.Call) llmtest.Reply {
	m.calls++
	for _, msg := range c.Messages {
		m.promptTok += llm.CountTokens(msg.Content)
	}
	reply := m.answer(c)
	m.replyTokens += llm.CountTokens(reply)
	return llmtest.Reply{Content: reply}
}

func (m *knowingModel) answer(c llmtest.Call) string {
	t := m.task
	if len(c.Format) > 0 { // an action
		system := c.Messages[0].Content
		switch {
		case m.edited:
			return `{"thought":"done","action":"finish","summary":"fixed"}`
		case strings.Contains(system, "read a file before you edit it") && !m.read:
			m.read = true
			return fmt.Sprintf(`{"thought":"read it first","action":"read_file","path":%q}`, t.path)
		case strings.Contains(string(c.Format), `"symbol"`):
			m.edited = true
			return fmt.Sprintf(`{"thought":"fix it","action":"edit","path":%q,"symbol":%q}`, t.path, t.unit)
		default:
			m.edited = true
			return fmt.Sprintf(`{"thought":"fix it","action":"edit","path":%q}`, t.path)
		}
	}
	ask := c.LastUser()
	lang := "go"
	head := "func " + t.unit + "("
	if strings.HasSuffix(t.path, ".py") {
		lang, head = "python", "def "+t.unit+"("
	}
	switch {
	case strings.Contains(ask, "SEARCH/REPLACE"):
		old, neu := unitText(t.before, head), unitText(t.after, head)
		ol, nl := strings.Split(old, "\n"), strings.Split(neu, "\n")
		// the changed line with two lines of context
		for i := range ol {
			if i < len(nl) && ol[i] != nl[i] {
				lo := max(0, i-2)
				return fmt.Sprintf("%s\n<<<<<<< SEARCH\n%s\n=======\n%s\n>>>>>>> REPLACE\n", t.path, strings.Join(ol[lo:i+1], "\n"), strings.Join(nl[lo:i+1], "\n"))
			}
		}
	case strings.Contains(ask, "complete new content") || strings.Contains(ask, "the new file"):
		return "```" + lang + "\n" + t.after + "```\n"
	}
	return "```" + lang + "\n" + unitText(t.after, head) + "```\n"
}

func TestMeasureEditGrain(t *testing.T) {
	t.Parallel()
	if os.Getenv("LEMMINGS_MEASURE_GRAIN") == "" {
		t.Skip("a measurement: set LEMMINGS_MEASURE_GRAIN=1 to run it")
	}
	var tasks []grainTask
	for _, n := range []int{40, 120, 250, 400} {
		tasks = append(tasks, grainTask{name: fmt.Sprintf("go-%d", n), path: "stats.go", unit: "Mean",
			before: bigGoFile(n, false), after: bigGoFile(n, true), instructions: "Mean in stats.go divides integers; convert to float64 before dividing."})
	}
	for _, n := range []int{40, 250} {
		tasks = append(tasks, grainTask{name: fmt.Sprintf("py-%d", n), path: "stats.py", unit: "mean",
			before: bigPyFile(n, false), after: bigPyFile(n, true), instructions: "mean in stats.py divides with //; use true division."})
	}
	for _, task := range tasks {
		m := &knowingModel{task: task}
		r := newWeakRun(t, implementor.EditText, map[string]string{task.path: task.before})
		r.model.replies = nil
		// Route every call to the knowing model instead of the list.
		r.model.respondWith = m.respond
		r.task.Title, r.task.Instructions, r.task.TargetFiles = "Fix "+task.unit, task.instructions, []string{task.path}
		if n, err := strconv.Atoi(os.Getenv("LEMMINGS_MEASURE_WHOLE")); err == nil {
			r.d.Settings.WholeFileLines = n
		}
		res := r.run(t)
		got := r.file(t, task.path)
		t.Logf("MEASURE %-7s lines=%d status=%s right=%v actions=%d calls=%d prompt_tokens=%d reply_tokens=%d",
			task.name, strings.Count(task.before, "\n"), res.Status, got == task.after, res.Actions, m.calls, m.promptTok, m.replyTokens)
	}
}
