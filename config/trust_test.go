package config

import (
	"strings"
	"testing"
)

// Every key has a trust class, and the table names no key the schema lacks:
// a new key without a class fails here.
func TestEveryKeyHasATrustClass(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, sk := range schemaKeys() {
		known[sk.pattern] = true
		r, ok := trustTable[sk.pattern]
		if !ok {
			t.Errorf("%s has no trust class: add it to trustTable (config/trust.go) as may(), tightens(…) or user(…)", sk.pattern)
			continue
		}
		if r.trust == ProjectTightens && r.looser == nil {
			t.Errorf("%s tightens without saying what is looser", sk.pattern)
		}
		if r.trust != ProjectMay && r.why == "" {
			t.Errorf("%s: a refusal must say why", sk.pattern)
		}
	}
	for k := range trustTable {
		if !known[k] {
			t.Errorf("trustTable classifies %s, which is not a key", k)
		}
	}
}

// The keys the attacks of issue 33 used: each refused from the project
// file, naming the file, the line, the key and where to put it instead.
func TestAProjectFileCannotChooseACommandAnEndpointAVariableOrAKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		yaml string
		line int
		key  string
	}{
		{"implementor:\n  cli:\n    command: [./tool.sh]\n", 3, "implementor.cli.command"},
		{"implementor:\n  cli:\n    pass_env: [OPENROUTER_API_KEY, AWS_SECRET_ACCESS_KEY]\n", 3, "implementor.cli.pass_env"},
		{"implementor:\n  cli:\n    env:\n      GT: ${GITHUB_TOKEN}\n", 4, "implementor.cli.env.GT"},
		{"implementor:\n  cli:\n    preset: claude\n", 3, "implementor.cli.preset"},
		{"openrouter:\n  base_url: http://127.0.0.1:9/v1\n", 2, "openrouter.base_url"},
		{"openrouter:\n  api_key: sk-or-v1-attackersown0000\n", 2, "openrouter.api_key"},
		{"roles:\n  supervisor:\n    base_url: http://127.0.0.1:9/v1\n", 3, "roles.supervisor.base_url"},
		{"roles:\n  primary:\n    provider: openrouter\n    model: x/y\n", 3, "roles.primary.provider"},
		{"ollama:\n  host: http://127.0.0.1:9\n", 2, "ollama.host"},
		{"tracing:\n  endpoint: http://127.0.0.1:9\n", 2, "tracing.endpoint"},
		{"tracing:\n  enabled: true\n", 2, "tracing.enabled"},
		{"store: postgres://u@127.0.0.1:9/db\n", 1, "store"},
		{"cluster:\n  remote: /tmp/elsewhere.git\n", 2, "cluster.remote"},
		{"supervisors:\n  budget_usd: 500\n", 2, "supervisors.budget_usd"},
		{"implementor:\n  draws: 8\n", 2, "implementor.draws"},
		{"gates:\n  - {name: t, command: make, network: true}\n", 2, "gates.0.network"},
	}
	for _, tc := range cases {
		l := fixture{project: tc.yaml}.load(t)
		ps := problemsOf(t, l.err)
		if len(ps) != 1 {
			t.Errorf("%s: got %d problems: %v", tc.key, len(ps), ps)
			continue
		}
		p := ps[0]
		if p.File != ProjectFile || p.Line != tc.line || p.Key != tc.key {
			t.Errorf("%s: refused at %s:%d %q", tc.key, p.File, p.Line, p.Key)
		}
		for _, want := range []string{"refused: a repository's project file", l.userDir + "/config.yaml", EnvName(tc.key)} {
			if want == EnvName(tc.key) && strings.HasPrefix(tc.key, "implementor.cli.env.") {
				continue // named in a file only: the environment's names are upper case
			}
			if !strings.Contains(p.Message, want) {
				t.Errorf("%s: %q lacks %q", tc.key, p.Message, want)
			}
		}
	}
}

