package config

import (
	"errors"
	"strings"
	"testing"
)

func TestEnvironmentVariables(t *testing.T) {
	t.Parallel()
	t.Run("the generic form wins over a shortcut for the same key", func(t *testing.T) {
		t.Parallel()
		l := fixture{env: map[string]string{
			"LEMMINGS_PRIMARY_MODEL":           "short",
			"LEMMINGS_ROLES__PRIMARY__MODEL":   "generic",
			"LEMMINGS_SUPERVISOR_MODEL":        "openai/gpt-5",
			"LEMMINGS_ROLES__EMBEDDING__MODEL": "bge-m3",
		}}.mustLoad(t)
		if m := l.cfg.Roles["primary"].Model; m != "generic" || l.src.Origin("roles.primary.model") != "env LEMMINGS_ROLES__PRIMARY__MODEL" {
			t.Errorf("primary model %q from %q", m, l.src.Origin("roles.primary.model"))
		}
		if m := l.cfg.Roles["supervisor"].Model; m != "openai/gpt-5" {
			t.Errorf("supervisor model %q", m)
		}
	})
	t.Run("LEMMINGS_OLLAMA__HOST wins over OLLAMA_HOST", func(t *testing.T) {
		t.Parallel()
		l := fixture{env: map[string]string{"OLLAMA_HOST": "a:1", "LEMMINGS_OLLAMA__HOST": "https://b"}}.mustLoad(t)
		if l.cfg.Ollama.Host != "https://b:443" {
			t.Errorf("host = %q", l.cfg.Ollama.Host)
		}
	})
	t.Run("a string stays a string whatever it looks like", func(t *testing.T) {
		t.Parallel()
		l := fixture{env: map[string]string{"LEMMINGS_PRIMARY_MODEL": "1.5", "LEMMINGS_PROMPTS__PROJECT": "a: b # c"}}.mustLoad(t)
		if l.cfg.Roles["primary"].Model != "1.5" || l.cfg.Prompts.Project != "a: b # c" {
			t.Errorf("model %q project %q", l.cfg.Roles["primary"].Model, l.cfg.Prompts.Project)
		}
	})
	t.Run("typed values are parsed", func(t *testing.T) {
		t.Parallel()
		l := fixture{env: map[string]string{
			"LEMMINGS_SUPERVISORS__BUDGET_USD":        "0.5",
			"LEMMINGS_LIMITS__MAX_WALL_TIME":          "90m",
			"LEMMINGS_SUPERVISORS__ENABLED":           "false",
			"LEMMINGS_ROLES__PRIMARY__TEMPERATURE":    "null",
			"LEMMINGS_ROLES__SUMMARIZER__TEMPERATURE": "0.7",
		}}.mustLoad(t)
		c := l.cfg
		if c.Supervisors.BudgetUSD != 0.5 || c.Limits.MaxWallTime.String() != "1h30m0s" || c.Supervisors.Enabled ||
			c.Roles["primary"].Temperature != nil || *c.Roles["summarizer"].Temperature != 0.7 {
			t.Errorf("got budget %v wall %v enabled %v temps %v %v", c.Supervisors.BudgetUSD, c.Limits.MaxWallTime,
				c.Supervisors.Enabled, c.Roles["primary"].Temperature, c.Roles["summarizer"].Temperature)
		}
	})
	t.Run("an empty variable counts as unset", func(t *testing.T) {
		t.Parallel()
		l := fixture{env: map[string]string{"OLLAMA_HOST": "", "LEMMINGS_LIMITS__MAX_TASKS": ""}}.mustLoad(t)
		if l.src.Origin("ollama.host") != "default" || l.src.Origin("limits.max_tasks") != "default" {
			t.Errorf("origins %q %q", l.src.Origin("ollama.host"), l.src.Origin("limits.max_tasks"))
		}
	})
	t.Run("without Environ, the known names are still read", func(t *testing.T) {
		t.Parallel()
		l := fixture{noEnviron: true, env: map[string]string{
			"LEMMINGS_LIMITS__TOKEN_BUDGETS__QA": "7000",
			"LEMMINGS_OFFLINE":                   "true",
			"LEMMINGS_NOT_A_KEY":                 "ignored: cannot be listed",
		}}.mustLoad(t)
		if l.cfg.Limits.TokenBudgets["qa"] != 7000 || !l.cfg.Offline {
			t.Errorf("qa budget %d offline %v", l.cfg.Limits.TokenBudgets["qa"], l.cfg.Offline)
		}
	})
}

