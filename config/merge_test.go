package config

import (
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestDenyListsAppendAcrossSources(t *testing.T) {
	t.Parallel()
	l := fixture{
		user:    "supervisors:\n  deny:\n    - '*.sqlite'\n",
		project: "supervisors:\n  deny:\n    - '*.sqlite'\n    - dumps/**\n    - .env\n",
		env:     map[string]string{"LEMMINGS_SUPERVISORS__DENY": "*.tfstate, private/**"},
		flags:   map[string]string{"supervisors.deny": "[vault.json]"},
	}.mustLoad(t)
	defaults := Default().Supervisors.Deny
	want := append(slices.Clone(defaults), "*.sqlite", "dumps/**", "*.tfstate", "private/**", "vault.json")
	if !reflect.DeepEqual(l.cfg.Supervisors.Deny, want) {
		t.Fatalf("deny = %v\nwant %v", l.cfg.Supervisors.Deny, want)
	}
	n := len(defaults)
	origins := map[int]string{
		0:     "default",
		n:     l.userDir + "/config.yaml:3", // the project's copy of it is not a second entry
		n + 1: "lemmings.yaml:4",
		n + 2: "env LEMMINGS_SUPERVISORS__DENY",
		n + 3: "env LEMMINGS_SUPERVISORS__DENY",
		n + 4: "flag supervisors.deny",
	}
	for i, o := range origins {
		key := "supervisors.deny." + strconv.Itoa(i)
		if got := l.src.Origin(key); got != o {
			t.Errorf("Origin(%s) = %q, want %q", key, got, o)
		}
	}
}

func TestDenyCannotBeEmptiedByAHigherSource(t *testing.T) {
	t.Parallel()
	for _, project := range []string{"supervisors:\n  deny: []\n", "supervisors:\n  deny:\n"} {
		l := fixture{project: project}.mustLoad(t)
		if !reflect.DeepEqual(l.cfg.Supervisors.Deny, Default().Supervisors.Deny) {
			t.Errorf("%q: deny = %v, want the defaults kept", project, l.cfg.Supervisors.Deny)
		}
	}
}

func TestGatesFromAHigherSourceReplaceTheLowerList(t *testing.T) {
	t.Parallel()
	user := "gates:\n  - name: build\n    command: make\n    timeout: 1m\n  - name: test\n    command: make test\n"
	t.Run("a project list replaces the user's", func(t *testing.T) {
		t.Parallel()
		l := fixture{user: user, project: "gates:\n  - name: test\n    command: go test ./...\n"}.mustLoad(t)
		want := []Gate{{Name: "test", Command: "go test ./...", Timeout: DefaultGateTimeout}}
		if !reflect.DeepEqual(l.cfg.Gates, want) {
			t.Fatalf("gates = %+v, want %+v", l.cfg.Gates, want)
		}
		for key, o := range map[string]string{
			"gates":           "lemmings.yaml:1",
			"gates.0.name":    "lemmings.yaml:2",
			"gates.0.command": "lemmings.yaml:3",
			"gates.0.timeout": "default",
		} {
			if got := l.src.Origin(key); got != o {
				t.Errorf("Origin(%s) = %q, want %q", key, got, o)
			}
		}
		if got := l.src.Origin("gates.1.name"); got != "" {
			t.Errorf("the user's second gate still has an origin: %q", got)
		}
	})
	t.Run("an empty project list means detect from the project", func(t *testing.T) {
		t.Parallel()
		l := fixture{user: user, project: "gates: []\n"}.mustLoad(t)
		if len(l.cfg.Gates) != 0 || l.src.Origin("gates") != "lemmings.yaml:1" {
			t.Fatalf("gates = %+v from %q", l.cfg.Gates, l.src.Origin("gates"))
		}
	})
	t.Run("a project without gates keeps the user's", func(t *testing.T) {
		t.Parallel()
		l := fixture{user: user, project: "offline: true\n"}.mustLoad(t)
		if len(l.cfg.Gates) != 2 || l.cfg.Gates[0].Timeout != time.Minute || l.cfg.Gates[1].Timeout != DefaultGateTimeout {
			t.Fatalf("gates = %+v", l.cfg.Gates)
		}
	})
	t.Run("an environment variable sets the list as YAML", func(t *testing.T) {
		t.Parallel()
		l := fixture{user: user, env: map[string]string{"LEMMINGS_GATES": "[{name: vet, command: go vet ./..., timeout: 2m}]"}}.mustLoad(t)
		want := []Gate{{Name: "vet", Command: "go vet ./...", Timeout: 2 * time.Minute}}
		if !reflect.DeepEqual(l.cfg.Gates, want) || l.src.Origin("gates.0.command") != "env LEMMINGS_GATES" {
			t.Fatalf("gates = %+v from %q", l.cfg.Gates, l.src.Origin("gates.0.command"))
		}
	})
}

func TestMapsMergeByKey(t *testing.T) {
	t.Parallel()
	l := fixture{
		user: `roles:
  primary:
    model: llama3.1:8b
    options: {top_p: 0.9, seed: 1}
limits:
  token_budgets:
    qa: 6000
`,
		project: `roles:
  primary:
    temperature: 0.5
    options:
      seed: 42
      top_p: null
      stop: ["</done>"]
limits:
  token_budgets:
    implementor: 20000
`,
		env: map[string]string{"LEMMINGS_ROLES__PRIMARY__OPTIONS__NUM_GPU": "2"},
	}.mustLoad(t)
	p := l.cfg.Roles["primary"]
	if p.Model != "llama3.1:8b" || *p.Temperature != 0.5 || p.Timeout != 5*time.Minute {
		t.Errorf("primary = %+v", p)
	}
	wantOpts := map[string]any{"seed": 42, "stop": []any{"</done>"}, "num_gpu": 2}
	if !reflect.DeepEqual(p.Options, wantOpts) {
		t.Errorf("options = %#v, want %#v", p.Options, wantOpts)
	}
	if got := l.src.Origin("roles.primary.options.num_gpu"); got != "env LEMMINGS_ROLES__PRIMARY__OPTIONS__NUM_GPU" {
		t.Errorf("Origin(options.num_gpu) = %q", got)
	}
	if got := l.src.Origin("roles.primary.options.top_p"); got != "" {
		t.Errorf("a removed option still has an origin: %q", got)
	}
	tb := l.cfg.Limits.TokenBudgets
	if tb["qa"] != 6000 || tb["implementor"] != 20000 || tb["assessor"] != 8000 {
		t.Errorf("token_budgets = %v", tb)
	}
	if l.src.Origin("limits.token_budgets.assessor") != "default" || l.src.Origin("limits.token_budgets.qa") != l.userDir+"/config.yaml:7" {
		t.Errorf("token budget origins: assessor %q, qa %q", l.src.Origin("limits.token_budgets.assessor"), l.src.Origin("limits.token_budgets.qa"))
	}
}

func TestNullResetsAScalarToEmpty(t *testing.T) {
	t.Parallel()
	l := fixture{
		user:    "roles:\n  primary:\n    base_url: http://127.0.0.1:9999\n",
		flags:   map[string]string{"roles.primary.base_url": ""},
		project: "roles:\n  primary:\n    temperature: null\n",
	}.mustLoad(t)
	p := l.cfg.Roles["primary"]
	if p.Temperature != nil || p.BaseURL != "" {
		t.Errorf("temperature %v base_url %q, want nil and empty", p.Temperature, p.BaseURL)
	}
	if l.src.Origin("roles.primary.temperature") != "lemmings.yaml:3" {
		t.Errorf("Origin(temperature) = %q", l.src.Origin("roles.primary.temperature"))
	}
}

func TestAnchorsAliasesAndMergeKeys(t *testing.T) {
	t.Parallel()
	l := fixture{user: `roles:
  primary: &local
    provider: openai
    base_url: http://127.0.0.1:8080/v1
    model: big
    timeout: 20m
  summarizer:
    <<: *local
    model: small
`}.mustLoad(t)
	s := l.cfg.Roles["summarizer"]
	if s.Provider != "openai" || s.BaseURL != "http://127.0.0.1:8080/v1" || s.Model != "small" || s.Timeout != 20*time.Minute {
		t.Errorf("summarizer = %+v", s)
	}
	if got := l.src.Origin("roles.summarizer.model"); got != l.userDir+"/config.yaml:9" {
		t.Errorf("own key origin = %q, want line 9", got)
	}
	if got := l.src.Origin("roles.summarizer.timeout"); got != l.userDir+"/config.yaml:6" {
		t.Errorf("merged key origin = %q, want the anchor's line 6", got)
	}
}

func TestOptionNumbersArePlainInts(t *testing.T) {
	t.Parallel()
	l := fixture{project: "roles:\n  primary:\n    options: {a: {b: 1, c: [2, -3]}, f: 0.5, big: 18446744073709551615}\n"}.mustLoad(t)
	want := map[string]any{"a": map[string]any{"b": 1, "c": []any{2, -3}}, "f": 0.5, "big": uint64(18446744073709551615)}
	if got := l.cfg.Roles["primary"].Options; !reflect.DeepEqual(got, want) {
		t.Errorf("options = %#v, want %#v", got, want)
	}
}
