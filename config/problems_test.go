package config

import (
	"strings"
	"testing"
)

func TestEachKindOfProblemIsOneProblemWithFileLineAndKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		yaml     string
		line     int
		key      string
		message  string // substring
		accepted string // substring
	}{
		{"an unknown top-level key", "colour: red\n", 1, "colour", "unknown key", "ollama, openrouter, roles"},
		{"a misspelt nested key suggests the right one", "limits:\n  max_taks: 3\n", 2, "limits.max_taks", `did you mean "max_tasks"`, "max_tasks"},
		{"an unknown role lists the roles", "roles:\n  critic:\n    model: x\n", 2, "roles.critic", "unknown key", "primary, planner, summarizer, supervisor, embedding"},
		{"an unknown role key", "roles:\n  primary:\n    modle: x\n", 3, "roles.primary.modle", `did you mean "model"`, "provider, model"},
		{"an unknown token budget label", "limits:\n  token_budgets:\n    critic: 5000\n", 3, "limits.token_budgets.critic", "unknown key", "scope_agent"},
		{"an unknown gate key", "gates:\n  - name: t\n    cmd: make\n    command: make\n", 3, "gates.0.cmd", "unknown key", "name, command, timeout"},
		{"a word where an integer goes", "limits:\n  max_tasks: many\n", 2, "limits.max_tasks", `expected an integer, got "many"`, "an integer >= 1"},
		{"a float where an integer goes", "limits:\n  max_tasks: 2.5\n", 2, "limits.max_tasks", "got the number 2.5", "integer"},
		{"a number where a string goes", "roles:\n  primary:\n    model: 7\n", 3, "roles.primary.model", "quote it", "non-empty string"},
		{"a word where a boolean goes", "offline: sometimes\n", 1, "offline", "expected true or false", "true or false"},
		{"a scalar where a section goes", "limits: 5\n", 1, "limits", "expected a mapping, got the integer 5", "a mapping with keys max_tasks"},
		{"a string where a list goes", "gates: go test ./...\n", 1, "gates", `expected a list, got "go test ./..."`, "name, command, timeout"},
		{"a mapping where a number goes", "roles:\n  primary:\n    temperature: {x: 1}\n", 3, "roles.primary.temperature", "got a mapping", "0 to 2"},
		{"a duration that is not one", "limits:\n  max_wall_time: 4 hours\n", 2, "limits.max_wall_time", `"4 hours" is not a duration`, "duration"},
		{"a duration without a unit", "roles:\n  primary:\n    timeout: 300\n", 3, "roles.primary.timeout", "add a unit", "duration"},
		{"a zero call timeout", "roles:\n  supervisor:\n    timeout: 0s\n", 3, "roles.supervisor.timeout", "must be above 0", "duration > 0"},
		{"a negative gate timeout", "gates:\n  - name: t\n    command: make\n    timeout: -1m\n", 4, "gates.0.timeout", "negative", "duration >= 0"},
		{"a negative interval", "supervisors:\n  code_style:\n    interval: -5\n", 3, "supervisors.code_style.interval", "-5 is below 1", "integer >= 1"},
		{"a zero interval", "supervisors:\n  internaliser:\n    interval: 0\n", 3, "supervisors.internaliser.interval", "0 is below 1", "integer >= 1"},
		{"a temperature above 2", "roles:\n  primary:\n    temperature: 2.5\n", 3, "roles.primary.temperature", "2.5 is above 2", "0 to 2"},
		{"a negative temperature", "roles:\n  summarizer:\n    temperature: -0.1\n", 3, "roles.summarizer.temperature", "-0.1 is below 0", "0 to 2"},
		{"an infinite number", "supervisors:\n  budget_usd: .inf\n", 2, "supervisors.budget_usd", "not a finite number", ">= 0"},
		{"an unknown provider", "roles:\n  primary:\n    provider: olama\n", 3, "roles.primary.provider", `did you mean "ollama"`, "ollama, openrouter, openai"},
		{"a zero convergence threshold", "supervisors:\n  convergence:\n    threshold: 0\n", 3, "supervisors.convergence.threshold", "must be above 0", "> 0 and <= 1"},
		{"a convergence threshold above 1", "supervisors:\n  convergence:\n    threshold: 1.5\n", 3, "supervisors.convergence.threshold", "1.5 is above 1", "<= 1"},
		{"a negative urgency threshold", "supervisors:\n  urgency_threshold: -1\n", 2, "supervisors.urgency_threshold", "must be above 0", "> 0"},
		{"a negative budget", "supervisors:\n  budget_usd: -2\n", 2, "supervisors.budget_usd", "-2 is below 0", ">= 0"},
		{"an unknown supervisor mode", "supervisors:\n  mode: eager\n", 2, "supervisors.mode", `unknown value "eager"`, "background, blocking"},
		{"an unknown embedder", "rag:\n  embedder: openai\n", 2, "rag.embedder", "unknown value", "ollama, offline"},
		{"an unknown log level", "log:\n  level: verbose\n", 2, "log.level", "unknown value", "debug, info, warn, error"},
		{"a token budget too small", "limits:\n  token_budgets:\n    qa: 10\n", 3, "limits.token_budgets.qa", "10 is below 256", ">= 256"},
		{"an Ollama port out of range", "ollama:\n  host: localhost:99999\n", 2, "ollama.host", `port "99999"`, "host:port"},
		{"an Ollama host with another scheme", "ollama:\n  host: ftp://box:11434\n", 2, "ollama.host", `scheme "ftp"`, "http(s)://"},
		{"a base URL without a scheme", "openrouter:\n  base_url: openrouter.ai/api/v1\n", 2, "openrouter.base_url", "needs an http:// or https:// scheme", "URL"},
		{"a keep_alive that is neither", "roles:\n  primary:\n    keep_alive: forever\n", 3, "roles.primary.keep_alive", "neither a duration nor a number", "seconds"},
		{"a knowledge dir outside the repository", "knowledge:\n  dir: ../elsewhere\n", 2, "knowledge.dir", "leaves the repository", "relative path"},
		{"an absolute prompts dir", "prompts:\n  dir: /etc/lemmings\n", 2, "prompts.dir", "leaves the repository", "relative path"},
		{"a bad deny glob points at its item", "supervisors:\n  deny:\n    - ok/**\n    - '[abc'\n", 4, "supervisors.deny.11", "not a valid glob", "glob"},
		{"an empty model", "roles:\n  primary:\n    model: ''\n", 3, "roles.primary.model", "must not be empty", "non-empty"},
		{"null clears a model, which is then empty", "roles:\n  embedding:\n    model:\n", 3, "roles.embedding.model", "must not be empty", "non-empty"},
		{"a gate without a command points at the gate", "gates:\n  - name: lint\n", 2, "gates.0.command", "must not be empty", "non-empty"},
		{"two gates with one name", "gates:\n  - {name: t, command: a}\n  - {name: t, command: b}\n", 3, "gates.1.name", `gate "t" is already gates.0`, "no other gate"},
		{"an unknown implementor backend", "implementor:\n  backend: claude\n", 2, "implementor.backend", `unknown value "claude"`, "lemmings, cli"},
		{"an unknown CLI preset", "implementor:\n  cli:\n    preset: qwne\n", 3, "implementor.cli.preset", `did you mean "qwen"`, "claude, codex, gemini, qwen"},
		{"backend cli with neither preset nor command", "implementor:\n  backend: cli\n", 2, "implementor.backend", "needs implementor.cli.preset or implementor.cli.command", "a command list"},
		{"an unknown CLI format", "implementor:\n  cli:\n    format: json\n", 3, "implementor.cli.format", `unknown value "json"`, "qwen-stream-json"},
		{"a zero CLI timeout", "implementor:\n  cli:\n    timeout: 0s\n", 3, "implementor.cli.timeout", "must be above 0", "duration > 0"},
		{"a CLI env name that is not one", "implementor:\n  cli:\n    env:\n      'A-B': x\n", 4, "implementor.cli.env.A-B", "is not a variable name", "variable name"},
		{"a CLI env reference that is not a name", "implementor:\n  cli:\n    env:\n      KEY: '${1X}'\n", 4, "implementor.cli.env.KEY", "${1X}", "${NAME}"},
		{"a pass_env entry that is not a name", "implementor:\n  cli:\n    pass_env: [OK, 'no way']\n", 3, "implementor.cli.pass_env.1", "is not a variable name", "variable names"},
		{"an empty command item", "implementor:\n  cli:\n    command: [tool, '']\n", 3, "implementor.cli.command.1", "must not be empty", "list of strings"},
		{"a planner model without a provider", "roles:\n  planner:\n    model: x/y\n", 3, "roles.planner.model", "both provider and model, or neither", "set together"},
		{"an unknown dispute policy", "qa:\n  disputed: ignore\n", 2, "qa.disputed", "unknown value", "escalate, commit, retry"},
		{"a tiny instruction limit", "tasks:\n  max_instruction_chars: 20\n", 2, "tasks.max_instruction_chars", "20 is below 100", ">= 100"},
		{"openai without a base URL", "roles:\n  primary:\n    provider: openai\n", 3, "roles.primary.provider", "needs base_url", "URL"},
		{"num_ctx above max_num_ctx", "roles:\n  primary:\n    max_num_ctx: 4096\n    num_ctx: 8192\n", 4, "roles.primary.num_ctx", "above max_num_ctx", "num_ctx <= max_num_ctx"},
		{"max_backoff below initial_backoff", "retry:\n  initial_backoff: 1m\n", 2, "retry.initial_backoff", "below initial_backoff", ">= initial_backoff"},
		{"max_interval below an interval", "supervisors:\n  code_style:\n    interval: 50\n", 3, "supervisors.code_style.interval", "max_interval 40 is below code_style.interval 50", "max_interval"},
		{"a YAML syntax error", "roles:\n  primary: [a,\n", 2, "", "YAML syntax error", ""},
		{"a tab for indentation", "roles:\n\tprimary: {}\n", 2, "", "YAML syntax error", ""},
		{"a key indented deeper than the one above", "limits:\n  max_tasks: 5\n   max_retries: 2\n", 3, "", "YAML syntax error: mapping value is not allowed in this context (this key is indented deeper than the one above it: align them)", ""},
		{"a key written twice", "offline: true\noffline: false\n", 2, "", `"offline" already defined`, ""},
		{"two YAML documents", "offline: true\n---\noffline: false\n", 3, "", "more than one YAML document", ""},
		{"a list at the top", "- offline\n", 1, "", "top level must be a mapping", "ollama"},
		{"a merge key naming a scalar", "roles:\n  primary:\n    <<: 5\n", 3, "roles.primary", "merge key (<<) must name a mapping", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ps := problemsOf(t, fixture{project: tc.yaml}.load(t).err)
			if len(ps) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(ps), (&Error{Problems: ps}).Error())
			}
			p := ps[0]
			if p.File != ProjectFile || p.Line != tc.line || p.Key != tc.key {
				t.Errorf("problem at %s:%d key %q, want %s:%d key %q (%s)", p.File, p.Line, p.Key, ProjectFile, tc.line, tc.key, p)
			}
			if !strings.Contains(p.Message, tc.message) {
				t.Errorf("message %q does not contain %q", p.Message, tc.message)
			}
			if !strings.Contains(p.Accepted, tc.accepted) {
				t.Errorf("accepted %q does not contain %q", p.Accepted, tc.accepted)
			}
		})
	}
}

