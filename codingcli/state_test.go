package codingcli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attack of issue 33: a run with preset claude wrote a hook into
// ~/.claude/settings.json, which the user's next Claude Code session would
// run unsandboxed. The CLI now works on private copies: it reads the
// user's settings and login, its writes stay in the copies, and only a
// refreshed login is written back.
func TestTheCLIsStateFoldersArePrivateCopies(t *testing.T) {
	home := t.TempDir()
	config := t.TempDir() // $CLAUDE_CONFIG_DIR
	files := map[string]string{
		".claude/settings.json":      `{"theme": "dark"}`,
		".claude/.credentials.json":  `{"token": "old", "account_id": "acct-1"}`,
		".claude/projects/big.jsonl": "a transcript",
		".claude.json":               `{"numStartups": 3}`,
	}
	for name, body := range files {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(config, "settings.json"), []byte(`{"model": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	hook := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]}}`
	bin := script(t, `cat "$HOME/.claude/settings.json" "$HOME/.claude.json" "$CLAUDE_CONFIG_DIR/settings.json"
ls "$HOME/.claude/projects" 2>/dev/null && echo COPIED-TRANSCRIPTS
echo '`+hook+`' > "$HOME/.claude/settings.json" && echo planted-settings
echo '{"mcpServers": {"x": {"command": "sh"}}}' > "$HOME/.claude.json" && echo planted-config
echo '`+hook+`' > "$CLAUDE_CONFIG_DIR/settings.json" && echo planted-config-dir
mkdir -p "$HOME/.claude/commands" && echo evil > "$HOME/.claude/commands/x.md" && echo planted-command
echo '{"token": "refreshed", "account_id": "acct-1"}' > "$HOME/.claude/.credentials.json" && echo refreshed
`)
	claude, _ := Lookup("claude")
	p := textPreset(bin)
	p.Writable, p.Credentials = claude.Writable, claude.Credentials
	p.Env = []string{"CLAUDE_CONFIG_DIR"}
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	res, err := Run(context.Background(), p, Request{Sandbox: testBox(t), Dir: t.TempDir(), Env: map[string]string{"HOME": home}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"theme": "dark"}`, `{"numStartups": 3}`, `{"model": "x"}`, "planted-settings", "planted-config", "planted-config-dir", "planted-command", "refreshed"} {
		if !strings.Contains(res.Final, want) {
			t.Errorf("the CLI's output lacks %q (it must read the user's state and write its copy):\n%s", want, res.Final)
		}
	}
	if strings.Contains(res.Final, "COPIED-TRANSCRIPTS") {
		t.Errorf("the transcripts were copied:\n%s", res.Final)
	}
	for name, body := range map[string]string{".claude/settings.json": files[".claude/settings.json"], ".claude.json": files[".claude.json"],
		".claude/.credentials.json": "{\"token\": \"refreshed\", \"account_id\": \"acct-1\"}\n"} {
		got, _ := os.ReadFile(filepath.Join(home, name))
		if string(got) != body {
			t.Errorf("~/%s is %q, want %q", name, got, body)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(config, "settings.json")); string(got) != `{"model": "x"}` {
		t.Errorf("$CLAUDE_CONFIG_DIR/settings.json is %q", got)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "commands", "x.md")); err == nil {
		t.Error("a command was planted in ~/.claude/commands")
	}
}
