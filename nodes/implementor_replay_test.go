package nodes

// The replay suite: what weak models were seen to send back at the edit,
// each transcript driven through the real Implementor (scripted server, real
// git work tree, real parsers and checks) and landing or failing in the
// loop's own terms. docs/implementor.md lists the cases.

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/runstate"
)

const calcPy = "def add(a, b):\n    \"\"\"Return the sum.\"\"\"\n    return a - b\n\n\nclass Acc:\n    def __init__(self):\n        self.n = 0\n\n    def push(self, x):\n        self.n -= x\n"

const vetGo = "package stats\n\nimport \"fmt\"\n\n// Show prints n with the wrong verb: a finding go vet had before the task.\nfunc Show(n int) { fmt.Printf(\"%s\\n\", n) }\n\n" + meanGoBody

const meanGoBody = "// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn float64(total / len(xs))\n}\n"

const meanUnitFixed = "// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn float64(total) / float64(len(xs))\n}\n"

func TestReplayWeakModelFailuresAtTheEdit(t *testing.T) {
	t.Parallel()
	edit := func(t *testing.T) llmtest.Reply {
		return act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go", "symbol": "Mean"})
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		// unitGrain forces the function grain on a small file.
		unitGrain bool
		vet       bool // run go vet after each edit (needs go.mod)
		task      string
		replies   func(t *testing.T) []llmtest.Reply
		// file and want: the file at the end, and what it must hold.
		file, want string
		// told: what call i's last message (the model's reading) says.
		told map[int][]string
		// status of the attempt.
		status runstate.ImplStatus
	}{
		{name: "SEARCH text with copied line numbers is stripped and applied",
			files: map[string]string{"stats.go": meanGo}, unitGrain: true,
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{edit(t), text("stats.go\n<<<<<<< SEARCH\n   8| \t}\n   9| \treturn float64(total / len(xs))\n=======\n   8| \t}\n   9| \treturn float64(total) / float64(len(xs))\n>>>>>>> REPLACE\n")}
			},
			file: "stats.go", want: meanFixed, status: runstate.ImplFinished,
			told: map[int][]string{2: {"line numbers you copied into SEARCH were removed"}}},
		{name: "an elided function body is refused and the full one asked again",
			files: map[string]string{"stats.go": meanGo}, unitGrain: true,
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{edit(t), text("```go\nfunc Mean(xs []int) float64 {\n\t// ... existing code ...\n\treturn float64(total) / float64(len(xs))\n}\n```"),
					text("```go\n" + meanUnitFixed + "```")}
			},
			file: "stats.go", want: meanFixed, status: runstate.ImplFinished,
			told: map[int][]string{2: {"has a part left out", "existing code", "Now write the new version of function Mean"}}},
		{name: "a whole file cut at the reply limit is not written and a smaller change is asked",
			files: map[string]string{"stats.go": vetGo + strings.Repeat("\n// padding so the file is long\n", 30)},
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{act(t, map[string]any{"thought": "rewrite", "action": "write_file", "path": "stats.go"}),
					{Content: "```go\npackage stats\n\nimport \"fmt\"\n\nfunc Show(n int) {", DoneReason: "length", CompletionTokens: 320},
					text("```go\n" + meanUnitFixed + "```")}
			},
			file: "stats.go", want: "return float64(total) / float64(len(xs))", status: runstate.ImplFinished,
			told: map[int][]string{2: {"cut off at 320 tokens", "Make a smaller change", "new version of function Mean"}, 3: {"func Show(n int)"}}},
		{name: "a unit renamed without the task asking is refused",
			files: map[string]string{"stats.go": meanGo}, unitGrain: true,
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{edit(t), text("```go\n" + strings.Replace(meanUnitFixed, "func Mean", "func Average", 1) + "```"),
					text("```go\n" + meanUnitFixed + "```")}
			},
			file: "stats.go", want: meanFixed, status: runstate.ImplFinished,
			told: map[int][]string{2: {"declares Average, but Mean was asked for", "keep the name Mean"}}},
		{name: "a unit renamed as the task asks is taken",
			files: map[string]string{"stats.go": meanGo}, unitGrain: true, task: "Rename Mean to Average and divide as floats.",
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{edit(t), text("```go\n" + strings.Replace(meanUnitFixed, "func Mean", "func Average", 1) + "```")}
			},
			file: "stats.go", want: "func Average(xs []int) float64 {", status: runstate.ImplFinished,
			told: map[int][]string{2: {"renamed Mean → Average"}}},
		{name: "indentation lost in a Go function is put back by gofmt",
			files: map[string]string{"stats.go": meanGo}, unitGrain: true,
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{edit(t), text("```go\n// Mean returns the mean of xs.\nfunc Mean(xs []int) float64 {\ntotal := 0\nfor _, x := range xs {\ntotal += x\n}\nreturn float64(total) / float64(len(xs))\n}\n```")}
			},
			file: "stats.go", want: meanFixed, status: runstate.ImplFinished},
		{name: "a Python method written at column 0 is indented into its class",
			files: map[string]string{"calc.py": calcPy}, unitGrain: true,
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{act(t, map[string]any{"thought": "fix", "action": "edit", "path": "calc.py", "symbol": "Acc.push"}),
					text("```python\ndef push(self, x):\n    self.n += x\n```")}
			},
			file: "calc.py", want: "    def push(self, x):\n        self.n += x\n", status: runstate.ImplFinished},
		{name: "a whole small file asked for and one function given keeps the rest of the file",
			files: map[string]string{"stats.go": vetGo},
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{act(t, map[string]any{"thought": "fix", "action": "edit", "path": "stats.go"}), text("```go\n" + meanUnitFixed + "```")}
			},
			file: "stats.go", want: "func Show(n int)", status: runstate.ImplFinished,
			told: map[int][]string{1: {"complete new content of stats.go"}, 2: {"your block held only part of stats.go: Mean put in place"}}},
		{name: "a whole file a fraction of the file's length is spliced by unit, not written over it",
			files: map[string]string{"stats.go": vetGo + strings.Repeat("\n// Pad is here so the file is long.\nfunc Pad() {}\n", 12)},
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{act(t, map[string]any{"thought": "rewrite", "action": "write_file", "path": "stats.go"}),
					text("```go\npackage stats\n\n" + meanUnitFixed + "```")}
			},
			file: "stats.go", want: "func Show(n int)", status: runstate.ImplFinished,
			told: map[int][]string{2: {"your block held only part of stats.go: Mean put in place"}}},
		{name: "an edit that breaks the parse is reverted and the file still parses",
			files: map[string]string{"stats.go": meanGo},
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{act(t, map[string]any{"thought": "fix", "action": "edit", "path": "stats.go"}),
					text("```go\n" + strings.Replace(meanFixed, "\t}\n\treturn", "\treturn", 1) + "```"),
					act(t, map[string]any{"thought": "again", "action": "edit", "path": "stats.go"}),
					text("```go\n" + meanFixed + "```")}
			},
			file: "stats.go", want: meanFixed, status: runstate.ImplFinished,
			told: map[int][]string{2: {"this edit was reverted: it broke the parse of stats.go", "No file was changed"}}},
		{name: "a pre-existing vet finding is not blamed on the edit",
			files: map[string]string{"go.mod": "module example.com/s\n\ngo 1.22\n", "stats.go": vetGo}, unitGrain: true, vet: true,
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{edit(t), text("```go\n" + meanUnitFixed + "```")}
			},
			file: "stats.go", want: "return float64(total) / float64(len(xs))", status: runstate.ImplFinished,
			told: map[int][]string{2: {"stats.go: rewrote Mean (15 lines now)", "stats.go now reads:"}}},
		{name: "a vet finding the edit adds is reported as introduced",
			files: map[string]string{"go.mod": "module example.com/s\n\ngo 1.22\n", "stats.go": vetGo}, unitGrain: true, vet: true,
			replies: func(t *testing.T) []llmtest.Reply {
				return []llmtest.Reply{edit(t), text("```go\n" + strings.Replace(meanUnitFixed, "\treturn float64(total)", "\tfmt.Printf(\"%d\\n\", \"total\")\n\treturn float64(total)", 1) + "```")}
			},
			file: "stats.go", want: "return float64(total) / float64(len(xs))", status: runstate.ImplFinished,
			told: map[int][]string{2: {"This edit introduced these problems", "Printf format %d has arg \"total\" of wrong type string"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.vet {
				if _, err := exec.LookPath("go"); err != nil {
					t.Skip("go is not on PATH")
				}
			}
			if _, ok := tc.files["calc.py"]; ok {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("python3 is not installed")
				}
			}
			r := newWeakRun(t, implementor.EditText, tc.files, tc.replies(t)...)
			r.task.TargetFiles = []string{tc.file}
			if tc.task != "" {
				r.task.Instructions = tc.task
			}
			if tc.unitGrain {
				r.d.Settings.WholeFileLines = 5
			}
			if tc.vet {
				r.d.Settings.SyntaxChecks = map[string]string{".go": "go vet ./{dir}"}
			}
			res := r.run(t)
			if res.Status != tc.status {
				t.Errorf("status %s, want %s: %s", res.Status, tc.status, res.Summary)
			}
			if got := r.file(t, tc.file); !strings.Contains(got, tc.want) {
				t.Errorf("%s lacks %q:\n%s", tc.file, tc.want, got)
			}
			for i, wants := range tc.told {
				got := r.lastUser(i)
				for _, w := range wants {
					if !strings.Contains(got, w) {
						t.Errorf("call %d's message lacks %q:\n%s", i+1, w, got)
					}
				}
			}
			if strings.Contains(tc.name, "pre-existing") && strings.Contains(r.lastUser(2), "introduced") {
				t.Errorf("a finding that was there before is reported as the edit's:\n%s", r.lastUser(2))
			}
		})
	}
}

