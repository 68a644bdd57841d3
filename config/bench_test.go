package config

import (
	"io"
	"testing"
)

// Load runs once per command; this keeps it from growing by accident.
func BenchmarkLoadExampleProjectFile(b *testing.B) {
	root, user := b.TempDir(), b.TempDir()
	writeFileB(b, user+"/config.yaml", Example())
	writeFileB(b, root+"/lemmings.yaml", "roles:\n  primary:\n    model: qwen2.5-coder:32b\n")
	env := map[string]string{"OPENROUTER_API_KEY": "sk-or-v1-0123456789abcdef", "LEMMINGS_LIMITS__MAX_TASKS": "9"}
	opts := LoadOptions{RepoRoot: root, UserConfigDir: user, Env: func(k string) string { return env[k] },
		Environ:    func() []string { return []string{"LEMMINGS_LIMITS__MAX_TASKS=9"} },
		GitIgnored: func(string) (bool, error) { return true, nil }}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPrint(b *testing.B) {
	c := Default()
	b.ReportAllocs()
	for b.Loop() {
		if err := Print(io.Discard, c, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func writeFileB(b *testing.B, path, content string) {
	b.Helper()
	if err := writeFileErr(path, content); err != nil {
		b.Fatal(err)
	}
}
