package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
)

// The attacks of issue 43 on what lemmings reads, prints and keeps (the
// probe's reproductions 7 to 12 and 14), run through the binary with a
// hostile repository and scripted hostile models.

// runWithin runs the binary and fails the test when it has not ended
// within limit (the FIFO held lemmings until SIGKILL).
func (c *cli) runWithin(t *testing.T, limit time.Duration, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := c.command(ctx, dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("lemmings %v still ran after %s: killed\nstdout:\n%s\nstderr:\n%s", args, limit, out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(interface{ ExitCode() int }); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("lemmings %v: %v", args, err)
	}
	t.Logf("lemmings %v: exit %d in %s", args, code, time.Since(start).Round(time.Millisecond))
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// Reproduction 7 (and issue 46's item 7): a gate of the repository's that
// replaces a source file with a FIFO held lemmings forever in open(2), and
// SIGTERM, two SIGINTs and lemmings halt did nothing; a FIFO left by the
// model ended the run with git's "can only add regular files". Now the
// attempt fails in lemmings' words, naming the file, and the run goes on:
// the gate makes the FIFO once, the next attempt passes.
func TestAFIFOInTheWorkTreeFailsTheAttemptNamedAndTheRunGoesOn(t *testing.T) {
	repo := hostileRepo(t, map[string]string{
		".gitignore":    ".made\n",
		"lemmings.yaml": "gates:\n  - {name: test, command: \"if [ -e .made ]; then go test ./...; else touch .made && rm -f textstats.go && mkfifo textstats.go; fi\"}\n",
	})
	srv := demo.NewServer(&demo.Script{})
	t.Cleanup(srv.Close)
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, fixPlan)
	r := c.runWithin(t, 2*time.Minute, repo, "run", "--plan", plan, "--no-supervisors", "--json")
	res := lastJSON(t, r.stdout)
	if res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\nstdout:\n%s\nstderr:\n%s", r.code, res, r.stdout, r.stderr)
	}
	events := readFile(t, filepath.Join(repo, ".lemmings", "runs", res["run_id"].(string), "events.jsonl"))
	want := "the attempt failed because textstats.go is a FIFO (named pipe), not a regular file"
	if !strings.Contains(events, want) {
		t.Errorf("the events do not say %q:\n%s", want, events)
	}
	for _, bad := range []string{"can only add regular files", "cannot hash", "error in : node"} {
		if strings.Contains(events+r.stdout+r.stderr, bad) {
			t.Errorf("git's words or an anonymous error reached the run: %q", bad)
		}
	}
	if got := git(t, repo, "show", res["branch"].(string)+":textstats.go"); !strings.Contains(got, "float64(total) / float64(len(words))") {
		t.Errorf("the fix is not on the branch:\n%s", got)
	}
}
