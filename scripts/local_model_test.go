package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/config"
)

// make local-model writes what `lemmings run` needs into the user file: the next run in any
// repository, with no flag but --offline, talks to that server and model.
func runLocalModelConfigure(t *testing.T, cfgDir string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("./local-model.sh", "--configure-only")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfgDir, "LOCAL_CONFIG=", "OLLAMA_HOST=", "LOCAL_HOST=", "MODEL=")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// loadUser reads the effective configuration as a run in a repository with no project file does.
func loadUser(t *testing.T, cfgDir string) *config.Config {
	t.Helper()
	cfg, _, err := config.Load(config.LoadOptions{RepoRoot: t.TempDir(), UserConfigDir: filepath.Join(cfgDir, "lemmings"),
		Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestLocalModelWritesTheUserFileARunReads(t *testing.T) {
	cfgDir := t.TempDir()
	out, code := runLocalModelConfigure(t, cfgDir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	cfg := loadUser(t, cfgDir)
	if cfg.Ollama.Host != "http://127.0.0.1:11434" || cfg.Roles[config.RolePrimary].Model != "qwen15" ||
		cfg.Roles[config.RoleSummarizer].Model != "qwen15" || cfg.RAG.Embedder != "offline" {
		t.Errorf("host %q, primary %q, summarizer %q, embedder %q", cfg.Ollama.Host, cfg.Roles[config.RolePrimary].Model,
			cfg.Roles[config.RoleSummarizer].Model, cfg.RAG.Embedder)
	}

	// A file of the user's own keeps its lines; a second run replaces the block, not adds one.
	path := filepath.Join(cfgDir, "lemmings", "config.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte("limits:\n  max_tasks: 7\n\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runLocalModelConfigure(t, cfgDir, "MODEL=qwen05", "LOCAL_HOST=http://127.0.0.1:11500/"); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	cfg = loadUser(t, cfgDir)
	if cfg.Ollama.Host != "http://127.0.0.1:11500" || cfg.Roles[config.RolePrimary].Model != "qwen05" || cfg.Limits.MaxTasks != 7 {
		t.Errorf("host %q, primary %q, max_tasks %d", cfg.Ollama.Host, cfg.Roles[config.RolePrimary].Model, cfg.Limits.MaxTasks)
	}
	data, _ = os.ReadFile(path)
	if n := strings.Count(string(data), "# BEGIN make local-model"); n != 1 {
		t.Errorf("%d blocks:\n%s", n, data)
	}
}

func TestLocalModelLeavesAUserFileWithItsOwnRolesAndSaysWhatToAdd(t *testing.T) {
	cfgDir := t.TempDir()
	path := filepath.Join(cfgDir, "lemmings", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	own := "roles:\n  primary:\n    model: qwen2.5-coder:7b\n"
	if err := os.WriteFile(path, []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runLocalModelConfigure(t, cfgDir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	if data, _ := os.ReadFile(path); string(data) != own {
		t.Errorf("the file was edited:\n%s", data)
	}
	for _, want := range []string{path + " sets ollama:, roles: or rag: itself", "      model: qwen15", "LEMMINGS_PRIMARY_MODEL=qwen15"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestLocalModelRefusesAnUnknownModel(t *testing.T) {
	out, code := runLocalModelConfigure(t, t.TempDir(), "MODEL=qwen14")
	if code != 2 || !strings.Contains(out, "qwen15 (Qwen2.5-Coder-1.5B, the default) or qwen05") {
		t.Errorf("exit %d\n%s", code, out)
	}
}
