package config

import (
	"reflect"
	"testing"
	"time"
)

func TestPrecedenceAcrossAllFiveSources(t *testing.T) {
	t.Parallel()
	l := fixture{
		user: `roles:
  primary:
    model: user-model
    timeout: 20m
concurrency:
  cloud: 2
limits:
  max_tasks: 10
ollama:
  host: user-box:11434
knowledge:
  budget_tokens: 100
`,
		project: `roles:
  primary:
    model: project-model
    timeout: 30m
limits:
  max_tasks: 20
knowledge:
  budget_tokens: 200
`,
		env: map[string]string{
			"LEMMINGS_PRIMARY_MODEL":           "env-model",
			"LEMMINGS_LIMITS__MAX_TASKS":       "30",
			"OLLAMA_HOST":                      "gpu-box",
			"LEMMINGS_KNOWLEDGE__DIR":          "kb",
			"LEMMINGS_RAG__TOP_K":              "3",
			"PATH":                             "/bin", // not ours: ignored
			"LEMMINGS_ROLES__PRIMARY__NUM_CTX": "8192",
		},
		flags: map[string]string{
			"roles.primary.model": "flag-model",
			"rag.top_k":           "5",
		},
	}.mustLoad(t)
	c, s := l.cfg, l.src
	user := l.userDir + "/config.yaml"

	checks := []struct {
		key, origin string
		got, want   any
	}{
		{"roles.primary.model", "flag roles.primary.model", c.Roles["primary"].Model, "flag-model"},
		{"rag.top_k", "flag rag.top_k", c.RAG.TopK, 5},
		{"limits.max_tasks", "env LEMMINGS_LIMITS__MAX_TASKS", c.Limits.MaxTasks, 30},
		{"ollama.host", "env OLLAMA_HOST", c.Ollama.Host, "http://gpu-box:11434"},
		{"knowledge.dir", "env LEMMINGS_KNOWLEDGE__DIR", c.Knowledge.Dir, "kb"},
		{"roles.primary.num_ctx", "env LEMMINGS_ROLES__PRIMARY__NUM_CTX", c.Roles["primary"].NumCtx, 8192},
		{"roles.primary.timeout", "lemmings.yaml:4", c.Roles["primary"].Timeout, 30 * time.Minute},
		{"knowledge.budget_tokens", "lemmings.yaml:8", c.Knowledge.BudgetTokens, 200},
		{"concurrency.cloud", user + ":6", c.Concurrency.Cloud, 2},
		{"concurrency.local", "default", c.Concurrency.Local, 1},
		{"roles.primary.keep_alive", "default", c.Roles["primary"].KeepAlive, "30m"},
		{"roles.summarizer.model", "default", c.Roles["summarizer"].Model, "qwen2.5-coder:1.5b"},
	}
	for _, ch := range checks {
		if got := s.Origin(ch.key); got != ch.origin {
			t.Errorf("Origin(%s) = %q, want %q", ch.key, got, ch.origin)
		}
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
	// A section, map or list names the highest source that set anything in it.
	for key, want := range map[string]string{
		"roles.primary": "flag roles.primary.model",
		"roles":         "flag roles.primary.model",
		"knowledge":     "env LEMMINGS_KNOWLEDGE__DIR",
		"concurrency":   user + ":6",
		"retry":         "default",
	} {
		if got := s.Origin(key); got != want {
			t.Errorf("Origin(%s) = %q, want %q", key, got, want)
		}
	}
	for _, key := range []string{"", "nope", "roles.critic.model", "roles.primary.nope", "gates.0.name", "supervisors.deny.99"} {
		if got := s.Origin(key); got != "" {
			t.Errorf("Origin(%q) = %q, want empty for a key the configuration does not have", key, got)
		}
	}
	if got := s.Files(); !reflect.DeepEqual(got, []string{user, ProjectFile}) {
		t.Errorf("Files() = %v", got)
	}
}

func TestUserConfigDirComesFromXDGThenHome(t *testing.T) {
	t.Parallel()
	xdg, home := t.TempDir(), t.TempDir()
	writeFile(t, xdg+"/lemmings/config.yaml", "limits:\n  max_tasks: 11\n")
	writeFile(t, home+"/.config/lemmings/config.yaml", "limits:\n  max_tasks: 22\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int
	}{
		{"XDG_CONFIG_HOME wins", map[string]string{"XDG_CONFIG_HOME": xdg, "HOME": home}, 11},
		{"HOME/.config without XDG_CONFIG_HOME", map[string]string{"HOME": home}, 22},
		{"a relative XDG_CONFIG_HOME is ignored, as the spec says", map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": home}, 22},
		{"neither: no user file", map[string]string{}, 50},
	} {
		c, _, err := Load(LoadOptions{Env: func(k string) string { return tc.env[k] }})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Limits.MaxTasks != tc.want {
			t.Errorf("%s: max_tasks = %d, want %d", tc.name, c.Limits.MaxTasks, tc.want)
		}
	}
}

// Offline asks nothing but the Ollama server: the supervisors are off, and
// the embedder is the offline one only when the embedding role is not on
// Ollama (an index built with a local model is kept).
func TestOfflineForcesSupervisorsOffAndAsksOnlyOllama(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		f        fixture
		reason   string
		embedder string
	}{
		{"from the project file", fixture{project: "supervisors:\n  enabled: true\noffline: true\n"}, "offline (set by lemmings.yaml:3)", "ollama"},
		{"from the environment", fixture{env: map[string]string{"LEMMINGS_OFFLINE": "1"}}, "offline (set by env LEMMINGS_OFFLINE)", "ollama"},
		{"from a flag", fixture{flags: map[string]string{"offline": "true"}}, "offline (set by flag offline)", "ollama"},
		{"with the embedding role on a cloud provider", fixture{user: "roles:\n  embedding: {provider: openai, model: text-embedding-3-small, base_url: \"http://127.0.0.1:9/v1\"}\n", project: "supervisors:\n  enabled: true\noffline: true\n"},
			"offline (set by lemmings.yaml:3)", "offline"},
	} {
		l := tc.f.mustLoad(t)
		if l.cfg.Supervisors.Enabled || l.cfg.RAG.Embedder != tc.embedder {
			t.Errorf("%s: supervisors.enabled=%v rag.embedder=%q, want false and %q", tc.name, l.cfg.Supervisors.Enabled, l.cfg.RAG.Embedder, tc.embedder)
		}
		if got := l.src.Origin("supervisors.enabled"); got != tc.reason {
			t.Errorf("%s: Origin(supervisors.enabled) = %q, want %q", tc.name, got, tc.reason)
		}
		if got := l.src.Origin("rag.embedder"); tc.embedder == "offline" && got != tc.reason {
			t.Errorf("%s: Origin(rag.embedder) = %q, want %q", tc.name, got, tc.reason)
		}
		if len(l.src.Warnings()) != 0 {
			t.Errorf("%s: offline still warns: %v", tc.name, l.src.Warnings())
		}
	}
}

func TestResolvedRoleFillsProviderSettings(t *testing.T) {
	t.Parallel()
	l := fixture{
		user: "roles:\n  summarizer:\n    provider: openai\n    base_url: http://127.0.0.1:8000/v1\n",
		env:  map[string]string{"OPENROUTER_API_KEY": "sk-or-v1-0123456789abcdef", "OLLAMA_HOST": "box:1234"},
	}.mustLoad(t)
	primary, err := l.cfg.ResolvedRole("primary")
	if err != nil || primary.BaseURL != "http://box:1234" || primary.APIKey != "" {
		t.Errorf("primary = %+v, %v", primary, err)
	}
	sup, _ := l.cfg.ResolvedRole("supervisor")
	if sup.BaseURL != "https://openrouter.ai/api/v1" || sup.APIKey != "sk-or-v1-0123456789abcdef" {
		t.Errorf("supervisor = %+v", sup)
	}
	sum, _ := l.cfg.ResolvedRole("summarizer")
	if sum.BaseURL != "http://127.0.0.1:8000/v1" || sum.APIKey != "" {
		t.Errorf("summarizer = %+v", sum)
	}
	*primary.Temperature = 1.5
	primary.Options["x"] = 1
	if *l.cfg.Roles["primary"].Temperature != 0.2 || len(l.cfg.Roles["primary"].Options) != 0 {
		t.Error("ResolvedRole shares memory with the configuration")
	}
	if _, err := l.cfg.ResolvedRole("critic"); err == nil {
		t.Error("ResolvedRole(critic) succeeded")
	}
}
