package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

func readLog(t *testing.T, path string) ([]LogEntry, string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []LogEntry
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var e LogEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, sc.Text())
		}
		out = append(out, e)
	}
	return out, string(raw)
}

func TestPromptLogIsRedactedAndCloudPromptsToo(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(
		llmtest.Step{API: llmtest.OpenAI, Reply: llmtest.Reply{Content: "Never commit " + fakeGitHub + " again.", Cost: 0.002, PromptTokens: 50, CompletionTokens: 9}},
		llmtest.Step{API: llmtest.Ollama, Reply: llmtest.Reply{Content: "ok, rotating " + fakeAWS}},
		llmtest.Step{API: llmtest.Ollama, Reply: llmtest.Reply{Status: 400, Content: "bad input near DB_PASSWORD=Hunter2Hunter2"}},
	)
	logPath := filepath.Join(t.TempDir(), ".lemmings", "prompts.jsonl")
	r, _ := newRouter(t, RouterConfig{PromptLog: logPath, Roles: map[string]RoleSpec{
		"supervisor": openrouterRole(srv, "big/model"),
		"primary":    ollamaRole(srv, "small"),
	}})
	ctx := context.Background()
	secretPrompt := "The .env file says OPENROUTER_API_KEY=" + fakeOpenRouter + " and DB_PASSWORD=Hunter2Hunter2"

	if _, err := r.Chat(ctx, Request{Role: "supervisor", Label: "code_style", Messages: userMsg(secretPrompt)}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Chat(ctx, Request{Role: "primary", Label: "implementor", Messages: userMsg(secretPrompt), Tools: testTools}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Chat(ctx, Request{Role: "primary", Label: "qa", Messages: userMsg("x")}); err == nil {
		t.Fatal("want the scripted 400")
	}

	calls := srv.ChatCalls()
	if strings.Contains(calls[0].Prompt, fakeOpenRouter) || strings.Contains(calls[0].Prompt, "Hunter2Hunter2") {
		t.Errorf("a secret was sent to the cloud: %q", calls[0].Prompt)
	}
	if !strings.Contains(calls[0].Prompt, "[REDACTED:openrouter-key]") {
		t.Errorf("cloud prompt: %q", calls[0].Prompt)
	}
	if !strings.Contains(calls[1].Prompt, fakeOpenRouter) {
		t.Errorf("the local model should see the prompt as it is")
	}

	entries, raw := readLog(t, logPath)
	for _, secret := range []string{fakeOpenRouter, "Hunter2Hunter2", fakeGitHub, fakeAWS} {
		if strings.Contains(raw, secret) {
			t.Errorf("secret %q in the prompt log", secret)
		}
	}
	if len(entries) != 3 {
		t.Fatalf("%d log lines, want 3", len(entries))
	}
	e := entries[0]
	if e.Role != "supervisor" || e.Label != "code_style" || e.Provider != "openrouter" || e.Model != "big/model" ||
		e.Usage.CostUSD != 0.002 || e.Usage.PromptTokens != 50 || e.Attempts != 1 || !strings.Contains(e.Reply, "[REDACTED:github-pat]") {
		t.Errorf("entry 0 %+v", e)
	}
	if len(e.Messages) != 1 || !strings.Contains(e.Messages[0].Content, "[REDACTED:") {
		t.Errorf("entry 0 messages %+v", e.Messages)
	}
	if e1 := entries[1]; e1.Label != "implementor" || strings.Join(e1.Tools, ",") != "read_file,finish" || e1.NumCtx == 0 || e1.Usage.TokensPerSecond == 0 {
		t.Errorf("entry 1 %+v", e1)
	}
	if e2 := entries[2]; e2.ErrorKind != KindBadRequest || !strings.Contains(e2.Error, "[REDACTED:password-assignment]") {
		t.Errorf("entry 2 %+v", e2)
	}
	if info, err := os.Stat(logPath); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v %v, want 0600", info.Mode(), err)
	}
}

func TestPromptLogAppends(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.SetDefault(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "ok"} })
	logPath := filepath.Join(t.TempDir(), "p.jsonl")
	for i := 0; i < 2; i++ {
		r, err := NewRouter(RouterConfig{PromptLog: logPath, Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("hi")}); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if entries, _ := readLog(t, logPath); len(entries) != 2 {
		t.Errorf("%d lines, want 2 (appended across routers)", len(entries))
	}
}
