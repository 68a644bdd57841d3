package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A repository's .env chooses its values: under a secret-like key, a file
// name, a function, a sentence or a URL would be hidden from every record
// (issue 33: a file name in events became [REDACTED:.env:API_TOKEN]). Only
// values that look like secrets themselves are learned.
func TestARepositorysEnvCannotHideTextOfItsChoosing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, content := range map[string]string{
		"cmd/v2/main.go": "package main\n",
		"handler.go":     "func HostileHandler2024Cleanup() {}\n",
		"assets/logo_v2": "png",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hidden := map[string]string{
		"API_TOKEN":       "cmd/v2/main.go",
		"SECRET_KEY":      "handler.go",
		"AUTH_TOKEN":      "HostileHandler2024Cleanup",
		"SESSION_SECRET":  "the gate deleted the audit log",
		"PASSWORD":        "assets/logo_v2",
		"WEBHOOK_TOKEN":   "https://example.invalid/hook",
		"SIGNING_KEY":     "implementor_finished_2",
		"SERVICE_API_KEY": "nodes/implementor.go",
	}
	secrets := map[string]string{
		"DB_PASSWORD":     "Hunter2-Db-Pa55word",
		"RANDOM_TOKEN":    "aZ3kQ9xLm2PvT7wRb8Nc",
		"HEX_SECRET":      "9f2c4e1a7b3d8e6f0a5c2b9d4e7f1a3c",
		"GITHUB_TOKEN":    "ghp_Rm1tK9pQ2wE4rT6yU8iO0pA3sD5fG7hJ9kL1",
		"DATABASE_URL":    "postgres://app:Zx9-Qw8-Er7@db:5432/app",
		"PLAIN_NAMED_VAR": "Kp9Lm2Nq7Rt4Vx8Zb3Wd6Yf",
	}
	var env strings.Builder
	for k, v := range hidden {
		env.WriteString(k + "=" + v + "\n")
	}
	for k, v := range secrets {
		env.WriteString(k + "=\"" + v + "\"\n")
	}
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte(env.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	r := New()
	r.LearnRepo(root)
	for k, v := range hidden {
		if got := r.String("events: " + v + " done"); got != "events: "+v+" done" {
			t.Errorf(".env %s=%q hides it: %q", k, v, got)
		}
	}
	for k, v := range secrets {
		if got := r.String("x " + v + " y"); strings.Contains(got, v) {
			t.Errorf(".env %s=%q is not redacted: %q", k, v, got)
		}
	}
}
