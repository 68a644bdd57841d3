package codingcli

import "sort"

// presets are the CLIs lemmings knows. Each command line runs the CLI once,
// headless, allowed to edit files and run commands in its directory without
// asking (lemmings' gates and review judge the result; its worktree bounds
// the damage), printing an event stream. The flags and formats were read from
// each CLI's --help and sources and, for Qwen Code, from real runs (see
// docs/backends.md and testdata/README.md).
var presets = map[string]Preset{
	// Qwen Code reads the prompt from stdin when it is not a terminal (no
	// argv length limit, no prompt mistaken for a flag). It talks to any
	// OpenAI-compatible server.
	"qwen": {Name: "qwen",
		Args:    []string{"qwen", "--output-format", "stream-json", "--approval-mode", "yolo", "--model", "{model}"},
		Stdin:   true,
		Format:  FormatQwen,
		Install: "npm install -g @qwen-code/qwen-code@0.24.4 (Node.js 20 or later; `make clis` installs it into .tools/clis)",
		Login:   "set OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL for any OpenAI-compatible server (Ollama: OPENAI_BASE_URL=http://127.0.0.1:11434/v1, any key), or run `qwen` once interactively to log in",
		Env:     []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "QWEN_HOME"},
		SetEnv: map[string]string{
			"QWEN_USAGE_STATISTICS_ENABLED":   "false",
			"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
		}},
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
