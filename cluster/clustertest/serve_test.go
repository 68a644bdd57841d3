package clustertest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/cluster"
	"github.com/lemmings-dev/lemmings/cluster/gitremote"
	"github.com/lemmings-dev/lemmings/cluster/pgstore"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/serve"
)

// lemmings serve on a machine that runs nothing, against the store a worker
// writes: the runs page, a run's page (board, events, commits from the
// shared remote, report), the live event stream woken by NOTIFY, and the
// approve and halt buttons, which reach the worker through the store.
func TestServeOnTheStore(t *testing.T) {
	e := newEnv(t)
	srv := demo.NewServer(&demo.Script{LocalLatency: 20 * time.Millisecond, ImplementorLatency: 400 * time.Millisecond})
	defer srv.Close()
	a := e.newBox("box-a", srv.URL())
	id := e.submitWith(pgstore.Submission{Approve: "milestones"})
	if out := a.lemmings(e.origin, "runs"); !strings.Contains(out, id) || !strings.Contains(out, "queued") {
		t.Errorf("lemmings runs before any worker started: %q", out)
	}
	a.startWorker()
	e.waitFor(60*time.Second, "the run to pause for the milestones", func() bool {
		snap, err := e.state(id)
		return err == nil && snap.Status == graph.StatusPaused
	})

	ctx := context.Background()
	db := e.openDB()
	view := cluster.NewView(ctx, db, e.origin, e.remote)
	t.Cleanup(view.Close)
	// Streams poll once a minute: only a notification wakes them in time.
	s, err := serve.New(serve.Options{Root: e.origin, Source: view, Poll: time.Minute, Token: serveToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close) // after the streams' own cleanups: they end first

	if page := get(t, ts.URL+"/"); !strings.Contains(page, id) || !strings.Contains(page, "paused") {
		t.Fatalf("the runs page lacks the paused run %s:\n%s", id, clip(page))
	}
	page := get(t, ts.URL+"/runs/"+id)
	for _, want := range []string{"Approve the milestones", "The test suite passes"} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	from := regexp.MustCompile(`data-from="(\d+)"`).FindStringSubmatch(page)
	if csrf == nil || from == nil {
		t.Fatalf("no form token or event cursor in the run page:\n%s", clip(page))
	}

	// As the browser does: the approval's redirect renders the page again,
	// whose stream opens while the decision waits for a worker (a paused
	// run with nothing queued ends its stream at once).
	post(t, ts.URL+"/runs/"+id+"/approve", csrf[1])
	approved := time.Now()
	events := stream(t, ts.URL+"/runs/"+id+"/events?from="+from[1])
	select {
	case line := <-events:
		t.Logf("the stream got the worker's first event %v after the approval: %s", time.Since(approved).Round(time.Millisecond), clip(line))
	case <-time.After(15 * time.Second):
		t.Fatal("no event streamed within 15s of the approval (the stream polls once a minute: NOTIFY did not wake it)")
	}

	e.waitFor(60*time.Second, "the first task to be done", func() bool {
		snap, err := e.state(id)
		return err == nil && snap.State.TasksCompleted >= 1 && snap.Status == graph.StatusRunning
	})
	post(t, ts.URL+"/runs/"+id+"/halt", csrf[1])
	if halt, _ := db.HaltRequested(ctx, id); !halt {
		t.Fatal("halt from the page left no halt request in the store")
	}
	e.waitFor(60*time.Second, "the worker to halt the run", func() bool {
		snap, err := e.state(id)
		return err == nil && snap.Status == graph.StatusHalted
	})
	if err := cluster.Enqueue(ctx, db, id, nil); err != nil { // resume --submit
		t.Fatal(err)
	}
	e.waitDone(id, 3*time.Minute)

	page = get(t, ts.URL+"/runs/"+id)
	for _, want := range []string{"Fix MeanWordLength integer division", "implementor", "Add a -top flag"} {
		if !strings.Contains(page, want) {
			t.Errorf("the finished run's page lacks %q", want)
		}
	}
	if strings.Contains(page, "no report yet") || strings.Contains(page, "no event log") {
		t.Errorf("the finished run's page shows no report or no events:\n%s", clip(page))
	}
	if out := a.lemmings(e.origin, "runs"); !strings.Contains(out, id) || !strings.Contains(out, "done") {
		t.Errorf("lemmings runs after the run: %q", out)
	}
	final, _ := e.state(id)
	head := final.Metadata[run.MetaGitHead]
	if c := get(t, ts.URL+"/runs/"+id+"/commits/"+head); !strings.Contains(c, head[:7]) {
		t.Errorf("the commit page of %s from the shared remote:\n%s", head, clip(c))
	}
}

// submitWith submits the demo remit with the fields of s set.
func (e *env) submitWith(s pgstore.Submission) string {
	e.t.Helper()
	ctx := context.Background()
	s.RunID = run.NewRunID()
	s.Base = gitRun(e.t, e.origin, "rev-parse", "HEAD")
	s.Remit, s.Queue = demo.Remit, cluster.QueueFor(demo.PrimaryModel)
	if err := (gitremote.Remote{URL: e.remote}).PushBase(ctx, e.origin, s.RunID, s.Base); err != nil {
		e.t.Fatal(err)
	}
	if err := cluster.Submit(ctx, e.openDB(), s); err != nil {
		e.t.Fatal(err)
	}
	return s.RunID
}

func get(t *testing.T, u string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+serveToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", u, resp.Status, clip(string(body)))
	}
	return string(body)
}

func post(t *testing.T, u, csrf string) {
	t.Helper()
	c := &http.Client{Transport: bearer{}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(u, url.Values{"csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s\n%s", u, resp.Status, clip(string(body)))
	}
}

// stream opens a server-sent event stream and delivers its data lines.
func stream(t *testing.T, u string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+serveToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET %s: %s (a run with work queued for it must keep its stream open)", u, resp.Status)
	}
	out := make(chan string, 1000)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: ") {
				out <- line
			}
		}
	}()
	return out
}

func clip(s string) string { return s[:min(len(s), 3000)] }

// serveToken is the test server's access token; bearer sends it.
const serveToken = "cluster-serve-token-0123456789"

type bearer struct{}

func (bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+serveToken)
	return http.DefaultTransport.RoundTrip(r)
}
