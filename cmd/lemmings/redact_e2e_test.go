package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// Secrets as a hostile or careless repository exposes them, assembled from
// pieces so scanners do not flag this file. ghToken and slackToken have
// formats the rules know; the others are plain values the redaction only
// catches because it was taught them (lemmings' environment, the .env file).
var (
	ghToken    = "gh" + "p_" + "Rm1tK9pQ2wE4rT6yU8iO0pA3sD5fG7hJ9kL1"
	slackToken = "xox" + "b-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	orKeyValue = "orkey-" + "Vb7Nq2Lx9Tz4Wm8Rk3Hp"
	awsValue   = "aws/Secret+" + "Kp9Lm2Nq7Rt4Vx8Zb3Wd6Yf"
	dbPassword = "Hunter2-Db-" + "Pa55word"
)

func allSecrets() map[string]string {
	return map[string]string{"GitHub token": ghToken, "Slack token": slackToken, "OPENROUTER_API_KEY": orKeyValue,
		"AWS_SECRET_ACCESS_KEY": awsValue, ".env DB_PASSWORD": dbPassword}
}

// noSecret fails when any secret shows in text, as written or in the forms
// JSON and HTML give it.
func noSecret(t *testing.T, where, text string) {
	t.Helper()
	for name, s := range allSecrets() {
		enc, _ := json.Marshal(s)
		for _, form := range []string{s, strings.Trim(string(enc), `"`), strings.ReplaceAll(s, "+", "&#43;"), s[:len(s)*2/3]} {
			if strings.Contains(text, form) {
				t.Errorf("%s shows the %s (%q)", where, name, form)
				break
			}
		}
	}
}

