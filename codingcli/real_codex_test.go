package codingcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// codexHome writes a CODEX_HOME whose model provider is the server at
// baseURL (Codex speaks only the Responses API to a custom provider). Plugins
// off: with them on, Codex looks up its marketplace hosts at start.
func codexHome(t *testing.T, baseURL string) string {
	t.Helper()
	home := t.TempDir()
	cfg := fmt.Sprintf(`model_provider = "local"
check_for_update_on_startup = false

[features]
plugins = false

[analytics]
enabled = false

[model_providers.local]
name = "local"
base_url = %q
env_key = "LOCAL_MODEL_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, baseURL)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// Codex CLI itself against the scripted Responses API: its exec_command tool
// really runs in the repository, confined by lemmings' sandbox (Codex's own
// cannot start inside it), which refuses a write outside the repository.
func TestRealCodexScripted(t *testing.T) {
	bin := installedCLI(t, "codex")
	dir := gitRepo(t)
	outside := filepath.Join(t.TempDir(), "escaped")
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(
		llmtest.Step{Name: "write", Match: func(c llmtest.Call) bool { return toolResults(c) == 0 },
			Reply: llmtest.Reply{Content: "Writing the file.", ToolCalls: []llmtest.ToolCall{{Name: "exec_command",
				Arguments: json.RawMessage(`{"cmd":"printf 'package hello\\n' > hello.go && git status --short; printf x > ` + outside + `"}`)}},
				PromptTokens: 2100, CompletionTokens: 40}},
		llmtest.Step{Name: "final", Match: func(c llmtest.Call) bool {
			return toolResults(c) == 1 && strings.Contains(c.Prompt, "?? hello.go")
		}, Reply: llmtest.Reply{Content: "Added hello.go.", PromptTokens: 2200, CompletionTokens: 5}},
	)
	p, _ := Lookup("codex")
	res, err := Run(context.Background(), withBinary(p, bin), Request{Sandbox: testBox(t),
		Dir: dir, Prompt: "Add hello.go declaring package hello.", Model: "scripted", Timeout: 2 * time.Minute,
		Env: map[string]string{"HOME": t.TempDir(), "CODEX_HOME": codexHome(t, srv.URL()+"/v1"), "LOCAL_MODEL_KEY": "test-key"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Failed != "" {
		t.Fatalf("exit %d, timed out %v, failed %q; stderr:\n%s", res.ExitCode, res.TimedOut, res.Failed, res.Stderr)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "hello.go")); err != nil || string(got) != "package hello\n" {
		t.Fatalf("hello.go = %q, %v", got, err)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a command of Codex wrote outside its repository: %s (%v)", outside, err)
	}
	if pending := srv.Pending(); len(pending) > 0 {
		t.Errorf("steps never called: %v (calls: %d)", pending, len(srv.Calls()))
	}
	if res.ToolCalls != 1 || res.Events[0].Kind == "" {
		t.Errorf("tool calls = %d, want 1; events %+v", res.ToolCalls, res.Events)
	}
	if want := (Usage{InputTokens: 2100 + 2200, OutputTokens: 40 + 5}); res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}
	if res.Final != "Added hello.go." || res.Unparsed != 0 {
		t.Errorf("final %q, %d unparsed", res.Final, res.Unparsed)
	}
	for _, c := range srv.Calls() {
		if a := c.Header.Get("Authorization"); a != "Bearer test-key" {
			t.Errorf("call %d to %s: Authorization %q", c.Seq, c.Path, a)
		}
	}
}