func TestEveryProblemIsReportedNotJustTheFirst(t *testing.T) {
	t.Parallel()
	l := fixture{
		user:    "limits:\n  max_tasks: 0\n",
		project: "roles:\n  primary:\n    temperature: 9\n    provider: x\nlimits:\n  max_tasks: 5\n  review_interval: -1\nbogus: 1\n",
		env: map[string]string{
			"LEMMINGS_CONCURRENCY__LOCAL": "none",
			"LEMMINGS_NOPE":               "1",
		},
		flags: map[string]string{"roles.primary.timeout": "soon", "nothing.here": "x"},
	}.load(t)
	ps := problemsOf(t, l.err)
	userFile := l.userDir + "/config.yaml"
	want := []struct {
		file string
		line int
		key  string
	}{
		// A value overridden later is still reported where it is written.
		{userFile, 2, "limits.max_tasks"},
		{ProjectFile, 3, "roles.primary.temperature"},
		{ProjectFile, 4, "roles.primary.provider"},
		{ProjectFile, 7, "limits.review_interval"},
		{ProjectFile, 8, "bogus"},
		{"env LEMMINGS_CONCURRENCY__LOCAL", 0, "concurrency.local"},
		{"env LEMMINGS_NOPE", 0, "nope"},
		{"flags", 0, "nothing"},
		{"flags", 0, "roles.primary.timeout"},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(want), l.err)
	}
	for i, w := range want {
		if ps[i].File != w.file || ps[i].Line != w.line || ps[i].Key != w.key {
			t.Errorf("problem %d = %s, want %s:%d %s", i, ps[i], w.file, w.line, w.key)
		}
	}
	if l.cfg != nil || l.src != nil {
		t.Error("Load returned a configuration along with problems")
	}
}