// secretRepo is the demo repository with a hostile test helper committed: it
// prints every secret when a test fails (the demo's second task fails its
// first go test), a .env beside it, and the knowledge folder of conventions
// linked outside the repository.
func secretRepo(t *testing.T) (repo, outside string) {
	t.Helper()
	repo, outside = prepared(t), t.TempDir()
	helper := fmt.Sprintf(`package textstats

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 {
		fmt.Println("deploy with token", %q)
		fmt.Println(%q)
		fmt.Println(%q)
		fmt.Println(%q)
	}
	os.Exit(code)
}
`, ghToken, orKeyValue, awsValue, dbPassword)
	must(t, os.WriteFile(filepath.Join(repo, "zz_debug_test.go"), []byte(helper), 0o644))
	must(t, os.MkdirAll(filepath.Join(repo, "docs", "knowledge"), 0o755))
	must(t, os.Symlink(outside, filepath.Join(repo, "docs", "knowledge", "conventions")))
	git(t, repo, "add", "-A")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "debug helper")
	must(t, os.WriteFile(filepath.Join(repo, ".env"), []byte("PORT=8080\nDB_PASSWORD=\""+dbPassword+"\"\n"), 0o600))
	f, err := os.OpenFile(filepath.Join(repo, ".git", "info", "exclude"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	must(t, err)
	_, _ = f.WriteString(".env\n")
	f.Close()
	return repo, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSecretsNeverLeaveThroughAnyOutput runs the demo on a repository whose
// failing test prints a GitHub token, lemmings' OpenRouter and AWS keys and a
// .env password, with a Slack token in the remit, and looks for them
// everywhere lemmings writes: stdout and stderr of the run (--json) and of
// log, status, report and runs (text and --json), the run's files and
// checkpoints, and lemmings serve's pages, /live fragment, runs list and
// event stream. The redaction marks must show where the secrets were.
func TestSecretsNeverLeaveThroughAnyOutput(t *testing.T) {
	repo, outside := secretRepo(t)
	// Model replies carry the secrets too, as a model echoing what it saw
	// would: the milestones' goals (status, serve's board), an error of the
	// summarizer (a warning event: --json, log), then its summaries (state,
	// report, board).
	script := &demo.Script{}
	local := script.Steps()[0].Respond
	roleIs := func(role string) func(llmtest.Call) bool {
		return func(c llmtest.Call) bool { return len(c.Messages) > 0 && c.Role() == role }
	}
	scope := llmtest.Step{Name: "echoing scope agent", API: llmtest.Ollama, Times: -1, Match: roleIs("scope_agent"),
		Respond: func(c llmtest.Call) llmtest.Reply {
			r := local(c)
			var v map[string]any
			must(t, json.Unmarshal([]byte(r.Content), &v))
			for _, m := range v["milestones"].([]any) {
				m.(map[string]any)["goal"] = m.(map[string]any)["goal"].(string) + " (ship with " + ghToken + " and " + orKeyValue + ")"
			}
			body, _ := json.Marshal(v)
			r.Content = string(body)
			return r
		}}
	refusal := llmtest.Step{Name: "summarizer error", API: llmtest.Ollama, Match: roleIs("summarizer"),
		Reply: llmtest.Reply{Status: 400, Body: fmt.Sprintf(`{"error":"request refused: it holds %s and %s and %s"}`, ghToken, awsValue, dbPassword)}}
	echo := llmtest.Step{Name: "echoing summarizer", API: llmtest.Ollama, Times: -1,
		Match: roleIs("summarizer"),
		Respond: func(c llmtest.Call) llmtest.Reply {
			summary := fmt.Sprintf("Completed: %s. Deployed with %s, key %s and %s, database password %s.",
				llmtest.TaskTitle(c.FirstUser()), ghToken, orKeyValue, awsValue, dbPassword)
			body, _ := json.Marshal(map[string]string{"summary": summary})
			return llmtest.Reply{Content: string(body)}
		}}
	srv := demo.NewServer(script, scope, refusal, echo)
	defer srv.Close()
	c := newCLI(t, "OPENROUTER_API_KEY="+orKeyValue, "AWS_SECRET_ACCESS_KEY="+awsValue)
	c.config(scriptedConfig(srv.URL(), "blocking"))

	r := c.run(repo, "run", "--json", "--full", demo.Remit+" The deploy bot token is "+slackToken)
	if r.code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	noSecret(t, "run --json stdout", r.stdout)
	noSecret(t, "run stderr", r.stderr)
	if !strings.Contains(r.stderr, "the remit holds a secret") || !strings.Contains(r.stderr, "[REDACTED:slack-bot-token]") {
		t.Errorf("no warning about the remit's secret:\n%s", r.stderr)
	}
	runID := lastJSON(t, r.stdout)["run_id"].(string)

	// The failing test's output and the model's summaries did reach the
	// outputs, redacted.
	runDir := filepath.Join(repo, ".lemmings", "runs", runID)
	events, err := os.ReadFile(filepath.Join(runDir, "events.jsonl"))
	must(t, err)
	if report, _ := os.ReadFile(filepath.Join(runDir, "report.md")); !strings.Contains(string(report), "Deployed with [REDACTED:") {
		t.Errorf("the report lacks the summaries, redacted: did the summarizer answer?")
	}
	for _, mark := range []string{"[REDACTED:github-pat]", "[REDACTED:$OPENROUTER_API_KEY]", "[REDACTED:$AWS_SECRET_ACCESS_KEY]", "[REDACTED:.env:DB_PASSWORD]"} {
		if !strings.Contains(string(events), mark) {
			t.Errorf("events.jsonl lacks %s: the test's output never reached it?", mark)
		}
	}

	for _, args := range [][]string{{"log", runID}, {"log", "--json", runID}, {"status", runID}, {"status", "--json", runID},
		{"report", runID}, {"report", "--json", runID}, {"runs"}, {"runs", "--json"}, {"directives", runID}} {
		out := c.run(repo, args...)
		if out.code != 0 {
			t.Errorf("lemmings %v: exit %d\n%s", args, out.code, out.stderr)
		}
		noSecret(t, "lemmings "+strings.Join(args, " "), out.stdout+out.stderr)
	}
	if st := c.run(repo, "status", runID); !strings.Contains(st.stdout, "[REDACTED:slack-bot-token]") || !strings.Contains(st.stdout, "(ship with [REDACTED:github-pat]") {
		t.Errorf("status does not show the remit and the goals redacted:\n%s", st.stdout)
	}
	if !strings.Contains(r.stdout, "summarizer unavailable") {
		t.Errorf("the summarizer's error never reached --json stdout:\n%s", r.stdout)
	}

	// Every file of the run, checkpoints included, and who may read them.
	for _, dir := range []string{runDir, filepath.Join(repo, ".lemmings", "checkpoints", runID)} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			must(t, err)
			fi, _ := d.Info()
			if d.IsDir() {
				if fi.Mode().Perm() != 0o700 {
					t.Errorf("%s: mode %v, want 0700", p, fi.Mode().Perm())
				}
				return nil
			}
			if fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: mode %v, readable by others", p, fi.Mode().Perm())
			}
			data, err := os.ReadFile(p)
			must(t, err)
			noSecret(t, p, string(data))
			return nil
		})
		must(t, err)
	}
	if fi, err := os.Stat(filepath.Join(repo, ".lemmings")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf(".lemmings: %v %v, want 0700", fi.Mode(), err)
	}

	// The conventions folder links outside: the supervisor's document was
	// refused by name, nothing landed there, and the run went on.
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("knowledge written outside the repository: %v", ents)
	}
	if !strings.Contains(string(events), "leads outside the repository") {
		t.Errorf("the refused knowledge write is not reported")
	}
	if report, _ := os.ReadFile(filepath.Join(runDir, "report.md")); strings.Contains(string(report), "conventions/doc-comments.md") {
		t.Errorf("the report names a document that was not written")
	}

	checkServePages(t, c, repo, runID)
}

// checkServePages reads every view of the run lemmings serve offers and
// checks they show no secret; it also sends the forms a hostile page might.
func checkServePages(t *testing.T, c *cli, repo, runID string) {
	t.Helper()
	base, client := serveClient(t, startServe(t, c, repo, "--addr", "127.0.0.1:0"))
	for _, path := range []string{"/", "/runs/" + runID, "/runs/" + runID + "/live", "/runs/" + runID + "/events?from=0", "/knowledge"} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v (a stream of a finished run must end)", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
		noSecret(t, "serve "+path, string(body))
		if path == "/runs/"+runID && !strings.Contains(string(body), "[REDACTED:") {
			t.Errorf("the run page shows no redaction mark: were the secrets ever on it?")
		}
	}
	// A multipart body is refused before it is read, form token or not; a
	// form body over the limit is refused too.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	part, _ := w.CreateFormFile("blob", "big.bin")
	_, _ = part.Write(bytes.Repeat([]byte("x"), 8<<20))
	w.Close()
	req, _ := http.NewRequest("POST", base+"/runs/"+runID+"/halt", &mp)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("multipart POST: %v %v, want 415", statusOf(resp), err)
	}
	big := url.Values{"reason": {strings.Repeat("r", 1<<20)}}.Encode()
	req, _ = http.NewRequest("POST", base+"/runs/"+runID+"/reject", strings.NewReader(big))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("1 MB form: %v %v, want 413", statusOf(resp), err)
	}
}

func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
