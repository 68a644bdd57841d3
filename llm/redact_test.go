package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// Fake secrets are assembled from pieces so secret scanners do not flag this
// file; they have the real formats.
var (
	fakeOpenRouter = "sk-or-" + "v1-" + strings.Repeat("a1b2c3d4", 8)
	fakeGitHub     = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	fakeAWS        = "AKIA" + "IOSFODNN7EXAMPLX"
)

func TestRedactMessagesKeepsToolArgumentsValidJSON(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"content": "OPENROUTER_API_KEY=` + fakeOpenRouter + `\n", "password": "hunter2", "path": ".env"}`)
	out := redactMessages([]Message{{Role: "assistant", Content: "writing " + fakeGitHub, ToolCalls: []ToolCall{{Name: "write_file", Arguments: args}}}})
	if strings.Contains(out[0].Content, fakeGitHub) {
		t.Errorf("content not redacted")
	}
	got := out[0].ToolCalls[0].Arguments
	if !json.Valid(got) || strings.Contains(string(got), fakeOpenRouter) || strings.Contains(string(got), "hunter2") {
		t.Errorf("arguments %s", got)
	}
	if !strings.Contains(string(got), `"path": ".env"`) {
		t.Errorf("ordinary fields must stay: %s", got)
	}
}

// A model's cut-off tool arguments are not JSON; what RedactJSON returns is
// embedded in prompt log lines and spans as raw JSON, so it must encode.
func TestRedactJSONOfTextThatIsNotJSONIsAJSONString(t *testing.T) {
	raw := json.RawMessage("{\"path\":\"a.go\", \"token\":\"ghp_Rm1tK9pQ2wE4rT6yU8iO0pA2sD4fG6hJ8kL0")
	got := RedactJSON(raw)
	var s string
	if err := json.Unmarshal(got, &s); err != nil {
		t.Fatalf("RedactJSON(%q) = %q, not a JSON string: %v", raw, got, err)
	}
	if strings.Contains(s, "ghp_Rm1tK9pQ2wE4rT6yU8") || !strings.Contains(s, "a.go") {
		t.Errorf("redacted text %q", s)
	}
}