func TestErrorPrintsOneLinePerProblem(t *testing.T) {
	t.Parallel()
	e := &Error{Problems: []Problem{
		{File: "lemmings.yaml", Line: 4, Key: "roles.primary.temperature", Message: "3 is above 2", Accepted: "a number from 0 to 2"},
		{File: "env LEMMINGS_X", Key: "x", Message: "unknown key"},
		{Key: "roles", Message: "role primary is missing"},
		{File: "lemmings.yaml", Line: 2, Message: "YAML syntax error: oops"},
	}}
	want := "lemmings.yaml:4: roles.primary.temperature: 3 is above 2 (accepted: a number from 0 to 2)\n" +
		"env LEMMINGS_X: x: unknown key\n" +
		"roles: role primary is missing\n" +
		"lemmings.yaml:2: YAML syntax error: oops"
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
}

func TestEmptyAndCommentOnlyFilesAreFine(t *testing.T) {
	t.Parallel()
	for _, content := range []string{"\n", "# nothing yet\n", "---\n", "~\n"} {
		l := fixture{user: content, project: content}.mustLoad(t)
		if l.src.Origin("roles.primary.model") != "default" {
			t.Errorf("%q: model origin %q, want default", content, l.src.Origin("roles.primary.model"))
		}
	}
}

