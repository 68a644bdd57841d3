package mcpserver

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/demo"
)

// A tool's error is what the CLI prints for the same request, word for word:
// the same causes, the same fixes. The CLI's message is its stderr after
// "lemmings: ".
func TestToolErrorsReadLikeTheCLI(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &demo.Script{})
	s := f.server(t)
	cs := client(t, s, nil)
	// A repository with a run store but not the run asked for.
	withStore := newFixture(t, &demo.Script{})
	if err := os.MkdirAll(filepath.Join(withStore.repo, ".lemmings", "checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	csStore := client(t, withStore.server(t), nil)
	// A repository whose model server is down.
	down := newFixture(t, &demo.Script{})
	down.models.Close()
	csDown := client(t, down.server(t), nil)

	cases := []struct {
		name string
		repo string
		tool string
		args map[string]any
		cli  []string
	}{
		{"status without any run", f.repo, "status", nil, []string{"status"}},
		{"status of a run that is not stored", withStore.repo, "status", map[string]any{"run_id": "nope"}, []string{"status", "nope"}},
		{"status of a run id in a repository without runs", f.repo, "status", map[string]any{"run_id": "nope"}, []string{"status", "nope"}},
		{"report without any run", f.repo, "report", nil, []string{"report"}},
		{"a run id that climbs out of the run store", withStore.repo, "report", map[string]any{"run_id": "../../../etc"}, []string{"report", "../../../etc"}},
		{"events of a run id that climbs out of the run store", withStore.repo, "events", map[string]any{"run_id": "../x"}, []string{"log", "../x"}},
		{"halt without any run", f.repo, "halt", nil, []string{"halt"}},
		{"approve without any run", f.repo, "approve", nil, []string{"resume", "--approve"}},
		{"a knowledge document that does not exist", f.repo, "knowledge_show", map[string]any{"doc": "conventions/nope.md"}, []string{"knowledge", "show", "conventions/nope.md"}},
		{"search before any index", f.repo, "search", map[string]any{"query": "words"}, []string{"search", "words"}},
		{"run without a remit", f.repo, "run", nil, []string{"run"}},
		{"run while the model server is down", down.repo, "run", map[string]any{"remit": "add a flag"}, []string{"run", "add a flag"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := map[string]*mcp.ClientSession{f.repo: cs, withStore.repo: csStore, down.repo: csDown}[c.repo]
			err := call(t, session, c.tool, c.args, nil)
			if err == nil {
				t.Fatalf("%s %v succeeded", c.tool, c.args)
			}
			want := cliError(t, map[string]*fixture{f.repo: f, withStore.repo: withStore, down.repo: down}[c.repo], c.repo, c.cli...)
			if got := err.Error(); got != want {
				t.Errorf("tool error:\n%s\nCLI error:\n%s", got, want)
			}
			// A run that did not start leaves no worktree or branch behind.
			if branches := git(t, c.repo, "branch", "--list", "lemmings/*"); branches != "" {
				t.Errorf("branches left behind: %s", branches)
			}
		})
	}
}

// cliError runs the binary and returns what it printed after "lemmings: ".
func cliError(t *testing.T, f *fixture, dir string, args ...string) string {
	t.Helper()
	cmd := command(lemmingsBin(t), f.env, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("lemmings %v: %v (want a failure)", args, err)
	}
	_, msg, ok := strings.Cut(stderr.String(), "lemmings: ")
	if !ok {
		t.Fatalf("lemmings %v printed no error:\n%s", args, stderr.String())
	}
	return strings.TrimSpace(msg)
}
