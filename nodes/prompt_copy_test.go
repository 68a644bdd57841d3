package nodes

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// A small coder returns a prompt's worked example as its answer (the first
// real run: `"path": "helpers.go"`, "Changed Example in helpers.go as the
// task asks."). So no example may name a file or a symbol that is not the
// task's or the repository's, and none may carry a summary or a question the
// model could hand back as its own. This renders every role template, and
// the Implementor's prompt as a real attempt composes it for a sample task in
// each protocol, and fails on any such name.
func TestNoPromptExampleNamesWhatTheTaskAndRepositoryDoNot(t *testing.T) {
	t.Parallel()
	repo := map[string]string{"go.mod": addGoMod, "calc/add.go": strings.Replace(addGo, "package add", "package calc", 1),
		"calc/add_test.go": strings.Replace(addTestGo, "package add", "package calc", 1)}
	known := map[string]bool{}
	for p := range repo {
		known[p] = true
		known[p[strings.LastIndex(p, "/")+1:]] = true
	}
	for _, sym := range []string{"Add", "TestAdd", "calc"} {
		known[sym] = true
	}

	var texts []string
	// Every template with its sample data.
	c, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	samples := PromptSamples()
	for _, role := range c.Roles() {
		if role == runstate.NodeImplementor {
			continue // composed for real below: its samples name sample files on purpose
		}
		for _, data := range samples[role] {
			out, err := c.Render(role, "", data)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, out)
		}
	}
	// The Implementor as it prompts for the sample task: the action loop in
	// both protocols, with and without target files, and the direct attempt.
	for _, tc := range []struct {
		protocol string
		targets  []string
		quick    bool
	}{
		{implementor.EditText, []string{"calc/add.go", "calc/add_test.go"}, false},
		{implementor.EditJSON, []string{"calc/add.go"}, false},
		{implementor.EditText, nil, false},
		{implementor.EditText, []string{"calc/add.go", "calc/add_test.go"}, true},
	} {
		r := newWeakRun(t, tc.protocol, repo, text("```go\n"+repo["calc/add.go"]+"```\n"))
		r.task.Title, r.task.Instructions = "Add must return the sum", "Add must return the sum of its arguments."
		r.task.TargetFiles = tc.targets
		r.d.Gates = []workspace.Gate{{Name: "test", Command: "true"}}
		if tc.quick {
			r.runQuick(t)
		} else {
			r.run(t)
		}
		calls := r.model.recorded()
		if len(calls) == 0 {
			t.Fatal("no call")
		}
		texts = append(texts, llmtest.Section(calls[0].FirstUser(), llm.RoleSection), calls[0].LastUser())
	}

	fileName := regexp.MustCompile(`\b[\w/.-]+\.(?:go|py|js|ts|rs|java|rb|txt)\b`)
	jsonExample := regexp.MustCompile(`\{"thought"[^\n]*\}`)
	for _, text := range texts {
		for _, f := range fileName.FindAllString(text, -1) {
			if !known[f] && !strings.HasPrefix(f, "*.") {
				t.Errorf("a prompt names the file %q, which is neither the task's nor the repository's:\n%.1500s", f, text)
			}
		}
		for _, ex := range jsonExample.FindAllString(text, -1) {
			var v map[string]any
			if err := json.Unmarshal([]byte(ex), &v); err != nil {
				t.Errorf("an example is not JSON: %s", ex)
				continue
			}
			for _, k := range []string{"summary", "question"} {
				if _, ok := v[k]; ok {
					t.Errorf("an example carries a %s to copy: %s", k, ex)
				}
			}
			for _, k := range []string{"path", "symbol"} {
				if s, ok := v[k].(string); ok && s != "." && !strings.HasPrefix(s, "*.") && !known[s] {
					t.Errorf("an example's %s %q is neither the task's nor the repository's: %s", k, s, ex)
				}
			}
		}
		for _, placeholder := range []string{"<every line", "<the whole", "…every line", "example.go", "helpers.go", "func Example", "count := 0"} {
			if strings.Contains(text, placeholder) {
				t.Errorf("a prompt carries %q, which a small coder copies as its answer:\n%.1500s", placeholder, text)
			}
		}
	}
}
