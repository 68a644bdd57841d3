package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
)

// The attack of issue 33: run with plan_file=/etc/shadow (or any file the
// user can read) echoed its first lines in the error. A plan file is a file
// of the repository, reached through no link that leads out; a file that
// is not a plan is refused by line and column, never quoted.
func TestAPlanFileStaysInTheRepositoryAndIsNeverQuoted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &demo.Script{})
	cs := client(t, f.server(t), nil)
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "shadow")
	if err := os.WriteFile(secret, []byte("root:SECRET-HASH-OUTSIDE:19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".env":      "API_TOKEN=SECRET-IN-REPO-123\n",
		"notes.txt": "- SECRET-LIST-ITEM\n- another\n",
		"bad.yaml":  "milestones:\n  - goal: [SECRET-IN-YAML, x]\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(f.repo, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(f.repo, "plan-link.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{secret, "relative to the repository root"},
		{"/etc/passwd", "relative to the repository root"},
		{"../../../../../../etc/passwd", "through no link that leads out of it"},
		{"plan-link.yaml", "through no link that leads out of it"},
		{".env", "not a plan"},
		{"notes.txt", "not a plan"},
		{"bad.yaml", "not a plan (YAML error at line 2, column"},
	} {
		err := call(t, cs, "run", map[string]any{"plan_file": c.file}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("plan_file %s: %v, want %q", c.file, err, c.want)
			continue
		}
		for _, leak := range []string{"SECRET", "root:", "API_TOKEN"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("plan_file %s: the error quotes the file: %v", c.file, err)
			}
		}
	}
	if branches := git(t, f.repo, "branch", "--list", "lemmings/*"); branches != "" {
		t.Errorf("a refused plan started a run: %s", branches)
	}
}

// The remit reaches the run on its standard input, never in its command
// line (every user of the machine reads those in /proc); the process's log
// and a plan given as text are readable by the user only, in a folder that
// is too.
func TestTheRemitGoesOnStandardInputAndTheFilesArePrivate(t *testing.T) {
	t.Parallel()
	repo := newFixture(t, &demo.Script{}).repo
	seen := t.TempDir()
	// A stand-in for lemmings that records what it was given.
	exe := filepath.Join(t.TempDir(), "lemmings")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + seen + "/argv\ncat > " + seen + "/stdin\necho 'lemmings: recorded'\nexit 2\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Root: repo, Exe: exe, StartWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cs := client(t, s, nil)
	remit := "rename the flag; the deploy token is REMIT-MARKER-42"
	plan := "milestones:\n  - goal: g\n    tasks:\n      - {title: t, instructions: i, acceptance_criteria: [c]}\n"
	if err := call(t, cs, "run", map[string]any{"remit": remit, "plan": plan}, nil); err == nil || !strings.Contains(err.Error(), "recorded") {
		t.Fatalf("run: %v", err)
	}
	argv, _ := os.ReadFile(filepath.Join(seen, "argv"))
	stdin, _ := os.ReadFile(filepath.Join(seen, "stdin"))
	if strings.Contains(string(argv), "REMIT-MARKER") || !strings.Contains(string(argv), "--remit-file\n-\n") {
		t.Errorf("the command line:\n%s", argv)
	}
	if string(stdin) != remit {
		t.Errorf("standard input %q, want the remit", stdin)
	}
	dir := filepath.Join(repo, ".lemmings", MCPDir)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("%s holds %d files, want the log and the plan", dir, len(entries))
	}
	for _, p := range []string{dir, filepath.Join(dir, entries[0].Name()), filepath.Join(dir, entries[1].Name())} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]os.FileMode{true: 0o700, false: 0o600}[fi.IsDir()]; fi.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", p, fi.Mode().Perm(), want)
		}
		if !fi.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), "REMIT-MARKER") {
				t.Errorf("%s holds the remit:\n%s", p, data)
			}
		}
	}
}
