package tinymodel

import (
	"fmt"
	"strings"
)

// ChatTemplate is the chat model's prompt template (Ollama's Go template syntax). It renders
// .Messages between role tokens and, when the request carries tools, lists them in a system
// turn. The server derives the "tools" capability and its tool-call parser from this text: a
// template without .Tools makes the server refuse requests with tools (400), and the
// {{ if .ToolCalls }} block, which starts with "{", tells the parser that a reply starting
// with a JSON object may be a tool call.
const ChatTemplate = `{{- if .Tools }}<|system|>You may call a tool by replying with only {"name": "<tool>", "arguments": {...}}. Tools:
{{ range .Tools }}{{ json .Function }}
{{ end }}<|end|>
{{ end }}
{{- range .Messages }}
{{- if eq .Role "system" }}<|system|>{{ .Content }}<|end|>
{{ else if eq .Role "assistant" }}<|assistant|>{{ .Content }}
{{- if .ToolCalls }}{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ json .Function.Arguments }}}{{ end }}{{ end }}<|end|>
{{ else if eq .Role "tool" }}<|tool|>{{ .Content }}<|end|>
{{ else }}<|user|>{{ .Content }}<|end|>
{{ end }}
{{- end }}<|assistant|>`

// NoToolsTemplate is ChatTemplate without tools: the server reports only "completion" and
// answers 400 "does not support tools" to a request that carries tools.
const NoToolsTemplate = `{{- range .Messages }}
{{- if eq .Role "system" }}<|system|>{{ .Content }}<|end|>
{{ else if eq .Role "assistant" }}<|assistant|>{{ .Content }}<|end|>
{{ else if eq .Role "tool" }}<|tool|>{{ .Content }}<|end|>
{{ else }}<|user|>{{ .Content }}<|end|>
{{ end }}
{{- end }}<|assistant|>`

// NumPredict is the reply budget the chat Modelfiles set: random weights rarely pick the end
// token, so without a cap every reply would run to the context's end.
const NumPredict = 128

// NumThread is the runner thread count every Modelfile sets. The model is so small that one
// thread is fast (hundreds of tokens/s), while ggml's default of one thread per core spins
// on barriers when the CPU is shared: measured here with a compile running beside it, 54
// tokens took 21 s with 2 threads and 0.02 s with 1.
const NumThread = 1

// Kind names one of the three generated models.
type Kind int

// The three generated models.
const (
	Chat        Kind = iota // completion + tools
	ChatNoTools             // completion only
	Embed                   // embedding (mean pooling)
)

// String returns the kind's short name, used in file names.
func (k Kind) String() string {
	switch k {
	case Chat:
		return "chat"
	case ChatNoTools:
		return "notools"
	case Embed:
		return "embed"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Modelfile returns the Modelfile text for a model of kind k whose weights are the file
// gguf, a path relative to the Modelfile's folder (or absolute).
func Modelfile(k Kind, gguf string) (string, error) {
	if gguf == "" || strings.ContainsAny(gguf, "\n\"") {
		return "", fmt.Errorf("modelfile: bad weights path %q", gguf)
	}
	from := gguf
	if !strings.HasPrefix(from, "/") && !strings.HasPrefix(from, ".") {
		from = "./" + from
	}
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", from)
	switch k {
	case Chat, ChatNoTools:
		tmpl := ChatTemplate
		if k == ChatNoTools {
			tmpl = NoToolsTemplate
		}
		fmt.Fprintf(&b, "TEMPLATE \"\"\"%s\"\"\"\n", tmpl)
		fmt.Fprintf(&b, "PARAMETER stop %q\n", TokenEnd)
		fmt.Fprintf(&b, "PARAMETER num_predict %d\n", NumPredict)
	case Embed:
	default:
		return "", fmt.Errorf("modelfile: unknown kind %v", k)
	}
	fmt.Fprintf(&b, "PARAMETER num_thread %d\n", NumThread)
	return b.String(), nil
}
