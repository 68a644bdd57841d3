package config

import (
	"strings"
	"testing"
)

func TestCLIEnvReferencesTakeLemmingsEnvironmentAndAMissingOneIsNamed(t *testing.T) {
	t.Parallel()
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"MY_KEY": "sk-123", "HOST": "box"}[k]
		return v, ok
	}
	got, err := ExpandCLIEnv(map[string]string{"OPENAI_API_KEY": "${MY_KEY}", "URL": "http://${HOST}:8080/v1", "PLAIN": "$HOME stays"}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if got["OPENAI_API_KEY"] != "sk-123" || got["URL"] != "http://box:8080/v1" || got["PLAIN"] != "$HOME stays" {
		t.Errorf("expanded to %v", got)
	}
	_, err = ExpandCLIEnv(map[string]string{"A": "${NOPE}"}, lookup)
	if err == nil || !strings.Contains(err.Error(), "implementor.cli.env.A: ${NOPE} is not set") {
		t.Errorf("a missing variable: %v", err)
	}
}

func TestACLIConfigFromAFileLoads(t *testing.T) {
	t.Parallel()
	l := fixture{user: "implementor:\n  backend: cli\n  cli:\n    command: [fake-cli, --json, '{prompt_file}']\n    format: qwen-stream-json\n    env: {OPENAI_BASE_URL: 'http://127.0.0.1:1/v1'}\n    pass_env: [GOFLAGS]\n"}.mustLoad(t)
	cli := l.cfg.Implementor.CLI
	if l.cfg.Implementor.Backend != BackendCLI || strings.Join(cli.Command, " ") != "fake-cli --json {prompt_file}" ||
		cli.Env["OPENAI_BASE_URL"] != "http://127.0.0.1:1/v1" || len(cli.PassEnv) != 1 || cli.Timeout == 0 {
		t.Errorf("loaded %+v", l.cfg.Implementor)
	}
}

// The prompt never goes in a custom command line: {prompt} is refused with
// the fix, naming the file, line and key.
func TestAPromptInTheCommandLineIsRefused(t *testing.T) {
	t.Parallel()
	err := fixture{user: "implementor:\n  backend: cli\n  cli:\n    command: [aider, --message, '{prompt}']\n"}.load(t).err
	if err == nil || !strings.Contains(err.Error(), "implementor.cli.command") || !strings.Contains(err.Error(), "{prompt_file}") {
		t.Fatalf("err = %v", err)
	}
}
