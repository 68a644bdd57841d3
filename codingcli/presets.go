package codingcli

import "sort"

// presets are the CLIs lemmings knows. The command lines and formats are
// filled in and tested against the real CLIs (see docs/backends.md).
var presets = map[string]Preset{
	"qwen": {Name: "qwen", Args: []string{"qwen", "-p", "{prompt}", "--model", "{model}", "--output-format", "stream-json", "--yolo"},
		Format: FormatQwen, Install: "npm install -g @qwen-code/qwen-code",
		Login: "set OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL (any OpenAI-compatible server, e.g. Ollama's /v1)",
		Env:   []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"}},
}

// Lookup returns the preset of that name.
func Lookup(name string) (Preset, bool) {
	p, ok := presets[name]
	return p, ok
}

// Names lists the presets, sorted.
func Names() []string {
	var out []string
	for n := range presets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
