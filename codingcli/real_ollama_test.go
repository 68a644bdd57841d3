package codingcli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// Qwen Code against the real Ollama server's OpenAI-compatible /v1 with the
// trained SmolLM2-135M. A model that small does not do the task; what this
// asserts is that lemmings reads whatever the CLI makes of it: the run ends
// within its timeout, every line of the stream parses, and the outcome (a
// final message or the CLI's own error) is there to judge.
//
// Two models: SmolLM2 as its GGUF's template has it (no tools: Ollama answers
// Qwen Code's first request 400) and the same weights with a ChatML template
// that lists tools and renders tool calls as SmolLM2 was tuned to (<tool_call>),
// which Ollama then offers tools to and parses calls from.
func TestRealQwenOllamaTrained(t *testing.T) {
	bin := installedCLI(t, "qwen")
	s := realollama.Start(t, realollama.WithTrainedModels())
	mf := filepath.Join(t.TempDir(), "Modelfile")
	if err := os.WriteFile(mf, []byte("FROM "+s.Trained.Chat+"\n"+smolToolsTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Create(ctx, "smollm2-tools", mf); err != nil {
		t.Fatal(err)
	}
	t.Run("template without tools", func(t *testing.T) {
		res := runQwenOllama(t, bin, s.URL, s.Trained.Chat, false)
		if res.ExitCode == 0 || res.Failed == "" {
			t.Errorf("want the CLI's failure read: exit %d, failed %q", res.ExitCode, res.Failed)
		}
	})
	t.Run("template with tools", func(t *testing.T) { runQwenOllama(t, bin, s.URL, "smollm2-tools", true) })
}

// smolToolsTemplate is ChatML with Hermes-style tools, the format SmolLM2's
// instruct tuning used for function calling.
const smolToolsTemplate = `TEMPLATE """{{- if or .System .Tools }}<|im_start|>system
{{ if .System }}{{ .System }}{{ end }}
{{- if .Tools }}

You may call functions. The signatures are in <tools></tools>:
<tools>{{ range .Tools }}
{{ json .Function }}{{ end }}
</tools>
Call one as <tool_call>{"name": <name>, "arguments": <args>}</tool_call>{{ end }}<|im_end|>
{{ end }}
{{- range .Messages }}<|im_start|>{{ .Role }}
{{ if .Content }}{{ .Content }}{{ end }}
{{- if .ToolCalls }}<tool_call>
{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ json .Function.Arguments }}}
{{ end }}</tool_call>{{ end }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
PARAMETER stop <|im_end|>
PARAMETER num_ctx 256
`

// runQwenOllama runs Qwen Code on model. small cuts its request down:
// Qwen Code's own system prompt, skills list and 14 tools come to ~23,000
// tokens, which Ollama (num_ctx 4096) silently cuts to the last 4096 and then
// took over 2 minutes per request to read on one shared thread (Qwen Code's
// own request timeout), so no run ended within 5 minutes. QWEN_SYSTEM_MD
// replaces the system prompt, the settings keep write_file and turn the
// memory-extraction subagent off (~3,900 tokens remain; the model's
// num_ctx 256 cuts the rest, leaving the end: the task).
func runQwenOllama(t *testing.T, bin, url, model string, small bool) Result {
	dir := gitRepo(t)
	home := t.TempDir()
	env := map[string]string{"HOME": home, "OPENAI_API_KEY": "ollama", "OPENAI_BASE_URL": url + "/v1",
		"OPENAI_MODEL": model, "QWEN_CODE_MAX_OUTPUT_TOKENS": "24"}
	// Two turns at most, short answers, no retries, and a request timeout
	// past Qwen Code's 2 minutes (a loaded machine reads ~3 prompt tokens/s
	// on the runner's one thread): the point is the reading, not the model.
	modelSettings := `"model":{"maxSessionTurns":2,"generationConfig":{"timeout":420000,"maxRetries":0}}`
	settings := "{" + modelSettings + "}"
	if small {
		settings = "{" + modelSettings + `,"memory":{"enableManagedAutoMemory":false,"enableManagedAutoDream":false},
			"tools":{"core":["write_file"],"exclude":["agent","skill","tool_search","list_agents","get_goal","update_goal","tool_call"]}}`
		env["QWEN_SYSTEM_MD"] = filepath.Join(home, "system.md")
		if err := os.WriteFile(env["QWEN_SYSTEM_MD"], []byte("You are a coding assistant. Use the write_file tool to create files in the current directory.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, ".qwen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".qwen", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := Lookup("qwen")
	start := time.Now()
	var events []Event
	res, err := Run(context.Background(), withBinary(p, bin), Request{Sandbox: testBox(t),
		Dir: dir, Prompt: "Create a file hello.txt containing the word hello.", Model: model,
		Timeout: 8 * time.Minute, Env: env,
		OnEvent: func(e Event) { events = append(events, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("qwen + %s: %v, exit %d, %d events, %d tool calls, usage %+v, failed %q, final %q",
		model, time.Since(start).Round(time.Second), res.ExitCode, len(res.Events), res.ToolCalls, res.Usage, res.Failed, res.Final)
	if res.TimedOut {
		t.Fatalf("no end within the timeout; stderr:\n%s", res.Stderr)
	}
	if res.Unparsed != 0 {
		t.Errorf("%d stdout lines unparsed", res.Unparsed)
	}
	ended := false
	for _, e := range res.Events {
		ended = ended || e.Kind == EventResult
	}
	if !ended {
		t.Errorf("no result event; stderr:\n%s", res.Stderr)
	}
	switch {
	case res.ExitCode == 0 && res.Failed == "":
		if res.Usage.InputTokens == 0 {
			t.Errorf("a completed run without input tokens: %+v", res.Usage)
		}
	case res.Failed == "":
		t.Errorf("exit %d without the CLI's reason; stderr:\n%s", res.ExitCode, res.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err == nil {
		t.Logf("the model wrote hello.txt: %q", b)
	}
	return res
}
