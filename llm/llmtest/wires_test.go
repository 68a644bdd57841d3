package llmtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func postWire(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvents reads a typed SSE stream into its data objects, checking each
// event name equals its data's type.
func sseEvents(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if m["type"] != event {
				t.Errorf("event %q carries type %v", event, m["type"])
			}
			out = append(out, m)
		}
	}
	return out
}

func TestResponsesAPI(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Script(
		Step{Name: "call", Match: func(c Call) bool { return len(c.Messages) == 2 },
			Reply: Reply{Content: "Running it.", ToolCalls: []ToolCall{{Name: "exec_command", Arguments: json.RawMessage(`{"cmd":"ls"}`)}}, PromptTokens: 100, CompletionTokens: 10}},
		Step{Name: "done", Contains: "file-a", Reply: Reply{Content: "Done.", PromptTokens: 120, CompletionTokens: 2}},
	)
	resp := postWire(t, s.URL()+"/v1/responses", `{"model":"m","instructions":"be brief","stream":true,
		"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}],
		"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},{"type":"web_search"}]}`)
	evs := sseEvents(t, resp.Body)
	var types []string
	for _, e := range evs {
		types = append(types, e["type"].(string))
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Fatalf("events %v", types)
	}
	done := evs[len(evs)-1]["response"].(map[string]any)
	out := done["output"].([]any)
	fc := out[1].(map[string]any)
	if len(out) != 2 || fc["type"] != "function_call" || fc["name"] != "exec_command" || fc["arguments"] != `{"cmd":"ls"}` {
		t.Errorf("output %v", out)
	}
	if u := done["usage"].(map[string]any); u["input_tokens"] != 100.0 || u["output_tokens"] != 10.0 {
		t.Errorf("usage %v", u)
	}
	c := s.Calls()[0]
	if c.API != OpenAI || len(c.Tools) != 1 || c.Messages[0].Role != "system" || c.Messages[1].Content != "list files" {
		t.Errorf("call decoded as %+v", c)
	}
	// The tool's output comes back as a tool message; not streamed, the
	// whole response object.
	resp = postWire(t, s.URL()+"/v1/responses", `{"model":"m","input":[
		{"type":"message","role":"user","content":"list files"},
		{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"},
		{"type":"function_call_output","call_id":"call_1","output":"file-a"}]}`)
	var whole map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&whole); err != nil {
		t.Fatal(err)
	}
	msg := whole["output"].([]any)[0].(map[string]any)
	if whole["status"] != "completed" || msg["content"].([]any)[0].(map[string]any)["text"] != "Done." {
		t.Errorf("response %v", whole)
	}
	c = s.Calls()[1]
	if len(c.Messages) != 3 || c.Messages[1].ToolCalls[0].Name != "exec_command" || c.Messages[2].Role != "tool" || c.Messages[2].ToolCallID != "call_1" {
		t.Errorf("call decoded as %+v", c.Messages)
	}
	if p := s.Pending(); len(p) != 0 {
		t.Errorf("pending %v", p)
	}
}

