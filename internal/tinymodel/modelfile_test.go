package tinymodel

import (
	"encoding/json"
	"strings"
	"testing"
	"text/template"

	"github.com/ollama/ollama/api"
)

// render executes a template the way the server does: text/template with missingkey=zero
// and a json function, over .Messages and .Tools.
func render(t *testing.T, tmpl string, msgs []api.Message, tools api.Tools) string {
	t.Helper()
	funcs := template.FuncMap{"json": func(v any) string { b, _ := json.Marshal(v); return string(b) }}
	tp, err := template.New("").Option("missingkey=zero").Funcs(funcs).Parse(tmpl)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var b strings.Builder
	data := struct {
		Messages []api.Message
		Tools    api.Tools
	}{msgs, tools}
	if err := tp.Execute(&b, data); err != nil {
		t.Fatalf("execute: %v", err)
	}
	return b.String()
}

func conversation(t *testing.T) ([]api.Message, api.Tools) {
	t.Helper()
	var msgs []api.Message
	if err := json.Unmarshal([]byte(`[
		{"role": "system", "content": "Be brief."},
		{"role": "user", "content": "Read main.go"},
		{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "main.go"}}}]},
		{"role": "tool", "content": "package main"},
		{"role": "user", "content": "Thanks"}]`), &msgs); err != nil {
		t.Fatal(err)
	}
	var tools api.Tools
	if err := json.Unmarshal([]byte(`[{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
		"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]`), &tools); err != nil {
		t.Fatal(err)
	}
	return msgs, tools
}

func TestChatTemplateRendersRolesToolsAndToolCalls(t *testing.T) {
	msgs, tools := conversation(t)
	got := render(t, ChatTemplate, msgs, tools)
	want := `<|system|>You may call a tool by replying with only {"name": "<tool>", "arguments": {...}}. Tools:
{"name":"read_file","description":"Read a file.","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}}
<|end|>
<|system|>Be brief.<|end|>
<|user|>Read main.go<|end|>
<|assistant|>{"name": "read_file", "arguments": {"path":"main.go"}}<|end|>
<|tool|>package main<|end|>
<|user|>Thanks<|end|>
<|assistant|>`
	if got != want {
		t.Fatalf("rendered:\n%s\nwant:\n%s", got, want)
	}
	if without := render(t, ChatTemplate, msgs[:2], nil); without != "<|system|>Be brief.<|end|>\n<|user|>Read main.go<|end|>\n<|assistant|>" {
		t.Fatalf("without tools:\n%q", without)
	}
}

func TestNoToolsTemplateNeverMentionsTools(t *testing.T) {
	msgs, tools := conversation(t)
	got := render(t, NoToolsTemplate, msgs, tools)
	if strings.Contains(got, "read_file") || strings.Contains(NoToolsTemplate, ".Tools") || strings.Contains(NoToolsTemplate, ".ToolCalls") {
		t.Fatalf("the no-tools template shows tools:\n%s", got)
	}
	if !strings.HasSuffix(got, "<|tool|>package main<|end|>\n<|user|>Thanks<|end|>\n<|assistant|>") {
		t.Fatalf("rendered:\n%s", got)
	}
}

func TestModelfiles(t *testing.T) {
	chat, err := Modelfile(Chat, "tiny.gguf")
	if err != nil {
		t.Fatal(err)
	}
	wantChat := "FROM ./tiny.gguf\nTEMPLATE \"\"\"" + ChatTemplate + "\"\"\"\nPARAMETER stop \"<|end|>\"\nPARAMETER num_predict 128\nPARAMETER num_thread 1\n"
	if chat != wantChat {
		t.Errorf("chat Modelfile:\n%s", chat)
	}
	noTools, err := Modelfile(ChatNoTools, "./tiny.gguf")
	if err != nil || !strings.HasPrefix(noTools, "FROM ./tiny.gguf\nTEMPLATE \"\"\""+NoToolsTemplate+"\"\"\"\n") {
		t.Errorf("no-tools Modelfile (%v):\n%s", err, noTools)
	}
	embed, err := Modelfile(Embed, "/abs/tiny-embed.gguf")
	if err != nil || embed != "FROM /abs/tiny-embed.gguf\nPARAMETER num_thread 1\n" {
		t.Errorf("embed Modelfile (%v): %q", err, embed)
	}
	for _, tmpl := range []string{ChatTemplate, NoToolsTemplate} {
		if strings.Contains(tmpl, `"""`) {
			t.Error("a template holds the Modelfile's own quote")
		}
	}
	if _, err := Modelfile(Kind(9), "x.gguf"); err == nil {
		t.Error("unknown kind accepted")
	}
	for _, bad := range []string{"", "a\nFROM evil", `a"b`} {
		if _, err := Modelfile(Chat, bad); err == nil {
			t.Errorf("weights path %q accepted", bad)
		}
	}
}