func TestEnvironmentProblemsNameTheVariable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, variable, value string
		key, message          string
	}{
		{"an unknown section", "LEMMINGS_NOPE", "1", "nope", "unknown key"},
		{"an unknown key suggests the right one", "LEMMINGS_LIMITS__MAX_TASK", "1", "limits.max_task", `did you mean "max_tasks"`},
		{"an unknown role", "LEMMINGS_ROLES__CRITIC__MODEL", "x", "roles.critic", "unknown key"},
		{"a name with an empty segment", "LEMMINGS_LIMITS____MAX_TASKS", "1", "", "cannot be read as a key"},
		{"a bad integer", "LEMMINGS_LIMITS__MAX_TASKS", "lots", "limits.max_tasks", `"lots" is not an integer`},
		{"a bad boolean", "LEMMINGS_OFFLINE", "maybe", "offline", `"maybe" is not true or false`},
		{"a bad duration", "LEMMINGS_ROLES__PRIMARY__TIMEOUT", "10", "roles.primary.timeout", `"10" is not a duration`},
		{"an impossible value", "LEMMINGS_ROLES__PRIMARY__TEMPERATURE", "3", "roles.primary.temperature", "3 is above 2"},
		{"a bad Ollama host", "OLLAMA_HOST", "box:port", "ollama.host", `port "port"`},
		{"a list item set alone", "LEMMINGS_GATES__0__NAME", "x", "gates.0", "a list is set as a whole"},
		{"a broken YAML list", "LEMMINGS_GATES", "[{name: x", "gates", "cannot read the value as YAML"},
		{"a single value walked into", "LEMMINGS_OFFLINE__NOW", "1", "offline.now", "holds a single value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ps := problemsOf(t, fixture{env: map[string]string{tc.variable: tc.value}}.load(t).err)
			if len(ps) != 1 {
				t.Fatalf("got %d problems, want 1: %v", len(ps), ps)
			}
			p := ps[0]
			if p.File != "env "+tc.variable || p.Line != 0 || p.Key != tc.key || !strings.Contains(p.Message, tc.message) {
				t.Errorf("problem = %+v, want file %q key %q message containing %q", p, "env "+tc.variable, tc.key, tc.message)
			}
		})
	}
}

func TestFlagProblems(t *testing.T) {
	t.Parallel()
	ps := problemsOf(t, fixture{flags: map[string]string{
		"roles.primary.temperature": "hot",
		"limits.max_tasks":          "0",
	}}.load(t).err)
	if len(ps) != 2 {
		t.Fatalf("problems = %v", ps)
	}
	if ps[0].File != "flags" || ps[0].Key != "limits.max_tasks" || ps[1].Key != "roles.primary.temperature" ||
		!strings.Contains(ps[1].Message, `"hot" is not a number`) || !strings.Contains(ps[1].Accepted, "0 to 2") {
		t.Errorf("problems = %v", ps)
	}
}

func TestEnvNameRoundTripsEveryKnownKey(t *testing.T) {
	t.Parallel()
	names := knownEnvNames()
	if len(names) < 80 {
		t.Fatalf("only %d known names", len(names))
	}
	for _, n := range names {
		key, ok := envKey(n)
		if !ok {
			t.Errorf("%s cannot be read back", n)
			continue
		}
		if _, short := envShortcuts()[n]; !short && EnvName(key) != n {
			t.Errorf("EnvName(%s) = %s, want %s", key, EnvName(key), n)
		}
		if !keyExists(Default(), key) {
			t.Errorf("%s names %s, which Default() does not have", n, key)
		}
	}
}

func TestToolingVariablesAreNotConfigProblems(t *testing.T) {
	env := map[string]string{"LEMMINGS_REAL_OLLAMA": "1", "LEMMINGS_OLLAMA_BIN": "/x/ollama", "LEMMINGS_TEST_SCALE": "2", "LEMMINGS_BOGUS": "1",
		"LEMMINGS_E2E_RACE": "1", "LEMMINGS_TRAINED_FULL": "1", "LEMMINGS_BROWSER": "1"}
	_, _, err := Load(LoadOptions{
		Env: func(k string) string { return env[k] },
		Environ: func() []string {
			var out []string
			for k, v := range env {
				out = append(out, k+"="+v)
			}
			return out
		},
		UserConfigDir: t.TempDir(),
	})
	var cerr *Error
	if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].File != "env LEMMINGS_BOGUS" {
		t.Fatalf("want exactly one problem, for LEMMINGS_BOGUS; got %v", err)
	}
}