// Best-of-n: the first candidate breaks the parse, the second lands; both
// are in the event log.
func TestASecondSampleIsDrawnWhenTheFirstDoesNotParse(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go", "symbol": "Mean"}),
		text("```go\nfunc Mean(xs []int) float64 {\n\treturn float64(total /\n}\n```"),
		text("```go\n"+meanUnitFixed+"```"),
	)
	r.d.Settings.WholeFileLines = 5
	r.d.Settings.Samples = 3
	out, evs := r.runEvents(t, false)
	samples := evs["implementor_sample"]
	if got := r.file(t, "stats.go"); got != meanFixed {
		t.Errorf("stats.go =\n%s", got)
	}
	calls := r.model.recorded()
	if len(calls) != 4 { // action, two samples, finish
		t.Fatalf("%d calls, want 4", len(calls))
	}
	if calls[2].Temperature == nil || *calls[2].Temperature <= 0.5 {
		t.Errorf("the second sample must be drawn at a raised temperature, got %v", calls[2].Temperature)
	}
	if calls[1].LastUser() != calls[2].LastUser() {
		t.Error("the samples must be drawn over the same prompt")
	}
	if len(samples) != 2 || samples[0]["kept"] != false || samples[1]["kept"] != true || !strings.Contains(samples[0]["problem"].(string), "does not parse") {
		t.Errorf("samples recorded: %v", samples)
	}
	if out.Implementation.Status != runstate.ImplFinished || out.Implementation.Malformed != 1 {
		t.Errorf("implementation %+v", out.Implementation)
	}
}

