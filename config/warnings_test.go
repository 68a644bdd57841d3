package config

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/gitfixture"
)

// A project file may not choose a key (a refusal, trust_test.go); one that
// repeats the user's own key is allowed, and a commit would publish it.
func TestAPIKeyInAProjectFileGitDoesNotIgnoreIsAWarning(t *testing.T) {
	t.Parallel()
	keys := "openrouter:\n  api_key: sk-or-v1-0123456789abcdef\nroles:\n  supervisor:\n    api_key: sk-other-0123456789\n"
	l := fixture{user: keys, project: keys}.mustLoad(t)
	w := l.src.Warnings()
	if len(w) != 2 {
		t.Fatalf("warnings = %v", w)
	}
	if w[0].File != ProjectFile || w[0].Line != 2 || w[0].Key != "openrouter.api_key" || !strings.Contains(w[0].Message, "a commit would publish it") {
		t.Errorf("warning = %+v", w[0])
	}
	if w[1].Line != 5 || w[1].Key != "roles.supervisor.api_key" {
		t.Errorf("warning = %+v", w[1])
	}
	if strings.Contains(w[0].String(), "0123456789abcdef") {
		t.Error("the warning repeats the key")
	}
}

func TestAPIKeyInTheUserFileOrEnvironmentIsFine(t *testing.T) {
	t.Parallel()
	for _, f := range []fixture{
		{user: "openrouter:\n  api_key: sk-or-v1-0123456789abcdef\n"},
		{env: map[string]string{"OPENROUTER_API_KEY": "sk-or-v1-0123456789abcdef"}},
	} {
		if w := f.mustLoad(t).src.Warnings(); len(w) != 0 {
			t.Errorf("warnings = %v", w)
		}
	}
}

// With a real git: a key in an ignored .lemmings/config.yaml is fine; in a
// tracked-looking lemmings.yaml it is not.
func TestAPIKeyWarningAsksGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	key := "openrouter:\n  api_key: sk-or-v1-0123456789abcdef\n"
	for _, tc := range []struct {
		file  string
		warns bool
	}{{".lemmings/config.yaml", false}, {"lemmings.yaml", true}} {
		root := t.TempDir()
		gitfixture.Init(t, root)
		writeFile(t, root+"/.gitignore", "/.lemmings/\n")
		writeFile(t, root+"/"+tc.file, key)
		userDir := t.TempDir()
		writeFile(t, userDir+"/config.yaml", key)
		_, s, err := Load(LoadOptions{RepoRoot: root, UserConfigDir: userDir, Env: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(s.Warnings()) > 0; got != tc.warns {
			t.Errorf("%s: warned %v, want %v: %v", tc.file, got, tc.warns, s.Warnings())
		}
	}
}

func TestSupervisorsWithoutAKeyWarn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		f     fixture
		warns bool
	}{
		{"enabled without a key", fixture{}, true},
		{"disabled", fixture{project: "supervisors:\n  enabled: false\n"}, false},
		{"no budget", fixture{project: "supervisors:\n  budget_usd: 0\n"}, false},
		{"offline", fixture{flags: map[string]string{"offline": "true"}}, false},
		{"supervisor on a local server", fixture{project: "roles:\n  supervisor:\n    provider: ollama\n"}, false},
		{"a role key instead of the global one", fixture{env: map[string]string{"LEMMINGS_ROLES__SUPERVISOR__API_KEY": "sk-role-0123456789"}}, false},
	}
	for _, tc := range cases {
		w := tc.f.mustLoad(t).src.Warnings()
		if got := len(w) == 1 && strings.Contains(w[0].Message, "no OpenRouter key"); got != tc.warns || (!tc.warns && len(w) != 0) {
			t.Errorf("%s: warnings = %v, want warning %v", tc.name, w, tc.warns)
		}
	}
}
