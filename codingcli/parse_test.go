package codingcli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Recorded output streams (testdata/README.md says where each came from) and
// what lemmings must read from them.
var recordings = []struct {
	file     string
	format   Format
	tools    []string
	usage    Usage
	final    string
	failed   string // substring of Result.Failed; "" when the run succeeded
	unparsed int
	warnings int
}{
	{file: "qwen-write.jsonl", format: FormatQwen, tools: []string{"write_file", "run_shell_command", "edit"},
		usage: Usage{InputTokens: 3784, OutputTokens: 93}, final: "Wrote hello.txt."},
	{file: "qwen-error.jsonl", format: FormatQwen, usage: Usage{},
		final: "[API Error: 401 invalid api key]", failed: "error_during_execution: [API Error: 401 invalid api key]"},
	{file: "qwen-cut.jsonl", format: FormatQwen, failed: "other side closed",
		final: "partial answer partial answer partial answer partial answer [API Error: terminated (cause: UND_ERR_SOCKET: other side closed)]"},
	{file: "codex-write.jsonl", format: FormatCodex, tools: []string{"shell"},
		usage: Usage{InputTokens: 2534, OutputTokens: 63}, final: "Wrote hello.txt.", warnings: 1},
	{file: "codex-fail.jsonl", format: FormatCodex, tools: []string{"shell"},
		usage: Usage{InputTokens: 1900, OutputTokens: 21}, final: "The command is missing; nothing changed.", warnings: 1},
	{file: "codex-error.jsonl", format: FormatCodex, failed: "unexpected status 401 Unauthorized: invalid api key", warnings: 7},
	// Claude Code repeats a message's usage on each of its content blocks'
	// lines; the result's total (and cost) is what counts.
	{file: "claude-write.jsonl", format: FormatClaude, tools: []string{"Write", "Bash"},
		usage: Usage{InputTokens: 3784, OutputTokens: 93, CostUSD: 0.012747}, final: "Wrote hello.txt."},
	{file: "claude-error.jsonl", format: FormatClaude,
		final: "Invalid API key · Fix external API key", failed: "Invalid API key · Fix external API key", warnings: 10},
	{file: "gemini-write.jsonl", format: FormatGemini, tools: []string{"write_file", "run_shell_command"},
		usage: Usage{InputTokens: 3784, OutputTokens: 93}, final: "Wrote hello.txt."},
	{file: "gemini-error.jsonl", format: FormatGemini, failed: "API key not valid"},
}

func TestParseRecordings(t *testing.T) {
	for _, rec := range recordings {
		t.Run(rec.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", rec.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res := read(f, newParser(rec.format), nil)
			var tools []string
			warnings := 0
			for _, e := range res.Events {
				if e.Kind == EventWarning {
					warnings++
				}
				if e.Kind == EventToolCall {
					tools = append(tools, e.Tool)
					if e.Text == "" {
						t.Errorf("tool call %s without its arguments", e.Tool)
					}
				}
			}
			if strings.Join(tools, ",") != strings.Join(rec.tools, ",") || res.ToolCalls != len(rec.tools) {
				t.Errorf("tools = %v (%d), want %v", tools, res.ToolCalls, rec.tools)
			}
			if res.Usage != rec.usage {
				t.Errorf("usage = %+v, want %+v", res.Usage, rec.usage)
			}
			if res.Final != rec.final {
				t.Errorf("final = %q, want %q", res.Final, rec.final)
			}
			if (rec.failed == "") != (res.Failed == "") || !strings.Contains(res.Failed, rec.failed) {
				t.Errorf("failed = %q, want %q", res.Failed, rec.failed)
			}
			if warnings != rec.warnings {
				t.Errorf("warnings = %d, want %d", warnings, rec.warnings)
			}
			if res.Unparsed != rec.unparsed {
				t.Errorf("unparsed = %d, want %d", res.Unparsed, rec.unparsed)
			}
		})
	}
}

// Every parser reads any bytes without panicking, and every non-blank line is
// either parsed or counted unparsed.
func FuzzParsers(f *testing.F) {
	for _, rec := range recordings {
		if b, err := os.ReadFile(filepath.Join("testdata", rec.file)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"assistant","message":{"content":"not a list"}}`))
	f.Add([]byte(`{"type":"result","is_error":true}` + "\n\n" + `not json`))
	f.Add([]byte(`{"type":"item.completed","item":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		for format := range parsers {
			var seen int
			res := read(bytes.NewReader(data), newParser(format), func(Event) { seen++ })
			if res.Unparsed > lines {
				t.Errorf("%s: %d unparsed of %d lines", format, res.Unparsed, lines)
			}
			if seen != len(res.Events) {
				t.Errorf("%s: OnEvent saw %d of %d events", format, seen, len(res.Events))
			}
		}
	})
}

// The command lines, as the CLIs' --help of the pinned versions documents
// them: headless, an event stream, unattended edits, the prompt on stdin.
func TestPresetCommandLines(t *testing.T) {
	want := map[string]string{
		"claude": "claude -p --output-format stream-json --verbose --permission-mode acceptEdits --model m1",
		"codex":  "codex exec --json --sandbox workspace-write --skip-git-repo-check --ephemeral --color never --model m1 -",
		"gemini": "gemini --output-format stream-json --approval-mode yolo --skip-trust --model m1 -p ",
		"qwen":   "qwen --output-format stream-json --approval-mode yolo --model m1",
	}
	if strings.Join(Names(), ",") != "claude,codex,gemini,qwen" {
		t.Fatalf("presets = %v", Names())
	}
	for name, line := range want {
		p, _ := Lookup(name)
		if got := strings.Join(p.argv(Request{Prompt: "do it", Model: "m1"}, false), " "); got != line {
			t.Errorf("%s: %q, want %q", name, got, line)
		}
		if got := strings.Join(p.argv(Request{Prompt: "do it"}, false), " "); strings.Contains(got, "--model") {
			t.Errorf("%s without a model: %q", name, got)
		}
		// Confined by lemmings, a CLI's own sandbox gives way to lemmings'.
		confined := strings.Join(p.argv(Request{Prompt: "do it", Model: "m1"}, true), " ")
		if name == "codex" {
			line = "codex exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check --ephemeral --color never --model m1 -"
		}
		if confined != line {
			t.Errorf("%s confined: %q, want %q", name, confined, line)
		}
		if !p.Stdin || p.Format == FormatText || len(p.Env) == 0 {
			t.Errorf("%s: stdin %v, format %q, env %v", name, p.Stdin, p.Format, p.Env)
		}
	}
}
