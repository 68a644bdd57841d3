package codingcli

import "sort"

// presets are the CLIs lemmings knows. Each command line runs the CLI once,
// headless, allowed to edit files and run commands in its directory without
// asking (lemmings' gates and review judge the result; its worktree bounds
// the damage), printing an event stream. The flags and formats were read from
// each CLI's --help and sources and, for Qwen Code, from real runs (see
// docs/backends.md and testdata/README.md).
var presets = map[string]Preset{
	// Claude Code: -p with the prompt on stdin; acceptEdits lets it edit
	// files in its directory without asking (anything else it may not do
	// is denied, not asked, in -p mode). ANTHROPIC_BASE_URL points it at any
	// server speaking Anthropic's Messages API.
	"claude": {Name: "claude",
		Args:    []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--model", "{model}"},
		Stdin:   true,
		Format:  FormatClaude,
		Install: "npm install -g @anthropic-ai/claude-code (a native binary inside the npm package)",
		Login:   "run `claude` once and log in with a Claude account, or set ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL points it at another Anthropic-compatible server",
		Env: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "CLAUDE_CONFIG_DIR",
			"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "AWS_REGION", "AWS_PROFILE", "CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID"},
		SetEnv:      map[string]string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"},
		Writable:    []string{"~/.claude/", "~/.claude.json", "$CLAUDE_CONFIG_DIR/"},
		Credentials: []string{"~/.claude/.credentials.json", "$CLAUDE_CONFIG_DIR/.credentials.json"}},
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
		},
		// Qwen Code keeps memories under ~/.qwen between runs (a second
		// request after every run extracts them); each attempt must start
		// fresh. System settings override the user's and the project's.
		Settings:    `{"memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false}}`,
		SettingsEnv: "QWEN_CODE_SYSTEM_SETTINGS_PATH",
		Writable:    []string{"~/.qwen/", "$QWEN_HOME/"},
		Credentials: []string{"~/.qwen/oauth_creds.json", "$QWEN_HOME/oauth_creds.json"}},
	// Codex CLI: `exec` never asks for approval; the workspace-write sandbox
	// lets its commands write in the directory only (and reach no network).
	// Confined by lemmings, its own sandbox (bubblewrap) cannot start: it
	// runs its commands directly, inside lemmings' sandbox.
	// "-" reads the prompt from stdin. A local server is a model provider in
	// $CODEX_HOME/config.toml with wire_api = "responses" (docs/backends.md).
	"codex": {Name: "codex",
		Args:        []string{"codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "--ephemeral", "--color", "never", "--model", "{model}", "-"},
		Stdin:       true,
		Format:      FormatCodex,
		Install:     "npm install -g @openai/codex (a native binary inside the npm package)",
		Login:       "run `codex login` (ChatGPT account) or set CODEX_API_KEY; for a local server add a model provider with base_url and wire_api = \"responses\" to $CODEX_HOME/config.toml",
		Env:         []string{"CODEX_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"},
		Writable:    []string{"~/.codex/", "$CODEX_HOME/"},
		Credentials: []string{"~/.codex/auth.json", "$CODEX_HOME/auth.json"},
		OwnSandbox:  []string{"--sandbox", "workspace-write"},
		Confined:    []string{"--dangerously-bypass-approvals-and-sandbox"}},
	// Gemini CLI: yolo approves its tools (its own sandbox is off unless
	// configured). It speaks only the Gemini API; GOOGLE_GEMINI_BASE_URL
	// moves that API elsewhere, but no OpenAI-compatible server speaks it.
	"gemini": {Name: "gemini",
		Args:    []string{"gemini", "--output-format", "stream-json", "--approval-mode", "yolo", "--skip-trust", "--model", "{model}", "-p", ""},
		Stdin:   true,
		Format:  FormatGemini,
		Install: "npm install -g @google/gemini-cli",
		Login:   "set GEMINI_API_KEY (a key from Google AI Studio), or run `gemini` once interactively to sign in with Google, or set GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION",
		Env: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI",
			"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS", "GEMINI_CLI_HOME"},
		Writable:    []string{"~/.gemini/", "$GEMINI_CLI_HOME/"},
		Credentials: []string{"~/.gemini/oauth_creds.json"}},
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

// Formats lists the stream formats a custom command may print, sorted.
func Formats() []string {
	out := []string{string(FormatText)}
	for f := range parsers {
		out = append(out, string(f))
	}
	sort.Strings(out)
	return out
}
