package serve

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/run"
)

func TestRunsAndRunPagesShowWhatTheRunDid(t *testing.T) {
	f := newFixture(t, withDone|withPaused)

	code, body := f.get("/")
	if code != 200 {
		t.Fatalf("runs page: %d", code)
	}
	mustContain(t, body, f.done, f.paused, "lemmings/"+f.done, `<span class="badge st-done">done</span>`, `<span class="badge st-paused">paused</span>`,
		"Make the test suite pass", "$0.1098")
	if !regexp.MustCompile(`(?s)data-run="` + f.done + `".*?<td class="num">4</td>`).MatchString(body) {
		t.Error("runs page: the demo run's 4 done tasks are not shown")
	}

	code, body = f.get("/runs/" + f.done)
	if code != 200 {
		t.Fatalf("run page: %d\n%s", code, body)
	}

	mustContain(t, body,
		// board: both milestones and every task with its commit
		`data-milestone="m1"`, `data-milestone="m2"`, `data-task="t1"`, `data-task="t4"`, "Fix MeanWordLength integer division",
		// the workflow graph, the end reached marked
		`<svg class="flow"`, `<g class="node current" data-node="__end__">`, `data-node="implementor"`,
		// events, gates with output, commits with diffs
		`id="events-body"`, "run_end", "task_planned", `<b>build</b> <code>go build ./...</code>`, `<b>test</b>`,
		`class="d-add">&#43;`, "Add a -top flag to the textstats command",
		// usage chart and table, directives, supervisors, report
		`<svg class="chart"`, "tokens per role", "cost (USD) per role", "implementor", "code_style",
		"Add a doc comment to MeanWordLength", "Bootstrap: established the doc-comment convention", "<h1>lemmings report")
	if strings.Contains(body, `id="approve"`) || strings.Contains(body, `id="halt"`) {
		t.Error("a finished run offers approve or halt")
	}
	// The gate output of a failed attempt is on the page (the demo's first test run fails).
	if !strings.Contains(body, "<pre>") {
		t.Error("no gate output shown")
	}

	code, body = f.get("/runs/" + f.paused)
	if code != 200 {
		t.Fatalf("paused run page: %d", code)
	}
	mustContain(t, body, `id="approve"`, "Approve the milestones", `name="reason"`, "Paused: ", `data-live="true"`,
		`<g class="node current" data-node="task_planner">`)

	// The live fragment is the changing part only.
	code, body = f.get("/runs/" + f.paused + "/live")
	if code != 200 || strings.Contains(body, "<html") || !strings.Contains(body, `id="approve"`) {
		t.Fatalf("live fragment: %d\n%s", code, body)
	}
}

func TestCommitPageShowsOnlyTheRunsCommits(t *testing.T) {
	f := newFixture(t, withDone)
	sha := f.git("rev-parse", "lemmings/"+f.done)
	code, body := f.get("/runs/" + f.done + "/commits/" + sha)
	if code != 200 || !strings.Contains(body, "diff --git") {
		t.Fatalf("commit page: %d\n%s", code, body)
	}
	// The sample's initial commit is the user's, not the run's... it is an
	// ancestor, so it shows; an object that is no commit of the branch does not.
	if code, _ := f.get("/runs/" + f.done + "/commits/0123456789abcdef0123456789abcdef01234567"); code != 404 {
		t.Errorf("unknown sha: %d, want 404", code)
	}
	if code, _ := f.get("/runs/" + f.done + "/commits/HEAD~1"); code != 404 {
		t.Errorf("revision expression: %d, want 404", code)
	}
	if code, _ := f.get("/runs/nope-not-a-run/commits/" + sha); code != 404 {
		t.Errorf("unknown run: %d, want 404", code)
	}
}

func TestUnknownRunIsNotFound(t *testing.T) {
	f := newFixture(t, withPaused)
	if code, body := f.get("/runs/20200101-000000-000000"); code != 404 || !strings.Contains(body, "No such run") {
		t.Fatalf("unknown run: %d %s", code, body)
	}
	if code, _ := f.get("/runs/..%2f..%2fetc"); code != 404 {
		t.Fatalf("path-like run id: %d", code)
	}
}

