//go:build unix

package codingcli

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jwt is an unsigned JSON Web Token with claims (only its payload is read).
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}

// Reproduction 10 of issue 43: code run inside the CLI's sandbox replaced
// ~/.claude/.credentials.json with another account's, and lemmings wrote it
// back over the user's. A login is written back only when it is a refresh
// of the same account in the same layout; otherwise the user's file stays
// and the run says why.
func TestOnlyARefreshOfTheSameLoginIsWrittenBack(t *testing.T) {
	codex := func(token, account, email string) string {
		return `{"OPENAI_API_KEY": null, "tokens": {"id_token": "` + jwt(`{"sub":"u-`+account+`","email":"`+email+`"}`) +
			`", "access_token": "` + token + `", "refresh_token": "r-` + token + `", "account_id": "` + account + `"}, "last_refresh": "2026-01-0` + token[len(token)-1:] + `"}`
	}
	mine := codex("tok1", "acct-1", "me@example.com")
	for _, c := range []struct {
		name, old, fresh string
		fifo             bool
		kept             string // "" when written back; else the warning's words
	}{
		{name: "a refresh of the same account", old: mine, fresh: codex("tok2", "acct-1", "me@example.com")},
		{name: "another account", old: mine, fresh: codex("tok2", "acct-2", "me@example.com"), kept: "another account's (.tokens.account_id differs)"},
		{name: "another email in the id token", old: mine, fresh: codex("tok2", "acct-1", "attacker@example.com"), kept: "another account's (.tokens.id_token#.email differs)"},
		{name: "a new key", old: mine, fresh: strings.Replace(codex("tok2", "acct-1", "me@example.com"), `"OPENAI_API_KEY": null`, `"OPENAI_API_KEY": null, "base_url": "http://evil"`, 1), kept: "layout changed (new base_url:string)"},
		{name: "a changed type", old: mine, fresh: strings.Replace(codex("tok2", "acct-1", "me@example.com"), `"OPENAI_API_KEY": null`, `"OPENAI_API_KEY": "sk-attacker"`, 1), kept: "layout changed"},
		{name: "no account to check", old: `{"claudeAiOauth": {"accessToken": "a1", "refreshToken": "r1", "expiresAt": 1}}`,
			fresh: `{"claudeAiOauth": {"accessToken": "a2", "refreshToken": "r2", "expiresAt": 2}}`, kept: "names no account"},
		{name: "not JSON", old: mine, fresh: "not json", kept: ""},
		{name: "a FIFO", old: mine, fifo: true, kept: "cannot be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			orig := filepath.Join(home, ".codex", "auth.json")
			if err := os.MkdirAll(filepath.Dir(orig), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(orig, []byte(c.old), 0o600); err != nil {
				t.Fatal(err)
			}
			cp := filepath.Join(t.TempDir(), "auth.json")
			if c.fifo {
				if err := syscall.Mkfifo(cp, 0o600); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(cp, []byte(c.fresh), 0o600); err != nil {
				t.Fatal(err)
			}
			done := make(chan string, 1)
			go func() { done <- writeBackCredentials(orig, cp) }()
			var warning string
			select {
			case warning = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the write-back blocked")
			}
			got, _ := os.ReadFile(orig)
			written := string(got) == c.fresh
			switch {
			case c.kept == "" && c.name != "not JSON" && (!written || warning != ""):
				t.Errorf("a refresh was not written back (%q)", warning)
			case c.kept != "" && (string(got) != c.old || !strings.Contains(warning, c.kept) || !strings.Contains(warning, "kept")):
				t.Errorf("file %q, warning %q; want the user's file kept and a warning saying %q", got, warning, c.kept)
			case c.name == "not JSON" && string(got) != c.old:
				t.Errorf("a file that is not JSON replaced the user's")
			}
		})
	}
}