// A good first candidate costs no second call.
func TestAGoodFirstSampleDrawsNoOther(t *testing.T) {
	t.Parallel()
	r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo},
		act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go", "symbol": "Mean"}),
		text("```go\n"+meanUnitFixed+"```"),
	)
	r.d.Settings.WholeFileLines = 5
	r.d.Settings.Samples = 3
	r.run(t)
	if n := len(r.model.recorded()); n != 3 { // action, one sample, finish
		t.Errorf("%d calls, want 3", n)
	}
}

// A file whose targeted edits failed twice is asked for whole only when it
// fits the reply budget; otherwise its unit is.
func TestTheWholeFileFallbackIsOnlyForFilesThatFitTheReplyBudget(t *testing.T) {
	t.Parallel()
	stale := text("stats.go\n<<<<<<< SEARCH\n\treturn total / len(xs)\n=======\n\treturn 0\n>>>>>>> REPLACE\n")
	edit := act(t, map[string]any{"thought": "fix it", "action": "edit", "path": "stats.go"})
	for _, tc := range []struct {
		name        string
		replyTokens int
		want        string
	}{
		{"a file that fits is asked for whole", 4096, "complete new content of stats.go"},
		{"a file past the reply budget is asked for by unit", 40, "new version of function Mean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newWeakRun(t, implementor.EditText, map[string]string{"stats.go": meanGo}, edit, stale, edit, stale, edit, text("```go\n"+meanUnitFixed+"```"))
			r.d.Settings.WholeFileLines = 5
			r.d.Settings.ReplyTokens = tc.replyTokens
			r.run(t)
			if got := r.model.recorded()[5].LastUser(); !strings.Contains(got, tc.want) {
				t.Errorf("the third code call must say %q:\n%s", tc.want, got)
			}
		})
	}
}
