package implementor

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
)

// TestToolTableAgrees: the schema's enum, the prompt's list of actions and
// each description's example all name the same tools, per protocol, and every
// parameter a tool names is a field of the protocol's action.
func TestToolTableAgrees(t *testing.T) {
	t.Parallel()
	c, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	listed := regexp.MustCompile(`(?m)^- ([a-z_]+): `)
	for _, text := range []bool{true, false} {
		raw, _ := llm.SchemaFor[Action]()
		if text {
			raw, _ = llm.SchemaFor[implTextAction]()
		}
		var schema struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		enum := schema.Properties["action"].Enum
		if !slices.Equal(enum, toolNames(text)) || len(enum) == 0 {
			t.Errorf("text=%v: schema enum %v, tools %v", text, enum, toolNames(text))
		}
		examples := implExamples{File: "pkg/calc.go", Symbol: "Add", Lang: "go", Ext: ".go", Dir: "pkg", NewFile: "pkg/helpers.go", Gate: "test", Content: "package calc\n"}
		docs, err := toolDocsFor(text, examples)
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.Compose(runstate.NodeImplementor, implData{Text: text, Tools: docs, Ex: examples}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var inPrompt []string
		for _, m := range listed.FindAllStringSubmatch(p.Messages[0].Content, -1) {
			inPrompt = append(inPrompt, m[1])
		}
		if !slices.Equal(inPrompt, enum) {
			t.Errorf("text=%v: the prompt lists %v, the schema allows %v", text, inPrompt, enum)
		}
		for _, d := range docs {
			var ex map[string]any
			if d.Example == "" {
				continue // described without an example (no summary or question to copy)
			}
			if err := json.Unmarshal([]byte(d.Example), &ex); err != nil || ex["action"] != d.Name {
				t.Errorf("text=%v: the example of %s is not a %s action: %s (%v)", text, d.Name, d.Name, d.Example, err)
			}
			tool, _ := toolNamed(d.Name)
			for _, param := range tool.params {
				if _, ok := schema.Properties[param]; !ok && (text && !tool.codeAfter || !text) {
					t.Errorf("text=%v: %s reads %q, which the schema does not have", text, d.Name, param)
				}
			}
			for k := range ex {
				if k != "thought" && k != "action" && !slices.Contains(tool.params, k) {
					t.Errorf("text=%v: the example of %s gives %q, which is not one of its params %v", text, d.Name, k, tool.params)
				}
			}
		}
	}
	// Every description belongs to a tool.
	files, _ := fs.Glob(toolDocs, "tools/*.md")
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(f, "tools/"), ".md"), ".text")
		if _, ok := toolNamed(name); !ok {
			t.Errorf("%s describes no tool", f)
		}
	}
}

// Asked for SEARCH/REPLACE blocks, a small coder wrote the whole file: it is
// read as the whole file; a fragment still gets the blocks' format asked for.
func TestAWholeFileWrittenWhereBlocksWereAskedIsTaken(t *testing.T) {
	t.Parallel()
	var old strings.Builder
	for i := range 40 {
		fmt.Fprintf(&old, "X%d = %d\n", i, i)
	}
	whole := strings.Replace(old.String(), "X3 = 3\n", "X3 = 33\n", 1)
	for name, tc := range map[string]struct {
		reply, content string
	}{
		"the whole file, changed":     {"```python\n" + whole + "```\n", whole},
		"a fragment of it":            {"```python\nX3 = 33\n```\n", ""},
		"the file with a part elided": {"```python\nX0 = 0\n# ... rest of the code\n" + whole + "```\n", ""},
	} {
		_, content, problem := parseCode(llm.Response{Content: tc.reply}, "consts.py", false, old.String())
		if content != tc.content || (content == "") != strings.Contains(problem, "no SEARCH/REPLACE block was found") {
			t.Errorf("%s: content %q, problem %q", name, content, problem)
		}
	}
}