func TestAnthropicMessagesAPI(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Script(
		Step{Name: "call", API: Anthropic, Match: func(c Call) bool { return len(c.Messages) == 2 },
			Reply: Reply{Content: "Writing.", ToolCalls: []ToolCall{{Name: "Write", Arguments: json.RawMessage(`{"file_path":"a.txt","content":"a"}`)}}, PromptTokens: 300, CompletionTokens: 20}},
		Step{Name: "done", Contains: "File created", Reply: Reply{Content: "Done.", PromptTokens: 320, CompletionTokens: 3}},
	)
	resp := postWire(t, s.URL()+"/v1/messages", `{"model":"claude-x","max_tokens":1000,"stream":true,
		"system":[{"type":"text","text":"You are Claude Code."}],
		"messages":[{"role":"user","content":[{"type":"text","text":"write a.txt"}]}],
		"tools":[{"name":"Write","input_schema":{"type":"object"}}]}`)
	evs := sseEvents(t, resp.Body)
	var types []string
	var partial string
	for _, e := range evs {
		types = append(types, e["type"].(string))
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			partial += d["partial_json"].(string)
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(types, " ") != want {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(types, " "), want)
	}
	if partial != `{"file_path":"a.txt","content":"a"}` {
		t.Errorf("tool input %q", partial)
	}
	if d := evs[len(evs)-2]; d["delta"].(map[string]any)["stop_reason"] != "tool_use" || d["usage"].(map[string]any)["output_tokens"] != 20.0 {
		t.Errorf("message_delta %v", d)
	}
	resp = postWire(t, s.URL()+"/v1/messages", `{"model":"claude-x","max_tokens":1000,"messages":[
		{"role":"user","content":"write a.txt"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"a.txt"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"File created"}]}]}`)
	var whole map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&whole); err != nil {
		t.Fatal(err)
	}
	if whole["stop_reason"] != "end_turn" || whole["content"].([]any)[0].(map[string]any)["text"] != "Done." {
		t.Errorf("message %v", whole)
	}
	c := s.Calls()[1]
	if c.API != Anthropic || len(c.Messages) != 3 || c.Messages[1].ToolCalls[0].ID != "toolu_1" || c.Messages[2].Role != "tool" {
		t.Errorf("call decoded as %+v", c.Messages)
	}
	// A scripted status answers in Anthropic's error envelope.
	s.SetDefault(func(Call) Reply { return Reply{Status: 529, Content: "overloaded"} })
	resp = postWire(t, s.URL()+"/v1/messages", `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 529 || !strings.Contains(string(b), `"type":"error"`) || !strings.Contains(string(b), "overloaded") {
		t.Errorf("status %d body %s", resp.StatusCode, b)
	}
}

func TestGeminiAPI(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Script(
		Step{Name: "call", API: Gemini, Match: func(c Call) bool { return len(c.Tools) == 1 && len(c.Messages) == 2 },
			Reply: Reply{Content: "Writing it.", ToolCalls: []ToolCall{{Name: "write_file", Arguments: json.RawMessage(`{"file_path":"a.txt"}`)}}, PromptTokens: 50, CompletionTokens: 9}},
		Step{Name: "done", Contains: "written", Reply: Reply{Content: "Done.", PromptTokens: 60, CompletionTokens: 2}},
	)
	resp := postWire(t, s.URL()+"/v1beta/models/gemini-x:streamGenerateContent?alt=sse", `{
		"systemInstruction":{"parts":[{"text":"be brief"}]},
		"contents":[{"role":"user","parts":[{"text":"write a.txt"}]}],
		"tools":[{"functionDeclarations":[{"name":"write_file","parametersJsonSchema":{"type":"object"}}]}]}`)
	var chunks []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "data: ") {
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, m)
		}
	}
	last := chunks[len(chunks)-1]
	cand := last["candidates"].([]any)[0].(map[string]any)
	part := cand["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	if cand["finishReason"] != "STOP" || part["functionCall"].(map[string]any)["name"] != "write_file" {
		t.Errorf("last chunk %v", last)
	}
	if u := last["usageMetadata"].(map[string]any); u["promptTokenCount"] != 50.0 || u["candidatesTokenCount"] != 9.0 {
		t.Errorf("usage %v", u)
	}
	c := s.Calls()[0]
	if c.Model != "gemini-x" || !c.Stream || c.Messages[0].Role != "system" || c.Tools[0].Parameters == nil {
		t.Errorf("call decoded as %+v", c)
	}
	resp = postWire(t, s.URL()+"/v1beta/models/gemini-x:generateContent", `{"contents":[
		{"role":"user","parts":[{"text":"write a.txt"}]},
		{"role":"model","parts":[{"functionCall":{"name":"write_file","args":{"file_path":"a.txt"}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"write_file","response":{"output":"written"}}}]}]}`)
	var whole map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&whole); err != nil {
		t.Fatal(err)
	}
	text := whole["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"]
	if text != "Done." {
		t.Errorf("response %v", whole)
	}
	c = s.Calls()[1]
	if c.Stream || len(c.Messages) != 3 || c.Messages[1].ToolCalls[0].Name != "write_file" || c.Messages[2].Role != "tool" {
		t.Errorf("call decoded as %+v", c.Messages)
	}
}