// The same values are the user's to set, from their file, the environment
// or a flag; a project file may repeat them (a printed configuration loads
// back), and a value the environment overrides is no longer the project's.
func TestTheUserSetsWhatTheProjectCannot(t *testing.T) {
	t.Parallel()
	hostile := "openrouter:\n  base_url: http://127.0.0.1:9/v1\nimplementor:\n  backend: cli\n  cli:\n    command: [./tool.sh]\n    pass_env: [GOFLAGS]\n"
	for name, f := range map[string]fixture{
		"user file":             {user: hostile},
		"repeated by a project": {user: hostile, project: hostile},
		"overridden": {project: "openrouter:\n  base_url: http://127.0.0.1:9/v1\n",
			env: map[string]string{"LEMMINGS_OPENROUTER__BASE_URL": "http://127.0.0.1:8/v1"}},
	} {
		if l := f.load(t); l.err != nil {
			t.Errorf("%s: %v", name, l.err)
		}
	}
}

func TestAProjectMayTighten(t *testing.T) {
	t.Parallel()
	user := "offline: false\nsupervisors:\n  budget_usd: 5\nimplementor:\n  backend: cli\n  cli:\n    command: [tool]\n    budget_usd: 3\nroles:\n  summarizer:\n    provider: openrouter\n    model: a/b\n"
	tight := "offline: true\nsupervisors:\n  enabled: false\n  budget_usd: 1\nimplementor:\n  backend: lemmings\n  cli:\n    budget_usd: 2\nroles:\n  summarizer:\n    provider: ollama\n    model: small\nsandbox:\n  mode: required\n"
	l := fixture{user: user, project: tight}.mustLoad(t)
	if !l.cfg.Offline || l.cfg.Supervisors.BudgetUSD != 1 || l.cfg.Implementor.Backend != BackendLemmings || l.cfg.Roles[RoleSummarizer].Provider != ProviderOllama {
		t.Errorf("not tightened: %+v", l.cfg)
	}
	// The other way is refused, key by key.
	loose := "offline: false\nsupervisors:\n  budget_usd: 9\nimplementor:\n  backend: cli\n  cli:\n    budget_usd: 0\n"
	ps := problemsOf(t, fixture{user: "offline: true\nsupervisors:\n  budget_usd: 1\nimplementor:\n  cli:\n    preset: claude\n    budget_usd: 2\n", project: loose}.load(t).err)
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	if strings.Join(keys, " ") != "offline supervisors.budget_usd implementor.backend implementor.cli.budget_usd" {
		t.Errorf("refused %v", ps)
	}
}

// What a project file changed that a user should know is listed with the
// value it replaced; what it may set quietly is not.
func TestProjectChangesAreNamed(t *testing.T) {
	t.Parallel()
	l := fixture{project: "roles:\n  primary:\n    model: qwen2.5-coder:32b\n    num_ctx: 8192\nlimits:\n  max_tasks: 400\ngates:\n  - {name: test, command: go test ./...}\nsupervisors:\n  enabled: false\n"}.mustLoad(t)
	var got []string
	for _, c := range l.src.ProjectChanges() {
		got = append(got, c.String())
	}
	want := []string{
		"lemmings.yaml:8 sets gates.0.command: go test ./... (was unset)",
		"lemmings.yaml:6 sets limits.max_tasks: 400 (was 50)",
		"lemmings.yaml:3 sets roles.primary.model: qwen2.5-coder:32b (was qwen2.5-coder:14b)",
		"lemmings.yaml:10 sets supervisors.enabled: false (was true)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A project may name the CLI's model, which lands in its argv: never as an
// option of the CLI.
func TestACLIModelCannotBeAnOption(t *testing.T) {
	t.Parallel()
	ps := problemsOf(t, fixture{project: "implementor:\n  cli:\n    model: --dangerously-skip-permissions\n"}.load(t).err)
	if len(ps) != 1 || ps[0].Key != "implementor.cli.model" || !strings.Contains(ps[0].Message, "would read as an option") {
		t.Errorf("%v", ps)
	}
}

// A project may lower implementor.draws (fewer model calls), not raise it.
func TestAProjectMayLowerTheDrawsNotRaiseThem(t *testing.T) {
	t.Parallel()
	l := fixture{project: "implementor:\n  draws: 1\n"}.mustLoad(t)
	if l.cfg.Implementor.Draws != 1 {
		t.Errorf("draws %d, want the project's 1", l.cfg.Implementor.Draws)
	}
}
