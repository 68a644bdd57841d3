package config

import (
	"strings"
	"testing"
)

// A repository's project file may tighten the sandbox, never loosen it:
// the model writes code in that repository.
func TestAProjectFileCannotLoosenTheSandbox(t *testing.T) {
	t.Parallel()
	l := fixture{project: "sandbox:\n  mode: off\n  writable: [/home]\n  env: [OPENROUTER_API_KEY]\n  network: true\n  cache_dir: /root/.ssh\n"}.load(t)
	ps := problemsOf(t, l.err)
	got := map[string]Problem{}
	for _, p := range ps {
		got[p.Key] = p
	}
	for i, key := range []string{"sandbox.mode", "sandbox.writable", "sandbox.env", "sandbox.network", "sandbox.cache_dir"} {
		p, ok := got[key]
		if !ok {
			t.Errorf("no problem for %s: %v", key, ps)
			continue
		}
		if p.File != "lemmings.yaml" || p.Line != i+2 || !strings.Contains(p.Message, "refused: a repository's project file") || !strings.Contains(p.Message, EnvName(key)) {
			t.Errorf("%s: %+v", key, p)
		}
	}
}

func TestTheSandboxIsTheUsersToSetAndAProjectMayTightenIt(t *testing.T) {
	t.Parallel()
	user := "sandbox:\n  mode: auto\n  writable: [~/.cargo]\n  env: [DATABASE_URL]\n  network: true\n"
	l := fixture{user: user, project: "sandbox:\n  mode: required\n  writable: [~/.cargo]\n  network: true\n"}.mustLoad(t)
	sb := l.cfg.Sandbox
	if sb.Mode != "required" || len(sb.Writable) != 1 || sb.Env[0] != "DATABASE_URL" || !sb.Network {
		t.Errorf("%+v", sb)
	}
	// The user's required wins over a project's auto, as a problem.
	l = fixture{user: "sandbox:\n  mode: required\n", project: "sandbox:\n  mode: auto\n"}.load(t)
	if ps := problemsOf(t, l.err); len(ps) != 1 || ps[0].Key != "sandbox.mode" || ps[0].Line != 2 {
		t.Errorf("%v", ps)
	}
	// The environment is the user's too.
	l = fixture{env: map[string]string{"LEMMINGS_SANDBOX__MODE": "off"}}.mustLoad(t)
	if l.cfg.Sandbox.Mode != "off" {
		t.Errorf("mode %q", l.cfg.Sandbox.Mode)
	}
	// A project's gate may have the network only when the user gives it:
	// sandbox.network, or their own gate of that name and command.
	netGate := "gates:\n  - name: test\n    command: npm ci && npm test\n    network: true\n"
	if ps := problemsOf(t, fixture{project: netGate}.load(t).err); len(ps) != 1 || ps[0].Key != "gates.0.network" || ps[0].Line != 4 {
		t.Errorf("%v", ps)
	}
	for _, f := range []fixture{
		{user: "sandbox:\n  network: true\n", project: netGate},
		{env: map[string]string{"LEMMINGS_SANDBOX__NETWORK": "true"}, project: netGate},
		{user: netGate, project: "gates:\n  - {name: lint, command: make lint}\n" + netGate[len("gates:\n"):]},
	} {
		l = f.mustLoad(t)
		if !l.cfg.Gates[len(l.cfg.Gates)-1].Network {
			t.Errorf("%+v", l.cfg.Gates)
		}
	}
}

func TestSandboxValuesAreChecked(t *testing.T) {
	t.Parallel()
	l := fixture{user: "sandbox:\n  mode: strict\n  writable: [relative/path]\n  env: [\"1BAD\"]\n"}.load(t)
	text := l.err.Error()
	for _, want := range []string{"sandbox.mode", `unknown value "strict"`, "sandbox.writable.0", "neither absolute nor under ~/", "sandbox.env.0"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
}
