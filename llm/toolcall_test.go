package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

var testTools = []Tool{
	{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "finish", Description: "The task is done.", Parameters: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}}}`)},
}

func TestParseToolCalls(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		content string
		want    []string // name:arguments
	}{
		{"bare JSON action", `{"tool": "read_file", "arguments": {"path": "a.go"}}`, []string{`read_file:{"path":"a.go"}`}},
		{"fenced action in prose", "I'll read it.\n```json\n{\"tool\": \"read_file\", \"arguments\": {\"path\": \"b.go\"}}\n```", []string{`read_file:{"path":"b.go"}`}},
		{"hermes tool_call tags", "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"c.go\"}}\n</tool_call>", []string{`read_file:{"path":"c.go"}`}},
		{"two tagged calls", `<tool_call>{"name":"read_file","arguments":{"path":"x"}}</tool_call><tool_call>{"name":"finish","arguments":{"summary":"ok"}}</tool_call>`,
			[]string{`read_file:{"path":"x"}`, `finish:{"summary":"ok"}`}},
		{"unclosed tag (truncated)", `<tool_call>{"name": "finish", "arguments": {"summary": "done"`, []string{`finish:{"summary":"done"}`}},
		{"parameters instead of arguments", `{"name": "read_file", "parameters": {"path": "d.go"}}`, []string{`read_file:{"path":"d.go"}`}},
		{"arguments as a JSON string", `{"tool": "read_file", "arguments": "{\"path\": \"e.go\"}"}`, []string{`read_file:{"path":"e.go"}`}},
		{"flattened arguments", `{"tool": "read_file", "path": "f.go"}`, []string{`read_file:{"path":"f.go"}`}},
		{"openai shape in text", `{"function": {"name": "finish", "arguments": {"summary": "s"}}}`, []string{`finish:{"summary":"s"}`}},
		{"a list of actions", `[{"tool": "read_file", "arguments": {"path": "g"}}, {"tool": "finish", "arguments": {}}]`, []string{`read_file:{"path":"g"}`, `finish:{}`}},
		{"repairs sloppy JSON", `{tool: 'read_file', arguments: {path: 'h.go',},}`, []string{`read_file:{"path":"h.go"}`}},
		{"unknown tool is not a call", `{"tool": "rm_rf", "arguments": {}}`, nil},
		{"ordinary JSON answer is not a call", `{"name": "lemmings", "version": 2}`, nil},
		{"plain prose", "I would call read_file on a.go next.", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := ParseToolCalls(c.content, testTools)
			var gs []string
			for _, tc := range got {
				gs = append(gs, tc.Name+":"+string(tc.Arguments))
				if tc.ID == "" {
					t.Errorf("call without an id")
				}
			}
			if strings.Join(gs, "|") != strings.Join(c.want, "|") {
				t.Errorf("got %v, want %v", gs, c.want)
			}
		})
	}
}

func TestToolFallbackWhenTheModelRefusesNativeTools(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "tiny", Capabilities: []string{"completion"}}))
	defer srv.Close()
	srv.Script(llmtest.Step{Times: -1, Match: func(c llmtest.Call) bool { return len(c.Tools) == 0 },
		Reply: llmtest.Reply{Content: "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"go.mod\"}}</tool_call>"}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "tiny")}})
	msgs := []Message{
		{Role: "system", Content: "You are the implementor."},
		{Role: "user", Content: "Do the task."},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c0", Name: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`)}}},
		{Role: "tool", ToolCallID: "c0", Content: "# readme"},
	}
	for round := 0; round < 2; round++ {
		resp, err := r.Chat(context.Background(), Request{Role: "primary", Messages: msgs, Tools: testTools})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "read_file" || string(resp.ToolCalls[0].Arguments) != `{"path":"go.mod"}` {
			t.Fatalf("round %d: tool calls %+v", round, resp.ToolCalls)
		}
	}
	calls := srv.ChatCalls()
	// Round 1: native tools refused (400), then the fallback; round 2 goes
	// straight to the fallback.
	if len(calls) != 3 || len(calls[0].Tools) != 2 || len(calls[1].Tools) != 0 || len(calls[2].Tools) != 0 {
		t.Fatalf("calls: %d, tools per call %d/%d/%d", len(calls), len(calls[0].Tools), len(calls[1].Tools), len(calls[2].Tools))
	}
	fb := calls[1].Messages
	if fb[0].Role != "system" || !strings.Contains(fb[0].Content, "You are the implementor.") ||
		!strings.Contains(fb[0].Content, `{"tool": "<tool name>"`) || !strings.Contains(fb[0].Content, "- read_file: Read a file.") {
		t.Errorf("system message lacks the tool description: %q", fb[0].Content)
	}
	if fb[2].Role != "assistant" || fb[2].Content != `{"tool":"read_file","arguments":{"path":"README.md"}}` || len(fb[2].ToolCalls) != 0 {
		t.Errorf("earlier call not rendered as an action: %+v", fb[2])
	}
	if fb[3].Role != "user" || !strings.Contains(fb[3].Content, "Result of read_file") {
		t.Errorf("tool result not rendered for the model: %+v", fb[3])
	}
}

func TestToolCallWrittenAsTextByANativeToolModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: "Let me finish.\n```json\n{\"tool\": \"finish\", \"arguments\": {\"summary\": \"added flag\"}}\n```"}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	resp, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("go"), Tools: testTools})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "finish" {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
	if len(srv.ChatCalls()) != 1 || len(srv.ChatCalls()[0].Tools) != 2 {
		t.Errorf("native tools should have been sent once")
	}
}

func TestOpenAIToolsUnsupportedFallsBack(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(
		llmtest.Step{Match: func(c llmtest.Call) bool { return len(c.Tools) > 0 },
			Reply: llmtest.Reply{Status: 404, Body: `{"error":{"message":"No endpoints found that support tool use.","code":404}}`}},
		llmtest.Step{Reply: llmtest.Reply{Content: `{"tool":"finish","arguments":{"summary":"ok"}}`}},
	)
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"supervisor": openrouterRole(srv, "m")}})
	resp, err := r.Chat(context.Background(), Request{Role: "supervisor", Messages: userMsg("go"), Tools: testTools})
	if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "finish" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}
