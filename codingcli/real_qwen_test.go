package codingcli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// toolResults counts the tool messages a chat completion request carries:
// how far into the task the CLI is.
func toolResults(c llmtest.Call) int {
	n := 0
	for _, m := range c.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

// Qwen Code itself, driven by a scripted OpenAI-compatible server: its tool
// calls are real (the file is written by Qwen Code's write_file tool), and
// lemmings reads its event stream.
func TestRealQwenScripted(t *testing.T) {
	bin := installedCLI(t, "qwen")
	dir := gitRepo(t)
	srv := llmtest.NewServer()
	defer srv.Close()
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(dir, "hello.go"), "content": "package hello\n\nconst Greeting = \"hello\"\n"})
	srv.Script(
		llmtest.Step{Name: "write", Match: func(c llmtest.Call) bool { return toolResults(c) == 0 },
			Reply: llmtest.Reply{Content: "Writing the file.", ToolCalls: []llmtest.ToolCall{{Name: "write_file", Arguments: args}},
				PromptTokens: 1234, CompletionTokens: 56}},
		llmtest.Step{Name: "shell", Match: func(c llmtest.Call) bool { return toolResults(c) == 1 },
			Reply: llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "run_shell_command", Arguments: json.RawMessage(`{"command":"git status --short","description":"check"}`)}},
				PromptTokens: 1300, CompletionTokens: 20}},
		llmtest.Step{Name: "final", Match: func(c llmtest.Call) bool { return toolResults(c) == 2 && strings.Contains(c.Prompt, "hello.go") },
			Reply: llmtest.Reply{Content: "Added hello.go with the greeting.", PromptTokens: 1400, CompletionTokens: 9}},
	)
	p, _ := Lookup("qwen")
	var seen []Event
	res, err := Run(context.Background(), withBinary(p, bin), Request{Sandbox: testBox(t),
		Dir: dir, Prompt: "Add hello.go declaring the constant Greeting = \"hello\".", Model: "scripted",
		Timeout: 2 * time.Minute,
		Env: map[string]string{"HOME": t.TempDir(), "OPENAI_API_KEY": "test-key",
			"OPENAI_BASE_URL": srv.URL() + "/v1", "OPENAI_MODEL": "scripted"},
		OnEvent: func(e Event) { seen = append(seen, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Failed != "" {
		t.Fatalf("exit %d, timed out %v, failed %q; stderr:\n%s", res.ExitCode, res.TimedOut, res.Failed, res.Stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "hello.go"))
	if err != nil || string(got) != "package hello\n\nconst Greeting = \"hello\"\n" {
		t.Fatalf("hello.go = %q, %v", got, err)
	}
	if pending := srv.Pending(); len(pending) > 0 {
		t.Errorf("steps never called: %v", pending)
	}
	if res.ToolCalls != 2 {
		t.Errorf("tool calls = %d, want 2 (write_file, run_shell_command); events %+v", res.ToolCalls, res.Events)
	}
	var tools []string
	for _, e := range res.Events {
		if e.Kind == EventToolCall {
			tools = append(tools, e.Tool)
		}
	}
	if strings.Join(tools, ",") != "write_file,run_shell_command" {
		t.Errorf("tools = %v", tools)
	}
	want := Usage{InputTokens: 1234 + 1300 + 1400, OutputTokens: 56 + 20 + 9}
	if res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}
	if res.Final != "Added hello.go with the greeting." {
		t.Errorf("final = %q", res.Final)
	}
	if res.Unparsed != 0 {
		t.Errorf("%d stdout lines unparsed", res.Unparsed)
	}
	if len(seen) != len(res.Events) {
		t.Errorf("OnEvent saw %d events, result has %d", len(seen), len(res.Events))
	}
	// Nothing of lemmings' environment reached the CLI: the requests carry
	// the key the test set.
	for _, c := range srv.ChatCalls() {
		if a := c.Header.Get("Authorization"); a != "Bearer test-key" {
			t.Errorf("call %d Authorization = %q", c.Seq, a)
		}
	}
}

// A server that refuses the key: Qwen Code exits 1 with an error result,
// which lemmings reads as the CLI's own failure.
func TestRealQwenServerError(t *testing.T) {
	bin := installedCLI(t, "qwen")
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.SetDefault(func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Status: 401, Body: `{"error":{"message":"invalid api key","type":"invalid_request_error"}}`}
	})
	p, _ := Lookup("qwen")
	res, err := Run(context.Background(), withBinary(p, bin), Request{Sandbox: testBox(t),
		Dir: gitRepo(t), Prompt: "Do anything.", Model: "scripted", Timeout: 2 * time.Minute,
		Env: map[string]string{"HOME": t.TempDir(), "OPENAI_API_KEY": "wrong",
			"OPENAI_BASE_URL": srv.URL() + "/v1", "OPENAI_MODEL": "scripted"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(res.Failed, "401") {
		t.Fatalf("exit %d, failed %q; want a non-zero exit and the 401 reported; stderr:\n%s", res.ExitCode, res.Failed, res.Stderr)
	}
}
