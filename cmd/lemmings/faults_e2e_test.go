package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
)

// pausedRun starts a demo run that pauses for its milestones and returns its id.
func pausedRun(t *testing.T, c *cli, repo string) string {
	t.Helper()
	r := c.run(repo, "run", "--json", demo.Remit, "--approve", "milestones", "--no-supervisors")
	if r.code != exitPaused {
		t.Fatalf("run --approve milestones: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return lastJSON(t, r.stdout)["run_id"].(string)
}

// lastSegmentOf is the newest checkpoint segment of a run.
func lastSegmentOf(t *testing.T, repo, id string) string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(repo, ".lemmings", "checkpoints", id, "*.seg"))
	if len(segs) == 0 {
		t.Fatalf("run %s has no checkpoint segment", id)
	}
	return segs[len(segs)-1]
}

// A paused run whose last record was torn by a crash (a power cut while it
// was written) is never resumed past its approval by a bare resume: the step
// that asked for the approval runs again and asks again.
func TestATornPauseRecordNeverSkipsTheApproval(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	id := pausedRun(t, c, repo)
	seg := lastSegmentOf(t, repo, id)
	data, err := os.ReadFile(seg)
	must(t, err)
	must(t, os.WriteFile(seg, data[:len(data)-7], 0o600))

	b := c.run(repo, "resume", "--no-supervisors")
	if b.code != exitPaused || callsOf(srv, "implementor") != 0 || callsOf(srv, "task_planner") != 0 {
		t.Fatalf("bare resume after a torn pause record: exit %d, %d planner and %d implementor calls (want the approval asked again)\n%s\n%s",
			b.code, callsOf(srv, "task_planner"), callsOf(srv, "implementor"), b.stdout, b.stderr)
	}
	if st := c.run(repo, "status", "--json", id); !strings.Contains(st.stdout, `"status":"paused"`) {
		t.Errorf("status after the resume: %s", st.stdout)
	}
	if a := c.run(repo, "resume", "--approve", "--no-supervisors"); a.code != 0 {
		t.Errorf("resume --approve: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
}

// One damaged run (its checkpoints cannot be read) never stops a command
// about another: status, log, report, runs, resume and clean --finished work
// on the good run and name the damaged one with what to do; the damaged one
// can be removed.
func TestADamagedRunDoesNotStopTheOthers(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	good := pausedRun(t, c, repo)
	time.Sleep(1100 * time.Millisecond) // run ids and updates sort by second
	bad := pausedRun(t, c, repo)
	seg := lastSegmentOf(t, repo, bad)
	data, err := os.ReadFile(seg)
	must(t, err)
	data[30] ^= 0x5a          // inside the first record
	data[len(data)-6] ^= 0x5a // and the last
	must(t, os.WriteFile(seg, data, 0o600))

	advice := "lemmings clean " + bad + " --force --prune"
	for _, args := range [][]string{{"status"}, {"status", good}, {"log", good}, {"report", good}, {"runs"}, {"runs", "--json"}} {
		r := c.run(repo, args...)
		if r.code != 0 {
			t.Errorf("lemmings %v with a damaged neighbour: exit %d\n%s", args, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout+r.stderr, bad) || !strings.Contains(r.stdout+r.stderr, advice) {
			t.Errorf("lemmings %v does not name the damaged run with what to do:\n%s\n%s", args, r.stdout, r.stderr)
		}
	}
	if st := c.run(repo, "status", "--json"); !strings.Contains(st.stdout, `"run_id":"`+good+`"`) {
		t.Errorf("status without a run id picked %s", st.stdout)
	}
	if st := c.run(repo, "status", bad); st.code == 0 || !strings.Contains(st.stderr, advice) {
		t.Errorf("status of the damaged run: exit %d\n%s", st.code, st.stderr)
	}
	if a := c.run(repo, "resume", "--approve", "--no-supervisors"); a.code != 0 || !strings.Contains(a.stdout, good) {
		t.Fatalf("resume --approve (the good run is the latest resumable): exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	if cl := c.run(repo, "clean", "--finished"); cl.code != 0 || !strings.Contains(cl.stdout, good) || !strings.Contains(cl.stderr, bad) {
		t.Errorf("clean --finished: exit %d\n%s\n%s", cl.code, cl.stdout, cl.stderr)
	}
	if cl := c.run(repo, "clean", bad, "--force", "--prune"); cl.code != 0 {
		t.Errorf("clean of the damaged run: exit %d\n%s", cl.code, cl.stderr)
	}
	if r := c.run(repo, "runs"); strings.Contains(r.stdout+r.stderr, bad) {
		t.Errorf("the damaged run is still listed after clean --prune:\n%s\n%s", r.stdout, r.stderr)
	}
}

// A .lemmings that is a symbolic link (committed in a hostile repository) or
// a file is refused with what to do, and nothing is written where it points.
func TestALinkedOrFileDataDirIsRefused(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	repo, outside := prepared(t), t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(repo, ".lemmings")))
	git(t, repo, "add", ".lemmings")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "data elsewhere")
	for _, args := range [][]string{{"run", "fix the mean"}, {"status"}, {"runs"}} {
		r := c.run(repo, args...)
		if r.code == 0 || !strings.Contains(r.stderr, "is a symbolic link") || !strings.Contains(r.stderr, "rm .lemmings") {
			t.Errorf("lemmings %v with .lemmings linked outside: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("lemmings wrote where .lemmings points: %v", ents)
	}
	repo2 := prepared(t)
	must(t, os.WriteFile(filepath.Join(repo2, ".lemmings"), []byte("not a folder\n"), 0o644))
	if r := c.run(repo2, "run", "fix the mean"); r.code == 0 || !strings.Contains(r.stderr, "is not a directory") {
		t.Errorf("run with .lemmings a file: exit %d\n%s", r.code, r.stderr)
	}
}

// The remit comes from an argument, a file or standard input, within
// limits.remit_bytes; over it, the run is refused before anything is made.
func TestTheRemitComesFromAFileOrStdinWithinALimit(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	repo := prepared(t)
	file := filepath.Join(t.TempDir(), "remit.md")
	must(t, os.WriteFile(file, []byte("\n"+demo.Remit+"\n"), 0o644))
	r := c.run(repo, "run", "--json", "--remit-file", file, "--approve", "milestones", "--no-supervisors")
	if r.code != exitPaused {
		t.Fatalf("run --remit-file: exit %d\n%s", r.code, r.stderr)
	}
	if st := c.run(repo, "status", "--json"); !strings.Contains(st.stdout, `"remit":`+jsonQuote(demo.Remit)) {
		t.Errorf("the remit from the file: %s", st.stdout)
	}
	stdin := c.command(context.Background(), repo, "run", "--json", "--remit-file", "-", "--approve", "milestones", "--no-supervisors")
	stdin.Stdin = strings.NewReader("from stdin: " + demo.Remit)
	var out bytes.Buffer
	stdin.Stdout = &out
	if err := stdin.Run(); exitCode(err) != exitPaused {
		t.Fatalf("run --remit-file -: %v\n%s", err, out.String())
	}
	if st := c.run(repo, "status", "--json"); !strings.Contains(st.stdout, `"remit":"from stdin: `) {
		t.Errorf("the remit from stdin: %s", st.stdout)
	}

	// Over the limit: refused with it named, and no run or worktree made.
	// (An argument cannot be much larger: Linux refuses one over 128 KB.)
	fresh := prepared(t)
	big := strings.Repeat("do this and that. ", 128<<10/18+1)
	must(t, os.WriteFile(file, []byte(big), 0o644))
	for name, args := range map[string][]string{"argument": {"run", big[:100<<10]}, "file": {"run", "--remit-file", file}} {
		r := c.run(fresh, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "limits.remit_bytes") || !strings.Contains(r.stderr, "65536") {
			t.Errorf("a remit over the limit as %s: exit %d\n%.600s", name, r.code, r.stderr)
		}
	}
	over := c.command(context.Background(), fresh, "run", "--remit-file", "-")
	over.Stdin = strings.NewReader(big)
	var errb bytes.Buffer
	over.Stderr = &errb
	if err := over.Run(); exitCode(err) != exitUsage || !strings.Contains(errb.String(), "more than 65536 bytes") {
		t.Errorf("a 128 KB remit on stdin: %v\n%s", err, errb.String())
	}
	if _, err := os.Stat(filepath.Join(fresh, ".lemmings")); err == nil {
		t.Errorf("a refused remit left .lemmings behind")
	}
	if b := git(t, fresh, "branch", "--list", "lemmings/*"); b != "" {
		t.Errorf("a refused remit left a branch: %s", b)
	}
}

// A broken prompt template override fails before the run exists, naming its
// file and line; so does one that names a field its data lacks (found by
// executing it with sample data).
func TestABrokenPromptTemplateIsRefusedBeforeTheRun(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:9")
	for name, tmpl := range map[string]string{
		"unknown field": "You plan tasks.\n\nMilestone: {{.MilestoneID}}\nAttempt {{.Attemps}}\n",
		"parse error":   "You plan tasks.\n{{if .Polish}}\npolish\n",
	} {
		t.Run(name, func(t *testing.T) {
			repo := prepared(t)
			dir := filepath.Join(repo, ".lemmings", "prompts")
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "task_planner.tmpl"), []byte(tmpl), 0o644))
			r := c.run(repo, "run", "fix the mean")
			if r.code != exitUsage || !strings.Contains(r.stderr, filepath.Join(".lemmings", "prompts", "task_planner.tmpl")) {
				t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
			}
			if name == "unknown field" && !strings.Contains(r.stderr, "task_planner.tmpl:4") {
				t.Errorf("the error does not name the line:\n%s", r.stderr)
			}
			if _, err := os.Stat(filepath.Join(repo, ".lemmings", "worktrees")); err == nil {
				t.Errorf("a worktree was made for a run that cannot plan")
			}
		})
	}
}

// A bare repository is not "not a git repository".
func TestABareRepositoryHasItsOwnMessage(t *testing.T) {
	c := newCLI(t)
	bare := filepath.Join(t.TempDir(), "b.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	r := c.run(bare, "run", "fix it")
	if r.code == 0 || !strings.Contains(r.stderr, "bare repository") || !strings.Contains(r.stderr, "git clone") || strings.Contains(r.stderr, "git init") {
		t.Errorf("run in a bare repository: exit %d\n%s", r.code, r.stderr)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