func TestProjectFileChoice(t *testing.T) {
	t.Parallel()
	t.Run("both project files is a problem saying pick one", func(t *testing.T) {
		t.Parallel()
		ps := problemsOf(t, fixture{project: "offline: true\n", projectAlt: "offline: false\n"}.load(t).err)
		if len(ps) != 1 || !strings.Contains(ps[0].Message, "pick one") {
			t.Fatalf("problems = %v", ps)
		}
	})
	t.Run(".lemmings/config.yaml alone is read", func(t *testing.T) {
		t.Parallel()
		l := fixture{projectAlt: "limits:\n  max_tasks: 7\n"}.mustLoad(t)
		if l.cfg.Limits.MaxTasks != 7 || l.src.Origin("limits.max_tasks") != ".lemmings/config.yaml:2" {
			t.Fatalf("max_tasks = %d from %q", l.cfg.Limits.MaxTasks, l.src.Origin("limits.max_tasks"))
		}
		if got := l.src.Files(); len(got) != 1 || got[0] != ".lemmings/config.yaml" {
			t.Errorf("Files() = %v", got)
		}
	})
	t.Run("a .yml project file is not silently ignored", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		writeFile(t, root+"/lemmings.yml", "offline: true\n")
		_, _, err := Load(LoadOptions{RepoRoot: root, UserConfigDir: t.TempDir(), Env: func(string) string { return "" }})
		ps := problemsOf(t, err)
		if len(ps) != 1 || ps[0].File != "lemmings.yml" || !strings.Contains(ps[0].Message, "rename it to lemmings.yaml") {
			t.Fatalf("problems = %v", ps)
		}
	})
	t.Run("an unreadable user file is a problem naming it", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		if err := mkdir(dir + "/config.yaml"); err != nil {
			t.Fatal(err)
		}
		_, _, err := Load(LoadOptions{UserConfigDir: dir, Env: func(string) string { return "" }})
		ps := problemsOf(t, err)
		if len(ps) != 1 || ps[0].File != dir+"/config.yaml" || !strings.Contains(ps[0].Message, "cannot read") {
			t.Fatalf("problems = %v", ps)
		}
	})
}

func TestThePlannerIsThePrimaryUntilItIsGivenAModel(t *testing.T) {
	t.Parallel()
	c := Default()
	p, err := c.ResolvedRole(RolePlanner)
	if err != nil {
		t.Fatal(err)
	}
	if prim, _ := c.ResolvedRole(RolePrimary); p.Model != prim.Model || p.Provider != prim.Provider {
		t.Errorf("default planner = %s/%s, want the primary %s/%s", p.Provider, p.Model, prim.Provider, prim.Model)
	}
	r := c.Roles[RolePlanner]
	r.Provider, r.Model = ProviderOpenRouter, "vendor/big"
	c.Roles[RolePlanner] = r
	if err := c.Validate(); err != nil {
		t.Fatalf("a cloud planner is valid: %v", err)
	}
	p, _ = c.ResolvedRole(RolePlanner)
	if p.Model != "vendor/big" || p.BaseURL != c.OpenRouter.BaseURL {
		t.Errorf("cloud planner resolved to %+v", p)
	}
}
