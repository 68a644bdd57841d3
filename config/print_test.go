package config

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and the generated parts of docs/configuration.md")

func TestPrintMasksSecrets(t *testing.T) {
	t.Parallel()
	const key = "sk-or-v1-0123456789abcdef0123456789abcdefWXYZ"
	l := fixture{
		user: "roles:\n  summarizer:\n    provider: openai\n    base_url: http://ops:hunter2@127.0.0.1:8000/v1\n    api_key: short\n",
		env:  map[string]string{"OPENROUTER_API_KEY": key, "OLLAMA_HOST": "http://me:s3cr3t-pass@gpu:11434"},
	}.mustLoad(t)
	var b bytes.Buffer
	if err := Print(&b, l.cfg, l.src); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, secret := range []string{key, key[:len(key)-4], "hunter2", "s3cr3t-pass", "short"} {
		if strings.Contains(out, secret) {
			t.Errorf("printed configuration contains the secret %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{
		`api_key: "****WXYZ"  # from: env OPENROUTER_API_KEY`,
		`api_key: "****"  # from: ` + l.userDir + "/config.yaml:5",
		`base_url: http://ops:****@127.0.0.1:8000/v1  # from: ` + l.userDir + "/config.yaml:4",
		`host: http://me:****@gpu:11434  # from: env OLLAMA_HOST`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if l.cfg.OpenRouter.APIKey != key {
		t.Error("Print changed the configuration")
	}
}

func TestPrintGolden(t *testing.T) {
	t.Parallel()
	l := fixture{
		user: `prompts:
  global: |
    Answer briefly.
    Never invent APIs.
roles:
  primary:
    model: "qwen2.5-coder:32b"
    options: {top_p: 0.9, stop: ["</done>", "#end"]}
`,
		project: `gates:
  - name: test
    command: go test ./...
supervisors:
  deny: ["*.sqlite", "yes"]
  mode: blocking
limits:
  token_budgets:
    qa: 9000
`,
		env:   map[string]string{"OPENROUTER_API_KEY": "sk-or-v1-aaaaaaaaaaaaaaaa1234", "LEMMINGS_KNOWLEDGE__DIR": "kb"},
		flags: map[string]string{"roles.primary.temperature": "0", "offline": "true"},
	}.mustLoad(t)
	var b bytes.Buffer
	if err := Print(&b, l.cfg, l.src); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(b.String(), l.userDir, "$USER_CONFIG_DIR")
	const golden = "testdata/print.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("Print output differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

// The printed configuration is YAML that loads back to the same values.
func TestPrintOutputLoadsBackToTheSameConfig(t *testing.T) {
	t.Parallel()
	l := fixture{
		project: "gates:\n  - {name: t, command: 'echo \"a: b\" # not a comment'}\nprompts:\n  project: |\n    Line one.\n    Line: two.\nroles:\n  primary:\n    options: {seed: 7, stop: [x], nested: {a: [1, 2]}}\n    model: \"007\"\nsupervisors:\n  deny: ['true', '1e3', ' spaced ']\n",
	}.mustLoad(t)
	var b bytes.Buffer
	if err := Print(&b, l.cfg, l.src); err != nil {
		t.Fatal(err)
	}
	back := fixture{project: b.String()}.load(t)
	if back.err != nil {
		t.Fatalf("printed output does not load: %v\n%s", back.err, b.String())
	}
	if !reflect.DeepEqual(back.cfg, l.cfg) {
		t.Errorf("round trip changed the configuration:\nprinted:\n%s\nfirst  %+v\nsecond %+v", b.String(), l.cfg, back.cfg)
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

func TestPrintReturnsTheWriteError(t *testing.T) {
	t.Parallel()
	w := &failingWriter{n: 3}
	if err := Print(w, Default(), nil); err == nil || err.Error() != "disk full" {
		t.Fatalf("Print = %v, want the writer's error", err)
	}
}

func TestPrintWithoutSourcesSaysDefault(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Print(&b, Default(), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  model: qwen2.5-coder:14b  # from: default\n") {
		t.Errorf("output:\n%s", b.String())
	}
}

func TestMaskKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "abc": "****", "0123456789a": "****", "0123456789ab": "****89ab"} {
		if got := maskKey(in); got != want {
			t.Errorf("maskKey(%q) = %q, want %q", in, got, want)
		}
	}
}
