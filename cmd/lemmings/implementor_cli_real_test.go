package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/internal/realollama"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// installedQwen is Qwen Code as `make clis` installs it (.tools/clis, or
// $LEMMINGS_CLIS_DIR); it runs only when asked (LEMMINGS_REAL_OLLAMA=1:
// make test-ollama, which runs make clis), and then its absence fails.
func installedQwen(t *testing.T) string {
	t.Helper()
	realollama.SkipUnlessAsked(t)
	dir := os.Getenv("LEMMINGS_CLIS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", ".tools", "clis")
	}
	bin, err := filepath.Abs(filepath.Join(dir, "node_modules", ".bin", "qwen"))
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		msg := "Qwen Code is not installed in " + dir + ": run `make clis` to test lemmings with the real qwen preset"
		if os.Getenv("LEMMINGS_REAL_OLLAMA") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: Qwen Code needs Node.js 20 or later")
	}
	return bin
}

func openAIToolResults(c llmtest.Call) int {
	n := 0
	for _, m := range c.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

// Real Qwen Code as the Implementor of a real `lemmings run`, through the
// qwen preset: the scripted OpenAI-compatible server answers its calls (a
// real run_shell_command tool call fixes the file), the demo's scripted
// models plan and review, lemmings runs the gates and commits.
func TestRealQwenCodeImplementsATaskOfALemmingsRun(t *testing.T) {
	qwen := installedQwen(t)
	fix, _ := json.Marshal(map[string]string{
		"command":     `sed -i 's#float64(total / len(words))#float64(total) / float64(len(words))#' textstats.go`,
		"description": "convert before dividing",
	})
	fromQwen := func(c llmtest.Call) bool { return llmtest.RoleOf(firstSystem(c)) == "" }
	srv := demo.NewServer(&demo.Script{},
		llmtest.Step{Name: "qwen-fix", API: llmtest.OpenAI, Match: func(c llmtest.Call) bool { return fromQwen(c) && openAIToolResults(c) == 0 },
			Reply: llmtest.Reply{Content: "I will convert before dividing.", ToolCalls: []llmtest.ToolCall{{Name: "run_shell_command", Arguments: fix}},
				PromptTokens: 2100, CompletionTokens: 40}},
		llmtest.Step{Name: "qwen-done", API: llmtest.OpenAI, Times: -1, Match: func(c llmtest.Call) bool { return fromQwen(c) && openAIToolResults(c) > 0 },
			Reply: llmtest.Reply{Content: "MeanWordLength now converts to float64 before dividing.", PromptTokens: 2300, CompletionTokens: 12}},
	)
	defer srv.Close()
	k := &cliCase{t: t, repo: prepared(t), srv: srv}
	tmp := t.TempDir()
	k.plan = filepath.Join(tmp, "plan.yaml")
	writeFile(t, k.plan, `milestones:
  - goal: The test suite passes.
    tasks:
      - title: Fix MeanWordLength integer division
        instructions: MeanWordLength in textstats.go divides two ints before converting to float64, so TestMeanWordLength fails. Convert before dividing.
        acceptance_criteria: ["MeanWordLength returns the exact mean", "go test ./... passes"]
        target_files: [textstats.go]
`)
	k.c = newCLI(t, "PATH="+filepath.Dir(qwen)+string(os.PathListSeparator)+os.Getenv("PATH"), "OPENAI_API_KEY=sk-must-not-reach-qwen")
	k.c.config(scriptedConfig(srv.URL(), "blocking") + fmt.Sprintf(`implementor:
  backend: cli
  cli:
    preset: qwen
    model: %[2]s
    timeout: 3m
    env:
      HOME: %[3]q
      OPENAI_BASE_URL: %[1]s/v1
      OPENAI_API_KEY: scripted-key
      OPENAI_MODEL: %[2]s
`, srv.URL(), demo.PrimaryModel, t.TempDir()))
	r, res := k.run()
	if r.code != 0 || res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
	}
	if got := git(t, k.repo, "show", res["branch"].(string)+":textstats.go"); !strings.Contains(got, meanFix) {
		t.Errorf("the committed textstats.go lacks Qwen Code's fix:\n%s", got)
	}
	if log := branchLog(t, k.repo, res["branch"].(string)); len(log) != 1 || !strings.HasSuffix(log[0], "|t1") {
		t.Errorf("branch log %q, want one commit for t1", log)
	}
	runs := k.events(res, "cli_run")
	if len(runs) != 1 || runs[0]["cli"] != "qwen" || runs[0]["tool_calls"] != float64(1) ||
		runs[0]["input_tokens"].(float64) < 2100 || runs[0]["output_tokens"].(float64) < 40 {
		t.Errorf("cli_run %v", runs)
	}
	// Qwen Code used the key lemmings was told to give it, not lemmings' own.
	qwenCalls := 0
	for _, c := range srv.ChatCalls() {
		if fromQwen(c) && c.API == llmtest.OpenAI {
			qwenCalls++
			if a := c.Header.Get("Authorization"); a != "Bearer scripted-key" {
				t.Errorf("Qwen Code's call %d sent %q", c.Seq, a)
			}
		}
	}
	if qwenCalls < 2 {
		t.Errorf("Qwen Code made %d calls", qwenCalls)
	}
}

func firstSystem(c llmtest.Call) string {
	if len(c.Messages) > 0 && c.Messages[0].Role == "system" {
		return c.Messages[0].Content
	}
	return ""
}