func TestEveryRequestNeedsTheTokenOnLoopbackToo(t *testing.T) {
	if _, err := New(Options{Root: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no access token") {
		t.Fatalf("a server without a token: %v", err)
	}
	srv, err := New(Options{Root: t.TempDir(), Token: "s3cret-token-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv) // on 127.0.0.1
	defer ts.Close()
	f := &fixture{t: t, srv: srv, http: ts}
	c := f.client()

	for name, h := range map[string]map[string]string{"no token": nil, "a wrong bearer": {"Authorization": "Bearer nope"},
		"a loopback Host": {"Host": "127.0.0.1"}, "localhost": {"Host": "localhost"}} {
		req, _ := http.NewRequest("GET", ts.URL+"/", nil)
		for k, v := range h {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, _ := c.Do(req)
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: %d, want 401 with a Bearer challenge", name, resp.StatusCode)
		}
	}
	resp, _ := c.Get(ts.URL + "/?token=wrong")
	if resp.StatusCode != 401 {
		t.Fatalf("wrong token: %d, want 401", resp.StatusCode)
	}
	resp, _ = c.Get(ts.URL + "/knowledge?token=s3cret-token-0123456789")
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/knowledge" {
		t.Fatalf("right token: %d to %q, want 303 to /knowledge", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == tokenCookie {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("token cookie: %+v", cookie)
	}
	// The cookie now lets the same client in, without the token in the URL.
	resp, _ = c.Get(ts.URL + "/")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "No runs yet") {
		t.Fatalf("with the cookie: %d, want 200 and no runs yet\n%s", resp.StatusCode, body)
	}
	// A forged cookie does not; a bearer does.
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.AddCookie(&http.Cookie{Name: tokenCookie, Value: "s3cret-token-012345678X"})
	resp, _ = http.DefaultClient.Do(req)
	if resp.StatusCode != 401 {
		t.Fatalf("forged cookie: %d", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", ts.URL+"/", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token-0123456789")
	resp, _ = http.DefaultClient.Do(req)
	if resp.StatusCode != 200 {
		t.Fatalf("bearer: %d", resp.StatusCode)
	}
	for addr, want := range map[string]bool{"127.0.0.1:7766": true, "localhost:1": true, "[::1]:80": true, "0.0.0.0:7766": false, ":7766": false, "10.0.0.2:7766": false} {
		if IsLoopback(addr) != want {
			t.Errorf("IsLoopback(%s) = %v", addr, !want)
		}
	}
}

// The attack of issue 33: a coding CLI (it has the network) fetched another
// run's page on loopback, read its form token and approved its pause.
// Without the server's token, a local process reads nothing and approves
// nothing: the page, the event stream and every action are 401.
func TestALocalProcessWithoutTheTokenCannotApproveAnotherRun(t *testing.T) {
	f := newFixture(t, withPaused)
	stranger := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/", "/runs/" + f.paused, "/runs/" + f.paused + "/live", "/runs/" + f.paused + "/events", "/knowledge"} {
		resp, err := stranger.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || strings.Contains(string(body), f.srv.csrf) {
			t.Errorf("GET %s without the token: %d, want 401 and no form token", path, resp.StatusCode)
		}
	}
	for _, action := range []string{"approve", "reject", "halt"} {
		// Even with the form token (as if it had leaked) and a same-origin look.
		req, _ := http.NewRequest("POST", f.http.URL+"/runs/"+f.paused+"/"+action, strings.NewReader(url.Values{"csrf": {f.srv.csrf}, "reason": {"x"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := stranger.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("POST %s without the token: %d, want 401", action, resp.StatusCode)
		}
	}
	time.Sleep(100 * time.Millisecond)
	store, _ := inspect.Open(f.repo)
	if r := store.Get(context.Background(), f.paused); r.Status != "paused" {
		t.Errorf("the run is %s, want still paused", r.Status)
	}
	if inspect.HaltRequested(f.repo, f.paused) {
		t.Error("a halt was requested")
	}
}

func TestStateChangingRequestsNeedTheFormTokenAndSameOrigin(t *testing.T) {
	f := newFixture(t, withPaused)
	path := "/runs/" + f.paused + "/halt"
	cases := []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"no form token", url.Values{"csrf": {""}}, nil},
		{"wrong form token", url.Values{"csrf": {"forged"}}, nil},
		{"cross-site fetch", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"foreign origin", nil, map[string]string{"Origin": "https://evil.example"}},
	}
	for _, c := range cases {
		form := url.Values{"csrf": {f.srv.csrf}}
		for k, v := range c.form {
			form[k] = v
		}
		req, _ := http.NewRequest("POST", f.http.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := f.client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("%s: %d, want 403", c.name, resp.StatusCode)
		}
	}
	if inspect.HaltRequested(f.repo, f.paused) {
		t.Fatal("a refused request wrote a halt request")
	}
	// GET never changes anything: the action routes are POST only.
	if code, _ := f.get(path); code != 405 {
		t.Errorf("GET %s: %d, want 405", path, code)
	}
	// Same-origin with the token: accepted (and refused for its own reason:
	// the paused run is not running).
	req, _ := http.NewRequest("POST", f.http.URL+path, strings.NewReader(url.Values{"csrf": {f.srv.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", f.http.URL)
	resp, _ := f.client().Do(req)
	resp.Body.Close()
	if resp.StatusCode != 409 {
		t.Errorf("same-origin halt of a paused run: %d, want 409 (not running)", resp.StatusCode)
	}
}

func TestTornEventLogAndDamagedRunsDoNotStopTheServer(t *testing.T) {
	f := newFixture(t, withPaused)
	// A line being written: the page and the stream stop before it.
	events := inspect.EventsPath(f.repo, f.paused)
	before, _ := os.ReadFile(events)
	fh, _ := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"kind":"custom","name":"half_writ`)
	fh.Close()
	code, body := f.get("/runs/" + f.paused)
	if code != 200 || !strings.Contains(body, `data-from="`+itoa(len(before))+`"`) || strings.Contains(body, "half_writ") {
		t.Fatalf("run page with a torn last line: %d, from offset wrong or partial line shown", code)
	}
	// A damaged run: its checkpoints are garbage, its page says so, the rest is served.
	bad := "20260101-000000-bad000"
	dir := filepath.Join(f.repo, run.DataDir, run.CheckpointsDir, bad)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "0000000000000000.seg"), []byte("garbage, not a checkpoint segment"), 0o644)
	code, body = f.get("/")
	if code != 200 || !strings.Contains(body, bad) || !strings.Contains(body, "st-damaged") || !strings.Contains(body, f.paused) {
		t.Fatalf("runs page with a damaged run: %d\n%s", code, body)
	}
	code, body = f.get("/runs/" + bad)
	if code != 200 || !strings.Contains(body, `id="run-error"`) {
		t.Fatalf("damaged run page: %d\n%s", code, body)
	}
	if code, _ := f.get("/runs/" + f.paused); code != 200 {
		t.Fatalf("healthy run after a damaged one: %d", code)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// holdRun makes the run active, as a process advancing it does: it holds
// the run's checkpoint lock until the test ends.
func holdRun(t *testing.T, repo, id string) {
	t.Helper()
	cp, err := graph.NewFileCheckpointer(filepath.Join(repo, run.DataDir, run.CheckpointsDir))
	if err != nil {
		t.Fatal(err)
	}
	w, err := cp.Open(context.Background(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
}

func TestEventStreamSendsCompleteLinesFromTheOffset(t *testing.T) {
	f := newFixture(t, withPaused)
	holdRun(t, f.repo, f.paused)
	events := inspect.EventsPath(f.repo, f.paused)
	before, _ := os.ReadFile(events)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/runs/"+f.paused+"/events?from="+itoa(len(before)), nil)
	resp, err := f.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// Written in two pieces, as a run's write might be seen half done.
	fh, _ := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"kind":"custom","step":9,"node":"qa","name":"gate","data":{"gate":"te`)
	time.Sleep(150 * time.Millisecond)
	fh.WriteString(`st","passed":true}}` + "\n")
	fh.Close()
	var got []string
	for l := range lines {
		if strings.HasPrefix(l, "data: ") {
			got = append(got, l)
			break
		}
		if strings.HasPrefix(l, "id: ") && l != "id: "+itoa(len(before)+len(`{"kind":"custom","step":9,"node":"qa","name":"gate","data":{"gate":"test","passed":true}}`)+1) {
			t.Errorf("event id %q is not the offset after the line", l)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], `"kind":"gate"`) || !strings.Contains(got[0], `gate=\"test\"`) {
		t.Fatalf("stream sent %q", got)
	}
}

// A stream ends where its run can write no more: a missing run is a 404, a
// stopped run is streamed to the end of its log and then closed with an
// "end" event, and a reconnection at the end gets 204, which tells the
// browser to stop trying.
func TestEventStreamsOfMissingAndStoppedRunsEnd(t *testing.T) {
	f := newFixture(t, withPaused)
	client := f.client()
	client.Timeout = 10 * time.Second
	get := func(path string) (*http.Response, string) {
		resp, err := client.Get(f.http.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v (a stream that never ends?)", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	if resp, _ := get("/runs/20990101-000000-abcdef/events"); resp.StatusCode != 404 {
		t.Errorf("stream of a missing run: %d, want 404", resp.StatusCode)
	}
	resp, body := get("/runs/" + f.paused + "/events?from=0")
	if resp.StatusCode != 200 || !strings.Contains(body, "data: ") || !strings.HasSuffix(body, "event: end\ndata: {}\n\n") {
		t.Errorf("stream of a paused run from its start: %d %q", resp.StatusCode, body)
	}
	size, _ := os.Stat(inspect.EventsPath(f.repo, f.paused))
	if resp, _ := get("/runs/" + f.paused + "/events?from=" + itoa(int(size.Size()))); resp.StatusCode != 204 {
		t.Errorf("reconnection at the end of a paused run's log: %d, want 204", resp.StatusCode)
	}
}

func TestApproveContinuesThePausedRun(t *testing.T) {
	f := newFixture(t, withPaused)
	resp, body := f.post("/runs/"+f.paused+"/reject", nil)
	if resp.StatusCode != 400 || !strings.Contains(body, "needs a reason") {
		t.Fatalf("reject without a reason: %d", resp.StatusCode)
	}
	resp, _ = f.post("/runs/"+f.paused+"/approve", nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/runs/"+f.paused {
		t.Fatalf("approve: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// A second approval while the first runs is refused, not run twice.
	if resp, _ := f.post("/runs/"+f.paused+"/approve", nil); resp.StatusCode != 409 {
		t.Errorf("second approve: %d, want 409", resp.StatusCode)
	}
	store, _ := inspect.Open(f.repo)
	waitFor(t, "the approved run to finish", 60*time.Second, func() bool {
		return store.Get(context.Background(), f.paused).Status == "done"
	})
	_, body = f.get("/runs/" + f.paused)
	mustContain(t, body, "Resumed from this page (approved milestones)", `<span class="badge st-done">done</span>`, "<h1>lemmings report")
	if n := strings.Count(f.git("log", "--format=%s", "main..lemmings/"+f.paused), "\n") + 1; n < 3 {
		t.Errorf("approved run made %d commits, want one per task", n)
	}
}

func TestHaltWritesTheRequestARunningRunPicksUp(t *testing.T) {
	// Slow models, so the run is still working when the halt arrives.
	f := newFixture(t, withPaused|slowModels)
	resp, _ := f.post("/runs/"+f.paused+"/approve", nil)
	if resp.StatusCode != 303 {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	store, _ := inspect.Open(f.repo)
	waitFor(t, "the run to work on a task", 30*time.Second, func() bool {
		return store.Active(context.Background(), f.paused) && store.Get(context.Background(), f.paused).State.CurrentTask != nil
	})
	resp, body := f.post("/runs/"+f.paused+"/halt", nil)
	if resp.StatusCode != 303 {
		t.Fatalf("halt: %d %s", resp.StatusCode, body)
	}
	waitFor(t, "the run to halt", 60*time.Second, func() bool {
		return store.Get(context.Background(), f.paused).Status == "halted"
	})
}

func TestConfirmingAFinishedRunsDocCommitsOnItsBranchOnly(t *testing.T) {
	f := newFixture(t, withDone)
	code, body := f.get("/knowledge")
	if code != 200 {
		t.Fatalf("knowledge page: %d", code)
	}
	mustContain(t, body, "Review queue", `data-doc="conventions/doc-comments.md"`, `data-doc="lessons/integer-division-truncates-averages.md"`,
		"provisional", "Changelog", "code_style")
	userHead, userStatus := f.git("rev-parse", "HEAD"), f.git("status", "--porcelain")
	resp, _ := f.post("/knowledge/review", url.Values{"run": {f.done}, "path": {"conventions/doc-comments.md"}, "decision": {"confirm"}})
	if resp.StatusCode != 303 || !strings.Contains(resp.Header.Get("Location"), "committed") {
		t.Fatalf("confirm: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = f.post("/knowledge/review", url.Values{"run": {f.done}, "path": {"design/architecture.md"}, "decision": {"reject"}, "reason": {"not how we split packages"}})
	if resp.StatusCode != 303 {
		t.Fatalf("reject: %d", resp.StatusCode)
	}
	branch := "lemmings/" + f.done
	log := f.git("log", "-2", "--format=%s", branch)
	if !strings.Contains(log, "knowledge: user confirmed conventions/doc-comments.md") || !strings.Contains(log, "knowledge: user rejected design/architecture.md") {
		t.Fatalf("branch log:\n%s", log)
	}
	doc := f.git("show", branch+":docs/knowledge/conventions/doc-comments.md")
	if !strings.Contains(doc, "_Status: established_") || !strings.Contains(doc, "user") {
		t.Fatalf("confirmed doc on the branch:\n%s", doc)
	}
	if doc := f.git("show", branch+":docs/knowledge/design/architecture.md"); !strings.Contains(doc, "_Status: deprecated_") || !strings.Contains(doc, "not how we split packages") {
		t.Fatalf("rejected doc on the branch:\n%s", doc)
	}
	if f.git("rev-parse", "HEAD") != userHead || f.git("status", "--porcelain") != userStatus {
		t.Fatal("the user's checkout changed")
	}
	if fileExists(filepath.Join(f.repo, "docs", "knowledge")) {
		t.Fatal("knowledge written into the user's checkout")
	}
	_, body = f.get("/knowledge?source=" + f.done)
	if strings.Contains(body, `class="review" data-doc="conventions/doc-comments.md"`) {
		t.Error("a confirmed doc is still in the review queue")
	}
	// A doc that does not exist is refused with a reason.
	resp, body = f.post("/knowledge/review", url.Values{"run": {f.done}, "path": {"conventions/nope.md"}, "decision": {"confirm"}})
	if resp.StatusCode != 409 || !strings.Contains(body, "no knowledge document") {
		t.Fatalf("unknown doc: %d", resp.StatusCode)
	}
}

func TestADecisionOnAWorkingRunIsCommittedByTheRunAtItsNextTask(t *testing.T) {
	f := newFixture(t, 0)
	// A provisional doc of the user's, in the store the run starts from.
	store, _, err := knowledge.Open(filepath.Join(f.repo, "docs", "knowledge"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Write(knowledge.User, &knowledge.Doc{Path: "conventions/naming.md", Title: "Naming", Status: knowledge.Provisional, Rules: "1. Short names."}, "", ""); err != nil {
		t.Fatal(err)
	}
	f.git("add", "-A")
	f.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "knowledge: naming")
	id := f.startPaused("tasks") // paused before its first task: a task is in progress
	resp, _ := f.post("/knowledge/review", url.Values{"run": {id}, "path": {"conventions/naming.md"}, "decision": {"confirm"}})
	if resp.StatusCode != 303 || !strings.Contains(resp.Header.Get("Location"), "next+task") {
		t.Fatalf("confirm: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if reqs, _ := nodes.PendingReviews(inspect.RunDir(f.repo, id)); len(reqs) != 1 {
		t.Fatalf("pending requests: %d, want 1", len(reqs))
	}
	_, body := f.get("/knowledge?source=" + id)
	mustContain(t, body, "You chose to confirm it")
	// Approve the task: after it, the run's planner commits the decision.
	if resp, _ := f.post("/runs/"+id+"/approve", nil); resp.StatusCode != 303 {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	st, _ := inspect.Open(f.repo)
	waitFor(t, "the run to pause at its next task", 60*time.Second, func() bool {
		r := st.Get(context.Background(), id)
		return r.Status == "paused" && r.State.TasksCompleted == 1 && f.srv.resumeStatus(id) != nil && !f.srv.resumeStatus(id).Running
	})
	if reqs, _ := nodes.PendingReviews(inspect.RunDir(f.repo, id)); len(reqs) != 0 {
		t.Fatalf("requests left after the task boundary: %d", len(reqs))
	}
	if doc := f.git("show", "lemmings/"+id+":docs/knowledge/conventions/naming.md"); !strings.Contains(doc, "_Status: established_") {
		t.Fatalf("doc on the branch:\n%s", doc)
	}
	if !strings.Contains(f.git("log", "--format=%s", "lemmings/"+id), "knowledge: user confirmed conventions/naming.md") {
		t.Fatal("no review commit on the branch")
	}
	if got, _ := os.ReadFile(inspect.EventsPath(f.repo, id)); !strings.Contains(string(got), `"name":"knowledge_reviewed"`) {
		t.Fatal("no knowledge_reviewed event")
	}
}

func TestAssetsAndKnowledgeSourcesAreServed(t *testing.T) {
	f := newFixture(t, withPaused)
	resp, err := f.client().Get(f.http.URL + "/assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "javascript") {
		t.Fatalf("app.js: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("no script policy: %q", resp.Header.Get("Content-Security-Policy"))
	}
	if code, _ := f.get("/assets/app.css"); code != 200 {
		t.Errorf("app.css: %d", code)
	}
	// The checkout's store, read only: a lint problem of a hand-written doc shows.
	dir := filepath.Join(f.repo, "docs", "knowledge", "conventions")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "errors.md"), []byte("# Errors\n\n_Status: maybe_\n\n## Rules\n\n1. Wrap errors.\n"), 0o644)
	code, body := f.get("/knowledge?source=checkout")
	if code != 200 {
		t.Fatalf("checkout knowledge: %d", code)
	}
	mustContain(t, body, `data-doc="conventions/errors.md"`, "Errors", `class="warn">line`)
	if strings.Contains(body, `class="review" data-doc="conventions/errors.md"`) {
		t.Error("a doc of the user's checkout is offered for review (only runs' stores are)")
	}
	if code, body := f.get("/knowledge?source=20200101-000000-000000"); code != 200 || !strings.Contains(body, "no knowledge source") {
		t.Errorf("unknown source: %d", code)
	}
}

func TestAFlaggedItemStaysInTheQueueUntilTheUserConfirmsIt(t *testing.T) {
	f := newFixture(t, withDone)
	store, _, _ := knowledge.Open(filepath.Join(f.srv.worktreeOf(f.done), "docs", "knowledge"))
	doc := &knowledge.Doc{Path: "domain/words.md", Title: "What a word is", Rules: "1. A word is a run of letters.",
		Rationale: "Captured from task t2 (confidence: medium). " + nodes.NeedsReviewMark + ": an implicit decision worth confirming."}
	if err := store.Write(knowledge.Internaliser, doc, "t2", "m2"); err != nil {
		t.Fatal(err)
	}
	// Promoted after clean uses: established, yet still flagged for the user.
	if _, err := store.Promote("domain/words.md", "t4", "m2", 3); err != nil {
		t.Fatal(err)
	}
	// Uncommitted work in the worktree is never swept into a decision's commit.
	wtDir := f.srv.worktreeOf(f.done)
	if resp, body := f.post("/knowledge/review", url.Values{"run": {f.done}, "path": {"domain/words.md"}, "decision": {"confirm"}}); resp.StatusCode != 409 || !strings.Contains(body, "uncommitted changes") {
		t.Fatalf("confirm with a dirty worktree: %d", resp.StatusCode)
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "knowledge: words"}} {
		if out, err := exec.Command("git", append([]string{"-C", wtDir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	_, body := f.get("/knowledge")
	if !regexp.MustCompile(`(?s)class="review" data-doc="domain/words.md".*?needs your review`).MatchString(body) {
		t.Fatal("the flagged, established item is not in the review queue")
	}
	resp, _ := f.post("/knowledge/review", url.Values{"run": {f.done}, "path": {"domain/words.md"}, "decision": {"confirm"}})
	if resp.StatusCode != 303 {
		t.Fatalf("confirm: %d", resp.StatusCode)
	}
	_, body = f.get("/knowledge")
	if strings.Contains(body, `class="review" data-doc="domain/words.md"`) {
		t.Fatal("a confirmed flagged item is still in the queue")
	}
	if got := f.git("show", "lemmings/"+f.done+":docs/knowledge/domain/words.md"); strings.Contains(got, nodes.NeedsReviewMark) {
		t.Fatalf("flag still on the branch:\n%s", got)
	}
}

func TestAResumeThatFailsSaysWhyOnTheRunPage(t *testing.T) {
	f := newFixture(t, withPaused|deadModels)
	if resp, _ := f.post("/runs/"+f.paused+"/approve", nil); resp.StatusCode != 303 {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	waitFor(t, "the resume to end", 60*time.Second, func() bool {
		rs := f.srv.resumeStatus(f.paused)
		return rs != nil && !rs.Running
	})
	_, body := f.get("/runs/" + f.paused)
	mustContain(t, body, `id="resume-status"`, `class="error"`, "it did not start", "connection refused")
	// Still paused and still answerable: the failed attempt changed nothing.
	mustContain(t, body, `id="approve"`, `<span class="badge st-paused">paused</span>`)
}
