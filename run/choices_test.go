package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/gitfixture"
)

// A run's recorded choices go on as flags (the user's word): a choices.json
// a repository commits, or one naming a key a run never records (a command
// for a bare resume), is refused.
func TestChoicesAreOnlyWhatARunRecords(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	gitfixture.Init(t, root)
	write := func(id, body string) string {
		t.Helper()
		path := filepath.Join(root, DataDir, RunsDir, id, ChoicesFile)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("good", `{"offline":"false","roles.primary.model":"m"}`)
	if ch, err := LoadChoices(root, "good"); err != nil || ch["roles.primary.model"] != "m" {
		t.Fatalf("%v %v", ch, err)
	}
	write("wide", `{"implementor.cli.command":"./tool.sh","implementor.backend":"cli"}`)
	if _, err := LoadChoices(root, "wide"); err == nil || !strings.Contains(err.Error(), "is not a choice a run records") {
		t.Errorf("err = %v", err)
	}
	path := write("committed", `{"supervisors.enabled":"true"}`)
	gitfixture.Git(t, root, "add", "-f", path)
	if _, err := LoadChoices(root, "committed"); err == nil || !strings.Contains(err.Error(), "committed in the repository") {
		t.Errorf("err = %v", err)
	}
}
